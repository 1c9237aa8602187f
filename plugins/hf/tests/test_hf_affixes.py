"""``hf``'s ``last_turn_affixes``: where a chat template writes the last message's
content, found by a traced render and probes (prompt_style_hf.affixes), so that the
renderer's compiled fast path takes the task; and a template that looks at the
content, or writes it otherwise than as it is, left to the general path.

The fast path's prompts are compared with the general path's (``TaskRenderer._render``,
every record through the template) on every corpus template, with contents chosen to
trip a template that treats them otherwise (white space, markup, empty).
"""

from __future__ import annotations

import pytest
from _hf_test_support import CORPUS_COPY, TEXTS
from prompt_style_hf.affixes import PROBES, content_affixes
from prompt_style_hf.meta import hf_meta

import prompt_style
from prompt_style import Turn

TEMPLATES = sorted((CORPUS_COPY / "templates").glob("*.jinja"))
NOW = "2025-01-02T03:04:05"
TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "now": NOW}

QUESTIONS = [*TEXTS, "What is 2 + 2?", "  lead", "trail  ", "<tool_response>\n1\n</tool_response>", "x" * 3000]


def _records(n: int = 0) -> list[dict]:
    return [
        {"question": q, "choices": ["a", " b", "c\n", "<|im_end|>"], "answer": i % 4}
        for i, q in enumerate(QUESTIONS[n:] + QUESTIONS[:n])
    ]


def _task(meta_options: dict, *, shots: int = 2, style: str = "mcq::mmlu", retriever: str = "first_n", **options):
    records = _records()
    return prompt_style.load_task(
        {
            "task": "affixes",
            "doc_to_text": "{{question}}",
            "doc_to_choice": "{{choices}}",
            "doc_to_target": "answer",
            "template": style,
            "description": "About things.\n\n",
            "num_fewshot": shots,
            "fewshot_split": "dev",
            "retriever": retriever,
        },
        data={"test": records, "dev": _records(3)},
        meta="hf",
        meta_options={**TOKENS, **meta_options},
        **options,
    )


def _outcome(fn, record, index):
    try:
        made = fn(record, index)
    except prompt_style.PromptStyleError as exc:
        return ("error", str(exc))
    return (made.text, made.messages, made.continuations, made.target)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
@pytest.mark.parametrize("options", [{}, {"fewshot_as_multiturn": False}, {"system_instruction": "Be brief."}])
@pytest.mark.parametrize("style", ["mcq::mmlu", "passthrough"])
def test_fast_path_prompts_are_the_templates_own(template, options, style):
    # (passthrough: the question is the record's text as it is, white space at either
    # end included, which a template that trims the content changes: the general path's)
    task = _task({"template": str(template)}, style=style, **options)
    renderer = task.renderer
    fast = renderer.fast_render()
    if fast is None:
        pytest.skip("the template is left to the general path")
    taken = 0
    for index, record in enumerate(_records()):
        made = fast(record, index)
        taken += made is not None
        expected = _outcome(renderer._render, record, index)
        if made is not None:
            assert _outcome(fast, record, index) == expected
    assert taken


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
@pytest.mark.parametrize("options", [{}, {"system_instruction": "Be brief."}])
def test_examples_chosen_per_record_are_the_templates_own(template, options):
    # lm-evaluation-harness's default sampler: examples drawn per record, joined from
    # each example's closed texts where the template's turns allow it
    task = _task({"template": str(template)}, retriever="random", **options)
    renderer = task.renderer
    fast = renderer.fast_render()
    if fast is None:
        pytest.skip("the template is left to the general path")
    for index, record in enumerate(_records()):
        if fast(record, index) is not None:
            assert _outcome(fast, record, index) == _outcome(renderer._render, record, index)


def _affixes(source: str, dialogue=None, **options):
    chat = hf_meta({"chat_template": source, **options})
    dialogue = dialogue or (Turn("system", "S"), Turn("user", "Q"))
    return chat, content_affixes(chat, dialogue)


