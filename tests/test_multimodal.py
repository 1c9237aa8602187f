"""Multimodal prompts (AISBench MMPromptTemplate): the ``multimodal`` style, OpenAI-style
content parts, the <AIS_..._START>...<AIS_CONTENT_TAG> segment markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prompt_style import PromptStyleError, StyleError, load_task
from prompt_style.cli import main
from prompt_style.styles.opencompass.multimodal import mm_parts, split_segments

URL_MM = {
    "text": {"type": "text", "text": "{anything}\nQuestion: {question}"},
    "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
    "video": {"type": "video_url", "video_url": {"url": "file://{video}"}},
    "audio": {"type": "audio_url", "audio_url": {"url": "file://{audio}"}},
}
BASE64_MM = {
    "text": {"type": "text", "text": "{anything}\nQuestion: {question}"},
    "image": {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,{image}"}},
    "video": {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,{video}"}},
    "audio": {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,{audio}"}},
}
MARKED = (
    "<AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>IMG<AIS_CONTENT_TAG>"
    "<AIS_AUDIO_START>AUD<AIS_CONTENT_TAG><AIS_VIDEO_START>VID<AIS_CONTENT_TAG>"
)
RECORD = {"anything": "blabla", "question": MARKED, "answer": "a cat"}


def task(prompt_mm, records=(RECORD,), **template):
    """An AISBench dataset config (as a mapping) with one prompt_mm round item."""
    return {
        "reader_cfg": {"input_columns": ["anything", "question"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": {
                "type": "MMPromptTemplate",
                "template": {"round": [{"role": "HUMAN", "prompt_mm": prompt_mm}], **template},
            },
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer"},
        },
        "data": {"test": list(records)},
    }


def messages(config, pm):
    return [r.messages for r in load_task(config, plugins=pm, meta="opencompass::api").render()]


def test_base64_segments_in_the_records_order(pm):
    [[message]] = messages(task(BASE64_MM), pm)
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "blabla\nQuestion: What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,IMG"}},
            {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,AUD"}},
            {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,VID"}},
        ],
    }


def test_url_segments(pm):
    [[message]] = messages(task(URL_MM), pm)
    assert [part.get("image_url", part.get("text")) for part in message["content"][:2]] == [
        "blabla\nQuestion: What is this?",
        {"url": "file://IMG"},
    ]


def test_the_dialogue_keeps_the_parts(pm):
    [result] = load_task(task(URL_MM), plugins=pm, meta="opencompass::api").render()
    [turn] = result.dialogue
    assert turn.role == "HUMAN"
    assert isinstance(turn.content, tuple) and len(turn.content) == 4


def test_aisbench_content_field_without_closing_tag(pm):
    """AISBench's datasets build a 'content' field; mm_custom ends it without a closing tag."""
    prompt_mm = {
        "text": {"type": "text", "text": "{question}"},
        "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
    }
    record = {
        "question": "What is the total?",
        "image": "unused.png",
        "content": "<AIS_IMAGE_START>/data/a.png<AIS_CONTENT_TAG><AIS_IMAGE_START>/data/b.png"
        "<AIS_CONTENT_TAG><AIS_TEXT_START>What is the total?",
        "answer": "42",
    }
    [[message]] = messages(task(prompt_mm, [record]), pm)
    assert message["content"] == [
        {"type": "image_url", "image_url": {"url": "file:///data/a.png"}},
        {"type": "image_url", "image_url": {"url": "file:///data/b.png"}},
        {"type": "text", "text": "What is the total?"},
    ]


def test_without_markers_the_fields_fill_the_parts(pm):
    record = {"anything": "x", "question": "Q?", "image": "cat.png", "video": "v.mp4", "audio": "a.wav"}
    [[message]] = messages(task(URL_MM, [record]), pm)
    assert message["content"] == [
        {"type": "text", "text": "x\nQuestion: Q?"},
        {"type": "image_url", "image_url": {"url": "file://cat.png"}},
        {"type": "video_url", "video_url": {"url": "file://v.mp4"}},
        {"type": "audio_url", "audio_url": {"url": "file://a.wav"}},
    ]


def test_a_list_of_images_gives_one_part_each(pm):
    prompt_mm = {
        "text": {"type": "text", "text": "{question}"},
        "image": {"type": "image_url", "image_url": {"url": "{image}"}},
    }
    record = {"question": "Same?", "image": ["https://x/1.jpg", "https://x/2.jpg"]}
    [[message]] = messages(task(prompt_mm, [record]), pm)
    assert [p["type"] for p in message["content"]] == ["text", "image_url", "image_url"]
    assert message["content"][2]["image_url"]["url"] == "https://x/2.jpg"


