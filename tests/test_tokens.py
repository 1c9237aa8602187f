"""Token-level prompts in the core: the ``load_tokenizer`` hook, the tokenizer
meta options, the wrapper every text meta template gets, the token-level
multiple-choice split (lm-evaluation-harness's rule) and the per-record reports.

A toy tokenizer (words with their leading space, as GPT-2 splits them) stands in
for a real one; the real tokenizers are tested in plugins/tokenizers against
transformers' own outputs.
"""

from __future__ import annotations

import json
import pickle
import re
import warnings
import zlib
from pathlib import Path

import pytest

import prompt_style
from prompt_style import ModelInput, Turn, hookimpl
from prompt_style.cli import main
from prompt_style.meta.tokens import TokenizedMeta, split_token_options

ADDED = {"<s>": 1, "</s>": 2, "<|im_start|>": 3, "<|im_end|>": 4, "<tool>": 5, "\n\n": 6}
SPECIAL = frozenset({"<s>", "</s>", "<|im_start|>", "<|im_end|>"})
_ADDED_RE = re.compile("|".join(re.escape(t) for t in sorted(ADDED, key=len, reverse=True)))
_WORDS = re.compile(r" ?\w+| ?[^\w\s]+|\s+")


class WordTokenizer:
    """Added tokens matched first; the rest in GPT-2-like words (``" A"`` is one token)."""

    bos_token, bos_token_id, eos_token, eos_token_id = "<s>", 1, "</s>", 2
    added_tokens = ADDED
    special_tokens = SPECIAL

    def __init__(self, name: str = "words", bos: bool = True) -> None:
        self.name = name
        if not bos:
            self.bos_token = self.bos_token_id = None

    @staticmethod
    def piece_id(piece: str) -> int:
        return 1000 + zlib.crc32(piece.encode()) % 100_000

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        ids: list[int] = [self.bos_token_id] if add_special_tokens and self.bos_token_id else []
        pos = 0
        for match in [*_ADDED_RE.finditer(text), None]:
            end = match.start() if match else len(text)
            ids += [self.piece_id(p) for p in _WORDS.findall(text[pos:end])]
            if match:
                ids.append(ADDED[match.group()])
                pos = match.end()
        return ids


def words(text: str) -> list[int]:
    return WordTokenizer().encode(text)


class WordLoader:
    """Claims files named ``*.words`` and folders holding ``vocab.words``."""

    def detect(self, path: Path) -> bool:
        return path.suffix == ".words" or (path / "vocab.words").is_file()

    def load(self, path: Path, options):
        if options.get("broken"):
            raise RuntimeError("the file is corrupt")
        return WordTokenizer(str(path), bos=not options.get("no_bos", False))


class AnyLoader:
    """Claims everything (to test two claimants)."""

    def detect(self, path: Path) -> bool:
        return True

    def load(self, path: Path, options):
        return WordTokenizer(str(path))


class BosText:
    """A meta template that writes the BOS itself, as Llama-2 chat templates do."""

    def apply(self, dialogue):
        return ModelInput(text="<s>" + "".join(t.sep + t.content for t in dialogue))


class WordsPlugin:
    @hookimpl
    def load_tokenizer(self):
        return {"words": WordLoader()}

    @hookimpl
    def apply_meta_template(self):
        return {"bos_text": lambda *, options: BosText()}


class AnyPlugin:
    @hookimpl
    def load_tokenizer(self):
        return {"anything": AnyLoader()}


@pytest.fixture
def manager():
    # The real loaders (prompt-style-tokenizers) are blocked: only the toy one answers.
    environ = {"PROMPT_STYLE_DISABLE": "tokenizers"}
    return prompt_style.create_plugin_manager(environ=environ, plugins=[("words", WordsPlugin())])


@pytest.fixture
def vocab(tmp_path) -> Path:
    path = tmp_path / "toy.words"
    path.write_text("toy", encoding="utf-8")
    return path


MCQ = {"doc_to_text": "q", "doc_to_choice": "{{choices}}", "doc_to_target": "a", "template": "mcq"}
RECORD = {"q": "What is 2 + 2?", "choices": ["3", "4"], "a": 1}


def render(manager, records=(RECORD,), meta="plain", **options):
    return prompt_style.render_records(list(records), plugins=manager, meta=meta, meta_options=options, **MCQ)


