"""The chat OpenCompass's ``ChatInferencer`` builds from a record
(``ChatInferencer.get_chat_list``), as OpenAI-style turns.

Only the record's ``input_columns`` and ``output_column`` are read (the rest of
the record is invisible, so their placeholders stay as written), and they make a
chat in one of four ways, tried in this order:

1. every value is text: the prompt template filled with them — no in-context
   examples (the ice token reads ``""``), the output column *not* masked —
   becomes messages (``SYSTEM`` -> ``system``, ``HUMAN`` and plain strings ->
   ``user``, ``BOT`` -> ``assistant``), followed by the output column as the
   assistant's answer unless the template already ends with a ``BOT`` item.
   Without a prompt template, a single input column is the user's message and
   the output column the answer;
2. every value is a list of text: the same, once per list position (a chat of
   several rounds: SciCode's steps, AISBench-style question lists);
3. a single input column holding a chat (a list of ``{role, content}``), used as
   it is (HealthBench's ``prompt_trans``, T-Eval's ``prompt``);
4. a ``dialogue`` input column holding a chat (MT-Bench, WildBench).

Each assistant turn is a model reply: :mod:`prompt_style.conversation` cuts the
chat into one request per reply (``infer_mode`` ``last``: only the last). The
turns carry the section ``chat``; the meta template shows them as
ChatInferencer's own template parsers do (:mod:`prompt_style.meta.opencompass_chat`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import StyleError, cut
from ...meta.opencompass_chat import CHAT
from ...types import Dialogue, Turn
from .template import RAW, PromptTemplate

__all__ = ["CHAT", "ChatBuilder", "CHAT_INFER_MODES"]

CHAT_INFER_MODES = ("last", "every", "every_with_gt")
"""``ChatInferencer``'s ``infer_mode`` values (default ``last``)."""

_ROLES = {"SYSTEM": "system", "HUMAN": "user", "BOT": "assistant", RAW: "user"}


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_chat(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


class ChatBuilder:
    """Builds a record's chat: ``(turns, golds)``, the golds being the assistant turns'
    contents in order (each request's target)."""

    def __init__(
        self,
        template: PromptTemplate | None,
        input_columns: Sequence[str] | None,
        output_column: str | None,
    ) -> None:
        if not input_columns:
            raise StyleError(
                "OpenCompass's ChatInferencer builds its chat from reader_cfg.input_columns, and there are none",
                key="input_columns",
                hint="add reader_cfg: {input_columns: [...]}",
            )
        self.template = template
        self.input_columns = tuple(input_columns)
        self.output_column = output_column
        self._columns = set(self.input_columns) | ({output_column} if output_column else set())

    def build(self, record: Mapping[str, Any]) -> tuple[Dialogue, list[Any]]:
        """The chat of one record and its gold answers.

        :raises StyleError: naming what is wrong with the record.
        """
        item = {key: value for key, value in record.items() if key in self._columns}
        output = self.output_column
        if output is not None and item.get(output, "") is None:
            del item[output]  # a null answer (an inference set): no gold, as when the column is absent
        values = list(item.values())
        if all(isinstance(v, str) for v in values):
            messages = self._from_entry(item)
        elif all(_is_text_list(v) for v in values):
            lengths = {len(v) for v in values}
            if len(lengths) > 1:
                shown = ", ".join(f"{k} ({len(v)})" for k, v in item.items())
                raise StyleError(
                    f"the list columns of a multi-round chat have different lengths: {shown}",
                    hint="give every input and output column one item per round "
                    "(OpenCompass's zip would drop the extra rounds)",
                )
            messages = []
            for values_at in zip(*values):
                messages.extend(self._from_entry(dict(zip(item, values_at))))
        elif len(self.input_columns) == 1 and _is_chat(item.get(self.input_columns[0])):
            messages = self._messages(item[self.input_columns[0]], self.input_columns[0])
        elif "dialogue" in self.input_columns:
            if "dialogue" not in item:
                raise StyleError("the record has no 'dialogue', the chat OpenCompass's ChatInferencer sends")
            messages = self._messages(item["dialogue"], "dialogue")
        else:
            kinds = ", ".join(f"{k}: {type(v).__name__}" for k, v in item.items())
            raise StyleError(
                f"OpenCompass's ChatInferencer cannot make a chat of this record ({kinds or 'no input column'})",
                hint="its input and output columns must all be text, or all lists of text, or one input "
                "column (or a 'dialogue' column) must hold the chat as a list of {role, content}",
            )
        turns = tuple(Turn(role, content, "\n" if i else "", None, CHAT) for i, (role, content) in enumerate(messages))
        golds = [content for role, content in messages if role == "assistant"]
        if not golds:
            raise StyleError(
                "the chat has no assistant turn, so there is no reply to ask the model for",
                hint="a chat in the record needs an {role: assistant} message where the model answers "
                "(OpenCompass's ChatInferencer fails or sends nothing)",
            )
        return turns, golds

    def _from_entry(self, entry: Mapping[str, Any]) -> list[tuple[str, str]]:
        """ChatInferencer's ``chat_from_entry``: the messages of one round of text values."""
        output = self.output_column
        template = self.template
        if template is None:
            if len(self.input_columns) != 1:
                raise StyleError(
                    "OpenCompass's ChatInferencer needs a prompt_template to make a chat of several "
                    f"input columns ({', '.join(self.input_columns)})",
                    key="prompt_template",
                    hint="add a prompt_template (the ice_template is not used by ChatInferencer)",
                )
            user = entry.get(self.input_columns[0])
            answer = entry.get(output, "") if output is not None else ""
            return [("user", user if user is not None else ""), ("assistant", answer)]
        messages = []
        for turn in template.fill(entry, "", None, None):
            role = _ROLES.get(turn.role)
            if role is None and turn.fallback_role is not None:
                role = _ROLES.get(turn.fallback_role)
            if role is None:
                raise StyleError(
                    f"the template has a {turn.role!r} item, which OpenCompass's ChatInferencer cannot place "
                    "in a chat (it silently drops it)",
                    key="prompt_template.template",
                    hint="use the roles SYSTEM, HUMAN and BOT (or give the item fallback_role: HUMAN)",
                )
            messages.append((role, turn.content))
        if not messages or messages[-1][0] != "assistant":
            answer = entry.get(output, "") if output is not None else ""
            messages.append(("assistant", answer))
        return messages

    @staticmethod
    def _messages(chat: Any, column: str) -> list[tuple[str, str]]:
        """A chat the record holds (a list of ``{role, content}``), checked."""
        if not _is_chat(chat):
            raise StyleError(
                f"the record's {column!r} must be a chat (a list of {{role, content}}), not {cut(chat)}",
            )
        messages = []
        for i, message in enumerate(chat):
            role = message.get("role")
            if not isinstance(role, str) or not role:
                raise StyleError(f"message {i} of the record's {column!r} has no role: {cut(dict(message))}")
            content = message.get("content")
            if content is None:
                content = ""  # as OpenCompass's template parsers read it
            if not isinstance(content, str):
                raise StyleError(
                    f"message {i} of the record's {column!r} has a {type(content).__name__} content, not text: "
                    f"{cut(content)}"
                )
            messages.append((role, content))
        return messages