OPAQUE = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m['content'] + '\\n' }}{% if m.content is string %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def test_an_opaque_template_gives_its_affixes():
    chat, affixes = _affixes(OPAQUE)
    assert affixes == ("<|system|>\nS\n<|user|>\n", "\n<|assistant|>\n", False)
    for text in PROBES:
        assert chat.apply((Turn("system", "S"), Turn("user", text))).text == affixes[0] + text + affixes[1]
    # asked again: remembered
    assert chat.last_turn_affixes((Turn("system", "S"), Turn("user", "Q"))) == affixes[:2]
    assert chat.stripped_turn_affixes((Turn("system", "S"), Turn("user", "Q"))) == affixes[:2]


@pytest.mark.parametrize(
    "body",
    [
        "{{ m['content'] | trim | upper }}",  # a filter that reads it
        "{{ m.content.lstrip() }}",  # a method
        "{% if m.content.startswith('<tool_response>') %}T{% endif %}{{ m.content }}",
        "{% if m.content == '' %}E{% endif %}{{ m.content }}",  # compared
        "{% if 'x' in m.content %}X{% endif %}{{ m.content }}",
        "{{ m.content[0] }}{{ m.content }}",  # indexed
        "{% for c in m.content %}{% endfor %}{{ m.content }}",  # iterated
        "{{ (m.content ~ ' ') | trim }}",  # through ~ (a plain text): the padded probes differ
        "{{ ('[' + m.content + ']') | trim }}",  # through + (traced)
        "{% if m.content | length > 10 %}L{% endif %}{{ m.content }}",  # its length: the probes differ
        "{% if m.content %}{{ m.content }}{% else %}(empty){% endif %}",  # its truth: the empty probe
        "{{ m.content | replace('\\n', ' ') }}",
        "{{ m.content | tojson }}",
        "{{ '%-5s' | format(m.content) }}",  # padded by a format: the short probes differ
    ],
)
def test_a_template_that_looks_at_the_content_is_left_to_the_general_path(body):
    source = "{% for m in messages %}<|{{ m.role }}|>" + body + "{% endfor %}<|assistant|>"
    assert _affixes(source)[1] is None


TRIMMING = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m['content'] | trim }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def test_a_template_that_trims_the_content_promises_it_for_contents_trim_leaves_alone():
    chat, affixes = _affixes(TRIMMING)
    assert affixes == ("<|system|>\nS<|end|><|user|>\n", "<|end|><|assistant|>\n", True)
    dialogue = (Turn("system", "S"), Turn("user", "Q"))
    assert chat.last_turn_affixes(dialogue) is None
    assert chat.stripped_turn_affixes(dialogue) == affixes[:2]
    # a strip with characters, or a look after the trim, is refused
    assert _affixes(TRIMMING.replace("| trim", ".strip('x')"))[1] is None
    assert _affixes(TRIMMING.replace("m['content'] | trim", "(m['content'] | trim).upper()"))[1] is None
    # Llama 3's own template, through the named format
    llama = prompt_style.load_task(
        {"task": "t", "doc_to_text": "{{question}}", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"},
        data={"test": _records()},
        meta="llama-3",
    )
    meta = llama.renderer.meta
    dialogue = (Turn("user", "Q"),)
    assert meta.last_turn_affixes(dialogue) is None and meta.stripped_turn_affixes(dialogue) is not None
    assert llama.renderer.fast_render() is not None


def test_the_question_before_an_answer_prefill():
    """``prefilled_turn_affixes``: the question's content traced and probed as the last
    turn's is; the text after it (the prefill, left open) read off apply."""
    prefilled = (Turn("system", "S"), Turn("user", "Q"), Turn("assistant", "The answer is", " "))
    chat = hf_meta({"chat_template": OPAQUE})
    affixes = chat.prefilled_turn_affixes(prefilled)
    assert affixes == ("<|system|>\nS\n<|user|>\n", "\n<|assistant|>\nThe answer is", False)
    for text in PROBES:
        turned = (prefilled[0], Turn("user", text), prefilled[2])
        assert chat.apply(turned).text == affixes[0] + text + affixes[1]
    trimming = hf_meta({"chat_template": TRIMMING})
    assert trimming.prefilled_turn_affixes(prefilled) == (
        "<|system|>\nS<|end|><|user|>\n",
        "<|end|><|assistant|>\nThe answer is",
        True,
    )
    looking = "{% for m in messages %}<|{{ m.role }}|>{{ m.content.lstrip() }}{% endfor %}"
    assert hf_meta({"chat_template": looking}).prefilled_turn_affixes(prefilled) is None
    # no prefill (the last turn a user's), or the generation prompt asked for: not this promise
    assert chat.prefilled_turn_affixes(prefilled[:2]) is None
    asked = hf_meta({"chat_template": OPAQUE, "add_generation_prompt": True})
    assert asked.prefilled_turn_affixes(prefilled) is None


def test_only_the_last_turn_matters():
    # an earlier turn's content may be read any way: it is the same for every record
    source = (
        "{% for m in messages %}{% if not loop.last %}{{ m.content | trim | upper }}{% else %}"
        "[{{ m.content }}]{% endif %}{% endfor %}"
    )
    assert _affixes(source)[1] == ("S[", "]", False)


def test_shapes_not_taken():
    # a continued final message (a prefill), system turns merged by the policy, no
    # generation prompt: the general path
    dialogue = (Turn("user", "Q"), Turn("assistant", "A"))
    assert _affixes(OPAQUE, dialogue)[1] is None
    assert _affixes(OPAQUE, system_policy="merge")[1] is None
    assert _affixes(OPAQUE, add_generation_prompt=False)[1] is None
    assert _affixes(OPAQUE, (Turn("user", [{"type": "text", "text": "Q"}]),))[1] is None
    chat = hf_meta({"chat_template": OPAQUE})
    assert chat.last_turn_affixes((Turn("user", [{"type": "text", "text": "Q"}]),)) is None
    # a template that raises
    assert _affixes("{{ raise_exception('no') }}")[1] is None


def test_a_named_format_takes_the_fast_path_with_the_same_prompts():
    records = _records()
    task = prompt_style.load_task(
        {
            "task": "named",
            "doc_to_text": "{{question}}",
            "doc_to_choice": "{{choices}}",
            "doc_to_target": "answer",
            "template": "mcq::mmlu",
            "num_fewshot": 0,
        },
        data={"test": records},
        meta="qwen",
    )
    fast = task.renderer.fast_render()
    assert fast is not None
    for index, record in enumerate(records):
        assert _outcome(fast, record, index) == _outcome(task.renderer._render, record, index)


def test_closed_turns_where_the_template_writes_the_content_as_it_is():
    from prompt_style_hf.affixes import turn_texts

    chat = hf_meta({"chat_template": TRIMMING})
    # (user, answer, user): the texts between the contents, each turn's ending where the
    # next content starts
    assert turn_texts(chat) == ("", "<|end|><|assistant|>\n", "", "<|end|><|user|>\n")
    assert chat.closed_turn(Turn("user", "Q")) == ("", "<|end|><|assistant|>\n", {"role": "user", "content": "Q"})
    assert chat.closed_turn(Turn("assistant", "A"))[:2] == ("", "<|end|><|user|>\n")
    # a content the template trims, a system turn, parts: not promised
    assert chat.closed_turn(Turn("user", " Q ")) is None
    assert chat.closed_turn(Turn("system", "S")) is None
    assert chat.closed_turn(Turn("user", [{"type": "text", "text": "Q"}])) is None
    opaque = hf_meta({"chat_template": OPAQUE})
    assert opaque.closed_turn(Turn("user", " Q ")) is not None
    # a template whose texts depend on where a turn stands: no texts at all
    numbered = "{% for m in messages %}[{{ loop.index }}:{{ m.role }}]{{ m.content }}{% endfor %}"
    made = hf_meta({"chat_template": numbered})
    assert made.closed_turn(Turn("user", "Q")) is not None  # per turn it holds; the renderer checks the whole
    task = prompt_style.load_task(
        {
            "task": "numbered",
            "doc_to_text": "{{question}}",
            "doc_to_choice": "{{choices}}",
            "doc_to_target": "answer",
            "num_fewshot": 2,
            "fewshot_split": "dev",
            "retriever": "random",
        },
        data={"test": _records(), "dev": _records(3)},
        meta="hf",
        meta_options={"chat_template": numbered},
    )
    renderer = task.renderer
    fast = renderer.fast_render()
    for index, record in enumerate(_records()):
        made = None if fast is None else fast(record, index)
        if made is not None:
            assert _outcome(fast, record, index) == _outcome(renderer._render, record, index)


def test_what_it_found_out_survives_a_trip_to_a_worker_process():
    import pickle

    chat = hf_meta({"chat_template": TRIMMING})
    dialogue = (Turn("system", "S"), Turn("user", "Q"))
    before = (chat.stripped_turn_affixes(dialogue), chat.closed_turn(Turn("user", "Q")))
    copied = pickle.loads(pickle.dumps(chat))
    assert (copied.stripped_turn_affixes(dialogue), copied.closed_turn(Turn("user", "Q"))) == before
    assert copied.closed_turn(Turn("assistant", "A")) == chat.closed_turn(Turn("assistant", "A"))
    fresh = pickle.loads(pickle.dumps(hf_meta({"chat_template": TRIMMING})))  # before anything was asked
    assert fresh.closed_turn(Turn("user", "Q")) == before[1]