# -- options and loading --------------------------------------------------------


def test_split_token_options():
    meta, token = split_token_options(
        {"tokenizer": "t.json", "add_generation_prompt": False, "tokenizer_legacy": True, "prefix_token_id": 2}
    )
    assert meta == {"add_generation_prompt": False}
    assert token == {"tokenizer": "t.json", "tokenizer_legacy": True, "prefix_token_id": 2}


def test_the_hook_is_a_catalog(manager):
    assert manager.names("load_tokenizer") == ["words"]
    provider = manager.resolve("load_tokenizer", "words")
    assert provider.plugin.name == "words"


def test_plain_text_gets_the_bos_as_tokenizer_text_does(manager, vocab):
    [out] = render(manager, tokenizer=str(vocab))
    assert out.token_ids == [1, *words(out.text)]
    assert out.token_report == []
    assert out.plugins["apply_meta_template"]["tokenizer"] == {
        "hook": "load_tokenizer",
        "name": "words",
        "plugin": "words",
        "distribution": None,
        "version": None,
        "path": str(vocab),
        "add_special_tokens": True,
    }


def test_add_special_tokens_false(manager, vocab):
    [out] = render(manager, tokenizer=str(vocab), add_special_tokens=False)
    assert out.token_ids == words(out.text)


def test_chat_formats_do_not_add_special_tokens(manager, vocab):
    # transformers' apply_chat_template(tokenize=True) encodes with add_special_tokens=False.
    [out] = render(manager, meta="chatml", tokenizer=str(vocab))
    assert out.text.startswith("<|im_start|>user\n")
    assert out.token_ids == words(out.text)
    assert out.token_ids[0] == ADDED["<|im_start|>"]
    assert out.token_ids.count(ADDED["<|im_end|>"]) == 1
    assert out.messages == [{"role": "user", "content": out.dialogue[0].content}]


def test_chat_formats_can_ask_for_special_tokens(manager, vocab):
    [out] = render(manager, meta="chatml", tokenizer=str(vocab), add_special_tokens=True)
    assert out.token_ids == [1, *words(out.text)]


def test_no_double_bos(manager, vocab):
    [out] = render(manager, meta="bos_text", tokenizer=str(vocab))
    assert out.text.startswith("<s>")
    assert out.token_ids == words(out.text)
    assert out.token_ids[:2] != [1, 1]
    assert [r["kind"] for r in out.token_report] == ["bos_not_added"]
    # Continuations are split with the same rule: the context keeps one BOS.
    assert out.context_token_ids[:2] == [1, words("What")[0]]


def test_no_report_when_the_tokenizer_adds_nothing(manager, vocab):
    [out] = render(manager, meta="bos_text", tokenizer=str(vocab), add_special_tokens=False)
    assert out.token_report == []


def test_special_token_text_in_content_is_encoded_as_the_token_and_reported(manager, vocab):
    record = {**RECORD, "q": "Say <|im_end|> twice: <|im_end|> and <tool>.\n\nNow."}
    with pytest.warns(UserWarning, match=r"special-token text '<\|im_end\|>', encoded as token 4"):
        [out] = render(manager, [record], meta="chatml", tokenizer=str(vocab))
    assert out.token_ids == words(out.text)
    assert out.token_ids.count(4) == 3  # two in the content, one closing the turn
    reports = [r for r in out.token_report if r["kind"] == "special_token_text"]
    assert [(r["token"], r["count"], r["special"], r["role"], r["turn"]) for r in reports] == [
        ("<|im_end|>", 2, True, "user", 0),
        ("<tool>", 1, False, "user", 0),
    ]  # "\n\n" is an added token, but whitespace: ordinary text in contents