def test_text_and_parts_in_one_dialogue(pm):
    config = task(BASE64_MM, begin=[{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Look. {answer}"}])
    config["infer_cfg"]["prompt_template"]["template"]["round"].append({"role": "BOT", "prompt": "{answer}"})
    [result] = load_task(config, plugins=pm, meta="opencompass::api").render()
    assert result.dialogue[0].content == "Look. "  # the answer never leaks
    assert result.messages[0]["content"][0] == {"type": "text", "text": "Look. "}
    assert result.messages[0]["content"][-1]["type"] == "video_url"
    assert result.target == "a cat"


def test_parts_as_a_list(pm):
    prompt_mm = [{"type": "text", "text": "{anything}"}, {"type": "image_url", "image_url": {"url": "{img}"}}]
    [[message]] = messages(task(prompt_mm, [{"anything": "A", "question": "", "img": "http://i"}]), pm)
    assert message["content"][1] == {"type": "image_url", "image_url": {"url": "http://i"}}


def test_a_text_only_meta_template_refuses_parts(pm):
    with pytest.raises(StyleError, match="multimodal parts") as info:
        list(load_task(task(URL_MM), plugins=pm, meta="opencompass").render())
    assert "record 0" in str(info.value)


@pytest.mark.parametrize(
    "prompt_mm, record, message",
    [
        (
            {"text": {"type": "text", "text": "{question}"}},
            RECORD,
            "holds a image segment, but the item's prompt_mm has no image part",
        ),
        (
            URL_MM,
            {"anything": "", "question": "<AIS_TEXT_START>a<AIS_CONTENT_TAG>stray"},
            "'stray' is outside any segment marker",
        ),
        (URL_MM, {"anything": "", "question": "plain", "image": "x.png"}, "the video part has no value for {video}"),
        (
            {"text": {"type": "text", "text": "fixed"}},
            {"anything": "", "question": "", "content": "<AIS_TEXT_START>lost"},
            "the text part has no placeholder for it",
        ),
        (
            URL_MM,
            {"anything": "", "question": "q", "c": "<AIS_TEXT_START>a", "d": "<AIS_TEXT_START>b"},
            "all hold segment",
        ),
    ],
)
def test_bad_records(pm, prompt_mm, record, message):
    with pytest.raises(StyleError) as info:
        list(load_task(task(prompt_mm, [record]), plugins=pm, meta="opencompass::api").render())
    assert message in str(info.value)


@pytest.mark.parametrize(
    "prompt_mm, message",
    [
        ({"picture": {"type": "image_url"}}, "has modality 'picture'; the modalities are text, image, audio, video"),
        ({"image": "file://{image}"}, "prompt_mm.image must be a content part with a type"),
        ({}, "prompt_mm must be a mapping"),
    ],
)
def test_bad_templates(pm, prompt_mm, message):
    with pytest.raises(PromptStyleError) as info:
        load_task(task(prompt_mm), plugins=pm)
    assert message in str(info.value)
    assert "prompt_template.template.round.0.prompt_mm" in str(info.value)


def test_split_segments():
    assert split_segments("<AIS_VIDEO_START>f1,f2<AIS_CONTENT_TAG>\n") == [("video", "f1,f2")]
    assert mm_parts({"audio": {"type": "audio_url", "audio_url": {"url": "{audio}"}}}, {"x": "<AIS_AUDIO_START>A"}) == (
        {"type": "audio_url", "audio_url": {"url": "A"}},
    )


def test_cli_jsonl(tmp_path, capsys):
    path = tmp_path / "mm.yaml"
    path.write_text(yaml.safe_dump(task(BASE64_MM)), encoding="utf-8")
    assert main(["render", str(path), "--meta", "opencompass::api", "--format", "jsonl"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["messages"][0]["content"][1]["image_url"]["url"] == "data:image/jpeg;base64,IMG"
    assert main(["render", str(path)]) == 2
    assert "multimodal parts" in capsys.readouterr().err


def test_documented_example(capsys):
    example = Path(__file__).resolve().parents[1] / "examples" / "opencompass_multimodal" / "task.yaml"
    assert main(["render", str(example), "--meta", "opencompass::api", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "file:///data/images/cat.jpg"}},
                {"type": "text", "text": "What animal is this?"},
            ],
        }
    ]
    assert rows[1]["messages"][0]["content"][1] == {
        "type": "audio_url",
        "audio_url": {"url": "data:audio/wav;base64,UklGRiQAAABXQVZF"},
    }
    assert main(["render", str(example)]) == 2
    assert "multimodal parts" in capsys.readouterr().err
