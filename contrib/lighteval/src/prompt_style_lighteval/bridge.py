"""prompt-style tasks as lighteval ``LightevalTaskConfig``s.

:func:`task_config` loads a task with ``prompt-style render``'s options,
renders every record of its evaluated split once (the same renderer, so the
same bytes), and returns a ``LightevalTaskConfig`` whose prompt function hands
lighteval each record's ``Doc`` (:mod:`.mapping` says how). lighteval reads a
dataset of record indices (``hf_repo``, made by :func:`~.mapping.rows_dataset`):
the records themselves are read by prompt-style, as ``prompt-style render``
reads them.

Run a task as ``NAME|0``: prompt-style chooses the few-shot examples (the
task's ``num_fewshot`` and retriever, ``shots=``), per record; lighteval's own
few-shot count is refused, since its examples would not be prompt-style's.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

from prompt_style import OptionError, PromptStyleError, RenderedPrompt, Task, load_task

from .mapping import ROW_KEY, DocParts, RenderedTask, doc_parts, render_parts, rows_dataset
from .spec import TaskSpec, bridge_options

__all__ = ["RenderedDoc", "PromptFunction", "task_config", "task_configs", "task_configs_from", "default_metrics"]

logger = logging.getLogger("prompt_style_lighteval")


class RenderedDoc(Doc):
    """A ``Doc`` whose few-shot samples are the rendered conversation's turns.

    lighteval assigns every doc's ``fewshot_samples`` from its own sampler after
    the prompt function ran (with ``NAME|0``: none). A rendered chat prompt's
    examples are already chosen, per record, by prompt-style's retriever, so
    this doc keeps the ones it was made with and ignores later assignments.
    """

    __slots__ = ("_turns",)

    @property  # type: ignore[override]
    def fewshot_samples(self) -> list[Doc]:
        return self._turns

    @fewshot_samples.setter
    def fewshot_samples(self, value: list[Doc]) -> None:
        try:
            self._turns  # noqa: B018 - set once, at construction
        except AttributeError:
            self._turns = list(value)


def make_doc(parts: DocParts, task_name: str, shots: dict[tuple[str, str], Doc] | None = None) -> Doc:
    """The ``Doc`` lighteval gets for a record. ``shots`` keeps the few-shot samples
    already made: an example shown to many records is one ``Doc`` they share
    (lighteval only reads a few-shot sample's query and gold)."""
    gold = list(parts.gold) if type(parts.gold) is tuple else parts.gold
    if not parts.shots:
        return Doc(query=parts.query, choices=list(parts.choices), gold_index=gold, task_name=task_name)
    made = {} if shots is None else shots
    samples = []
    for pair in parts.shots:
        sample = made.get(pair)
        if sample is None:
            sample = made[pair] = Doc(query=pair[0], choices=[pair[1]], gold_index=0)
        samples.append(sample)
    return RenderedDoc(
        query=parts.query, choices=list(parts.choices), gold_index=gold, task_name=task_name, fewshot_samples=samples
    )


class PromptFunction:
    """lighteval's ``prompt_function(line, task_name) -> Doc`` for a rendered task.

    Every record is rendered once (:class:`~.mapping.RenderedTask`) and its doc
    made in the same pass; ``line`` carries the record's index, and the first
    request for a record gets that doc (lighteval fills in its id and generation
    settings), a later one a new doc. Deep copies (lighteval copies task
    configs) share it, and it pickles as the task file and options that render
    it again.
    """

    def __init__(self, name: str, task: Task, source: tuple[str, Mapping[str, Any]] | None) -> None:
        self.name = name
        self.source = source
        self.shots: dict[tuple[str, str], Doc] = {}
        # One choices list per distinct set of continuations, shared by the docs
        # (lighteval reads a doc's choices, never changes them): no list per record.
        self._choices: dict[tuple[str, ...], list[str]] = {}
        self._build = self._builder()
        self.rendered = render_parts(task, self._build)
        self._docs: list[Doc | None] = self.rendered.built or []
        self.__name__ = f"prompt_style:{name}"  # lighteval prints a prompt function by name

    def _builder(self) -> Any:
        """``build(prompt, parts) -> Doc`` for :func:`~.mapping.render_parts`, called for
        every record: a closure over what it reads (cheaper than a method, per record)."""
        name, shots, known = self.name, self.shots, self._choices
        last: list[Any] = [(), []]  # the last continuations and their choices list

        def build(prompt: RenderedPrompt, parts: DocParts | None) -> Doc:
            if parts is not None:
                return make_doc(parts, name, shots)
            continuations = prompt.continuations
            target = prompt.target
            if continuations and type(target) is int:  # the usual case, made at once
                if continuations is last[0]:  # records usually share one tuple of continuations
                    choices = last[1]
                else:
                    choices = known.get(continuations)
                    if choices is None:
                        choices = known[continuations] = list(continuations)
                    last[0], last[1] = continuations, choices
                return Doc(prompt.text, choices, target, task_name=name)  # query, choices, gold_index
            return make_doc(doc_parts(prompt), name, shots)

        return build

    def __call__(self, line: Mapping[str, Any], task_name: str) -> Doc:
        return self.doc(line, task_name)

    def doc(self, line: Mapping[str, Any], task_name: str) -> Doc:
        """Record ``line[ROW_KEY]``'s doc. ``LightevalTaskConfig.prompt_function`` is
        this bound method: calling it costs less than calling the object."""
        if line.get("__few_shots"):
            raise self._refuse()
        index = line[ROW_KEY]
        doc = self._docs[index]
        if doc is None:  # asked again: a doc of its own
            text = self.rendered.text
            doc = self._build(text[index], None) if text is not None else self._build(None, self.rendered.chat[index])  # type: ignore[arg-type,index]
        else:
            self._docs[index] = None
        if task_name != self.name:
            doc.task_name = task_name
        return doc

    def _refuse(self) -> BaseException:
        return fail(
            OptionError(
                f"lighteval asked task {self.name!r} for its own few-shot examples: prompt-style "
                "chooses them (the task's num_fewshot and retriever)",
                key="few-shot",
                hint=f"run it as '{self.name}|0' and set the shots with shots=K "
                "(PROMPT_STYLE_LIGHTEVAL_TASKS) or --shots K (prompt-style export)",
            )
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> PromptFunction:
        return self

    def __reduce__(self) -> Any:
        if self.source is None:
            raise TypeError(f"the prompt function of {self.name!r} was made from a loaded task and does not pickle")
        path, options = self.source
        return (_rebuilt, (path, dict(options), self.name))


def _rebuilt(path: str, options: dict[str, Any], name: str) -> PromptFunction:
    config = task_config(path, load_options=options, name=name)
    return config.prompt_function.__self__  # type: ignore[attr-defined]


def default_metrics(rendered: RenderedTask) -> list[str]:
    """``loglikelihood_acc`` for multiple choice, ``exact_match`` for generation."""
    return ["loglikelihood_acc"] if rendered.multiple_choice else ["exact_match"]


def _metrics(names: Iterable[str], where: str) -> list[Any]:
    out = []
    for name in names:
        metric = getattr(Metrics, name, None)
        if metric is None:
            from difflib import get_close_matches

            close = get_close_matches(name, [m.name for m in Metrics], n=2)
            raise OptionError(
                f"lighteval has no metric {name!r}",
                key="metrics",
                file=where,
                hint=f"did you mean {' or '.join(map(repr, close))}?" if close else "see lighteval.metrics.Metrics",
            )
        out.append(metric)
    return out


def task_config(
    task: str | Path | Task,
    *,
    load_options: Mapping[str, Any] | None = None,
    name: str | None = None,
    metrics: Sequence[str] | None = None,
    generation_size: int | None = None,
    version: int = 0,
    rows: Path | None = None,
) -> LightevalTaskConfig:
    """A prompt-style task as a ``LightevalTaskConfig`` (for a custom tasks module's ``TASKS_TABLE``).

    :param task: a task file (any format prompt-style reads), or a loaded task.
    :param load_options: :func:`prompt_style.load_task` keyword arguments (``shots``,
        ``meta``, ``data``...) for a task file.
    :param name: the task's name in lighteval (default: the task's own).
    :param metrics: lighteval metric names (default: :func:`default_metrics`).
    :param generation_size: the most tokens a generation task generates.
    :param version: the task's version in lighteval's results.
    :param rows: where the record-index dataset goes (default: the user's cache).
    :raises PromptStyleError: for a task, option or record lighteval cannot run as rendered.
    """
    source = None
    if not isinstance(task, Task):
        source = (str(Path(task).resolve()), dict(load_options or {}))
        task = load_task(task, **(load_options or {}))
    elif load_options:
        raise OptionError("load_options given with a task already loaded", key="load_options")
    where = str(task.config.path) if task.config.path else task.name
    bridge_options({"name": name, "metrics": metrics, "generation_size": generation_size, "version": version})
    function = PromptFunction(name or task.name, task, source)
    rendered = function.rendered
    system = rendered.system
    name = name or task.name
    if system is not None:
        logger.warning(
            "prompt-style task %r: its conversations start with a system message, which lighteval takes "
            "from the model: give the model system_prompt=%r",
            name,
            system,
        )
    return LightevalTaskConfig(
        name=name,
        prompt_function=function.doc,
        hf_repo=str(rows_dataset(len(rendered), rows)),
        hf_subset="default",
        metrics=_metrics(metrics or default_metrics(rendered), where),
        hf_avail_splits=["test"],
        evaluation_splits=["test"],
        few_shots_split="test",
        generation_size=generation_size,
        stop_sequence=list(task.config.until) if task.config.until else None,
        version=version,
    )


def task_configs(specs: Iterable[TaskSpec], rows: Path | None = None) -> list[LightevalTaskConfig]:
    """The configs of several tasks (:func:`~.spec.read_specs`); names must differ."""
    configs: list[LightevalTaskConfig] = []
    for spec in specs:
        config = task_config(spec.path, load_options=spec.load_options, rows=rows, **spec.bridge)
        if any(c.name == config.name for c in configs):
            raise OptionError(f"two tasks are named {config.name!r}", key="name", hint="give one of them name=...")
        configs.append(config)
    return configs


def by_lighteval_cli() -> bool:
    """Whether this process is lighteval's command line (where a traceback is noise)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return script.name == "lighteval" or (script.name == "__main__.py" and script.parent.name == "lighteval")


def fail(exc: PromptStyleError) -> BaseException:
    """``exc`` as lighteval's command line should show it: one line on stderr and
    exit status 2, as ``prompt-style`` does; the typed error itself anywhere else."""
    if by_lighteval_cli():
        print(f"prompt-style: error: {exc}", file=sys.stderr)
        return SystemExit(2)
    return exc


def task_configs_from(entries: Iterable[Mapping[str, Any]], module_file: str | None = None) -> list[Any]:
    """The ``TASKS_TABLE`` of a module ``prompt-style export lighteval`` wrote:
    one config per entry (``task``, ``name``, ``load_options``, ``metrics``,
    ``generation_size``, ``version``). On lighteval's command line a bad entry
    is one line on stderr and exit status 2."""
    try:
        return [
            task_config(
                entry["task"],
                load_options=entry.get("load_options") or {},
                name=entry.get("name"),
                metrics=entry.get("metrics"),
                generation_size=entry.get("generation_size"),
                version=entry.get("version", 0),
            )
            for entry in entries
        ]
    except PromptStyleError as exc:
        if module_file and exc.file is None:
            exc.file = module_file
        raise fail(exc) from None