def test_the_warning_is_given_once_per_task(manager, vocab):
    records = [{**RECORD, "q": f"<s> {i}"} for i in range(3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = render(manager, records, tokenizer=str(vocab))
    assert len([w for w in caught if "special-token text" in str(w.message)]) == 1
    assert all(any(r["kind"] == "special_token_text" for r in o.token_report) for o in out)


# -- multiple choice at token level ----------------------------------------------


def test_continuations_split_at_token_level(manager, vocab):
    [out] = render(manager, tokenizer=str(vocab))
    assert out.continuations == (" A", " B")
    assert out.text.endswith("Answer:")
    assert out.context_token_ids == [1, *words(out.text)] == out.token_ids
    assert out.continuation_token_ids == [words(" A"), words(" B")]
    assert out.token_report == []


def test_trailing_whitespace_moves_to_the_continuation(manager, vocab):
    # lm-evaluation-harness's _encode_pair: "Answer: " + "A" is scored as "Answer:" + " A".
    records = [{"q": "Capital of France?", "choices": ["Paris", "Rome"], "a": 0}]
    task = {**MCQ, "template": "cloze", "target_delimiter": " "}
    [out] = prompt_style.render_records(
        records, plugins=manager, meta="plain", meta_options={"tokenizer": str(vocab)}, **task
    )
    assert out.continuations == (" Paris", " Rome")
    # The cloze prompt ends in "Answer:"; nothing to move here, so move it ourselves:
    meta = TokenizedMeta(BosText(), WordTokenizer(), add_special_tokens=False)
    made = meta.apply_with_continuations((Turn("user", "Answer: "),), ["Paris"])
    assert made.context_token_ids == words("<s>Answer:")
    assert made.continuation_token_ids == [words(" Paris")]
    assert made.token_report == []


def test_a_continuation_that_merges_with_the_context_is_reported(manager, vocab):
    meta = TokenizedMeta(BosText(), WordTokenizer(), add_special_tokens=False)
    made = meta.apply_with_continuations((Turn("user", "The word is foot"),), ["ball", " ball"])
    context = words("<s>The word is foot")
    assert made.context_token_ids == context
    whole = words("<s>The word is football")
    # lm-evaluation-harness's split: what follows the context's own length in the whole.
    assert made.continuation_token_ids == [whole[len(context) :], words(" ball")]
    [entry] = made.token_report
    assert entry["kind"] == "continuation_boundary"
    assert entry["continuation"] == 0
    assert entry["context_unchanged"] is False
    assert entry["whole"] == whole
    assert entry["alone"] == words("ball")
    assert "not the tokenization of the whole string" in entry["message"]


def test_a_continuation_tokenized_differently_alone_is_reported():
    class Prefixing(WordTokenizer):
        """Starts every text with a space, as SentencePiece's dummy prefix does."""

        def encode(self, text, *, add_special_tokens=False):
            text = text if text.startswith((" ", "<")) else " " + text
            return super().encode(text, add_special_tokens=add_special_tokens)

    tokenizer = Prefixing()
    meta = TokenizedMeta(BosText(), tokenizer, add_special_tokens=False)
    made = meta.apply_with_continuations((Turn("user", "Q: 2+2=\n"),), ["4"])
    context = tokenizer.encode("<s>Q: 2+2=")
    assert made.context_token_ids == context
    assert made.continuation_token_ids == [tokenizer.encode("<s>Q: 2+2=\n4")[len(context) :]]
    [entry] = made.token_report
    assert entry["context_unchanged"] is True
    assert entry["moved_from_context"] == "\n"
    assert entry["text"] == "\n4"
    assert entry["alone"] == tokenizer.encode("\n4") != entry["token_ids"]
    assert "tokenized alone" in entry["message"]


def test_empty_context_scores_after_the_bos(manager):
    meta = TokenizedMeta(
        prompt_style.create_plugin_manager(entry_points=False, environ={})
        .resolve("apply_meta_template", "plain")
        .factory(options={}),
        WordTokenizer(),
    )
    made = meta.apply_with_continuations((Turn("user", ""),), [" A", "<s> B"])
    assert made.context_token_ids == [1]
    # lm-evaluation-harness drops a leading prefix token of the continuation itself.
    assert made.continuation_token_ids == [words(" A"), words(" B")]


def test_empty_context_with_prefix_token_id(manager, vocab):
    meta = TokenizedMeta(BosText(), WordTokenizer(), prefix_token_id=2)
    assert meta.prefix_token_id == 2
    plain = prompt_style.create_plugin_manager(entry_points=False, environ={}).resolve("apply_meta_template", "plain")
    meta = TokenizedMeta(plain.factory(options={}), WordTokenizer(bos=False))
    assert meta.prefix_token_id == 2  # no BOS: the EOS, as lm-evaluation-harness does
    made = meta.apply_with_continuations((Turn("user", ""),), [" A"])
    assert made.context_token_ids == [2]


def test_generation_records_have_no_continuation_tokens(manager, vocab):
    records = [{"prompt": "Translate: cat", "reference": "chat"}]
    [out] = prompt_style.render_records(
        records,
        plugins=manager,
        meta="plain",
        meta_options={"tokenizer": str(vocab)},
        doc_to_text="prompt",
        doc_to_target="reference",
    )
    assert out.token_ids == [1, *words("Translate: cat")]
    assert out.context_token_ids is None and out.continuation_token_ids is None
    assert "continuation_token_ids" not in out.to_json()


def test_to_json(manager, vocab):
    [out] = render(manager, tokenizer=str(vocab))
    data = out.to_json()
    assert data["token_ids"] == out.token_ids
    assert data["context_token_ids"] == out.context_token_ids
    assert data["continuation_token_ids"] == out.continuation_token_ids
    assert data["token_report"] == []
    json.dumps(data)
    [plain] = render(manager)
    assert {"token_ids", "context_token_ids", "continuation_token_ids", "token_report"}.isdisjoint(plain.to_json())


def test_the_renderer_pickles_with_its_tokenizer(manager, vocab):
    task = prompt_style.load_task(
        {"data": {"test": [RECORD]}, **MCQ}, plugins=manager, meta="chatml", meta_options={"tokenizer": str(vocab)}
    )
    renderer = pickle.loads(pickle.dumps(task.renderer))
    assert renderer.render(RECORD, 0) == task.renderer.render(RECORD, 0)
    assert renderer.meta.chat is True
    # the wrapped meta template's attributes show through (chatml's add_generation_prompt is unset: a task's default)
    assert renderer.meta.add_generation_prompt is None and renderer.meta.continue_final_message is False


def test_loader_options_lose_their_prefix(manager, vocab):
    [out] = render(manager, tokenizer=str(vocab), tokenizer_no_bos=True)
    assert out.token_ids == words(out.text)


def test_a_folder_is_given_to_the_loader(manager, tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "vocab.words").write_text("", encoding="utf-8")
    [out] = render(manager, tokenizer=str(tmp_path / "model"))
    assert out.token_ids[0] == 1


# -- errors ----------------------------------------------------------------------


def test_missing_tokenizer_path(manager, tmp_path):
    with pytest.raises(prompt_style.TokenizerError, match="tokenizer not found") as caught:
        render(manager, tokenizer=str(tmp_path / "nope.json"))
    assert caught.value.key == "meta.tokenizer"


def test_nobody_claims_the_path(manager, tmp_path):
    path = tmp_path / "tokenizer.bin"
    path.write_bytes(b"")
    with pytest.raises(prompt_style.TokenizerError, match="no tokenizer loader understands") as caught:
        render(manager, tokenizer=str(path))
    assert "known loaders: words" in str(caught.value)


def test_no_loader_installed(tmp_path, vocab):
    bare = prompt_style.create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(
        prompt_style.TokenizerError,
        match="such as prompt-style-tokenizers, which is not on the package index: pip install ",
    ):
        render(bare, tokenizer=str(vocab))


def test_two_claimants_and_tokenizer_format(vocab):
    both = prompt_style.create_plugin_manager(environ={}, plugins=[("words", WordsPlugin()), ("anything", AnyPlugin())])
    with pytest.raises(prompt_style.TokenizerError, match="more than one tokenizer loader: ") as caught:
        render(both, tokenizer=str(vocab))
    assert "tokenizer_format=NAME" in str(caught.value)
    [out] = render(both, tokenizer=str(vocab), tokenizer_format="anything")
    assert out.token_ids[0] == 1


def test_unknown_tokenizer_format(manager, vocab):
    with pytest.raises(prompt_style.PluginNotFoundError, match="unknown tokenizer format 'word'") as caught:
        render(manager, tokenizer=str(vocab), tokenizer_format="word")
    assert "did you mean 'words'" in str(caught.value)


def test_loader_failure_names_the_plugin_and_path(manager, vocab):
    with pytest.raises(prompt_style.TokenizerError, match=r"load_tokenizer 'words' from plugin 'words' could not load"):
        render(manager, tokenizer=str(vocab), tokenizer_broken=True)


def test_token_options_need_a_tokenizer(manager):
    with pytest.raises(prompt_style.OptionError, match="needs a tokenizer") as caught:
        render(manager, add_special_tokens=False)
    assert caught.value.key == "meta.add_special_tokens"


def test_bad_option_values(manager, vocab):
    with pytest.raises(prompt_style.OptionError, match="must be true, false or auto"):
        render(manager, tokenizer=str(vocab), add_special_tokens="yes")
    with pytest.raises(prompt_style.OptionError, match="must be a token id"):
        render(manager, tokenizer=str(vocab), prefix_token_id="<s>")
    with pytest.raises(prompt_style.OptionError, match="must be a path"):
        render(manager, tokenizer=3)


def test_a_meta_template_without_text(manager, vocab):
    with pytest.raises(prompt_style.TokenizerError, match="meta template 'messages' gives no text") as caught:
        render(manager, meta="messages", tokenizer=str(vocab))
    assert caught.value.index == 0


# -- the command line ------------------------------------------------------------


def test_cli_render_jsonl_with_a_tokenizer(manager, vocab, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", manager)
    task = tmp_path / "task.yaml"
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    task.write_text(
        "task: t\ndata: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: '{{choices}}'\ndoc_to_target: a\n"
        "template: mcq\n",
        encoding="utf-8",
    )
    assert main(["render", str(task), "--format", "jsonl", "--meta-option", f"tokenizer={vocab}"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["token_ids"][0] == 1
    assert line["continuation_token_ids"] == [words(" A"), words(" B")]
    assert main(["render", str(task), "--meta-option", f"tokenizer={vocab}"]) == 0
    text = capsys.readouterr().out
    assert "token_ids (" in text


def test_cli_error_for_a_missing_tokenizer(manager, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", manager)
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    task = tmp_path / "task.yaml"
    task.write_text("task: t\ndata: {test: test.jsonl}\ndoc_to_text: q\n", encoding="utf-8")
    assert main(["render", str(task), "--meta-option", "tokenizer=missing/tokenizer.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prompt-style: error: meta.tokenizer: tokenizer not found: missing/tokenizer.json")


# -- meta templates that render whole conversations (chat templates) ----------------


class ConversationMeta:
    """Like a chat template: renders messages itself (``apply_messages``)."""

    chat = True

    def apply(self, dialogue):
        return self.apply_messages([{"role": t.role, "content": t.content} for t in dialogue])

    def apply_messages(self, messages, *, tools=None, documents=None, **variables):
        text = "<s>" + "".join(f"[{m['role']}] {m['content']}</s>" for m in messages)
        return ModelInput(text=text, messages=list(messages))


def test_apply_messages_is_tokenized_too():
    meta = TokenizedMeta(ConversationMeta(), WordTokenizer())
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Say <|im_end|>"}, {"type": "image_url"}]},
    ]
    with pytest.warns(UserWarning, match="special-token text"):
        made = meta.apply_messages(messages, tools=None)
    assert made.token_ids == words(made.text)
    assert made.token_ids[0] == 1 and made.token_ids[1] != 1
    [entry] = made.token_report
    assert (entry["turn"], entry["role"], entry["token"]) == (1, "user", "<|im_end|>")


def test_apply_messages_only_where_the_meta_template_has_it():
    meta = TokenizedMeta(BosText(), WordTokenizer())
    assert getattr(meta, "apply_messages", None) is None
    assert callable(TokenizedMeta(ConversationMeta(), WordTokenizer()).apply_messages)


def test_no_double_bos_when_the_config_names_no_bos():
    """The tokenizer adds <s> but does not call it its BOS (a config with "bos_token": null):
    lm-evaluation-harness then checks for the EOS text and doubles the <s>; we do not."""

    class Unnamed(WordTokenizer):
        bos_token = bos_token_id = None

        def encode(self, text, *, add_special_tokens=False):
            return ([1] if add_special_tokens else []) + super().encode(text)

    meta = TokenizedMeta(BosText(), Unnamed())
    assert meta.prefix_token_id == 2  # the EOS, as lm-evaluation-harness picks it
    made = meta.apply((Turn("user", "Hi"),))
    assert made.token_ids == words("<s>Hi")
    assert made.token_report[0]["kind"] == "bos_not_added" and made.token_report[0]["token"] == "<s>"
