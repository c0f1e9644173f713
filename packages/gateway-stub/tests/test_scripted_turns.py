"""Scripted turns: an answer key that plays the model's side of an agent conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from evaljig_gateway import AnswerKeyError, Gateway, load_answer_key

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
SCRIPT = {
    "What is the weather in Paris?": {
        "turns": [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"content": "It is sunny in Paris."},
        ]
    },
    "Give me the order": {"json": {"sku": "A-1", "quantity": 2}},
}


def test_an_agent_loop_follows_the_script(client: openai.OpenAI, gateway: Gateway) -> None:
    gateway.set_answers(SCRIPT)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(model="gpt-stub", messages=messages, tools=[WEATHER])  # type: ignore[arg-type]
    [call] = first.choices[0].message.tool_calls or []
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})  # type: ignore[union-attr]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    # the script says text here, even though tool_choice asks for a tool: the script is the model
    second = client.chat.completions.create(
        model="gpt-stub", messages=messages, tools=[WEATHER], tool_choice="required"
    )  # type: ignore[arg-type]
    assert second.choices[0].message.content == "It is sunny in Paris."
    messages += [second.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "thanks"}]
    third = client.chat.completions.create(model="gpt-stub", messages=messages)  # type: ignore[arg-type]
    assert third.choices[0].message.content != "It is sunny in Paris."  # a new question: not scripted


def test_past_the_last_turn_the_gateway_answers_unscripted(client: openai.OpenAI, gateway: Gateway) -> None:
    gateway.set_answers({"Hello": {"turns": [{"content": "scripted"}]}})
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Hello"}]
    assert client.chat.completions.create(model="gpt-stub", messages=messages).choices[0].message.content == "scripted"  # type: ignore[arg-type]
    messages += [{"role": "assistant", "content": "scripted"}]
    again = client.chat.completions.create(model="gpt-stub", messages=messages)  # type: ignore[arg-type]
    assert again.choices[0].message.content not in (None, "scripted")


def test_a_json_turn_and_a_file_key(client: openai.OpenAI, gateway: Gateway, tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(SCRIPT))
    gateway.set_answers(path)
    reply = client.chat.completions.create(
        model="gpt-stub", messages=[{"role": "user", "content": "Give me the order"}]
    )
    assert json.loads(reply.choices[0].message.content or "") == {"sku": "A-1", "quantity": 2}
    rows = tmp_path / "answers.jsonl"
    rows.write_text(json.dumps({"question": "Hi", "answer": {"content": "Hello there"}}) + "\n")
    assert len(load_answer_key(rows)) == 1


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"text": "x"}, "exactly one of 'content', 'json', 'tool_calls'"),
        ({"turns": []}, r"answer\.turns: must be the only key"),
        ({"turns": [{"content": 3}]}, r"answer\.turns\[0\]\.content: must be a string"),
        ({"tool_calls": [{"arguments": {}}]}, r"tool_calls\[0\]: must be an object with a non-empty 'name'"),
        (
            {"tool_calls": [{"name": "f", "arguments": "{not json"}]},
            r"tool_calls\[0\]\.arguments: a string must hold JSON",
        ),
        ({"tool_calls": [{"name": "f", "type": "custom"}]}, r"tool_calls\[0\]\.input"),
    ],
)
def test_a_bad_script_names_file_question_and_place(tmp_path: Path, answer: Any, message: str) -> None:
    path = tmp_path / "key.json"
    path.write_text(json.dumps({"Q?": answer}))
    with pytest.raises(AnswerKeyError, match=message) as caught:
        load_answer_key(path)
    assert str(path) in str(caught.value)
    assert "'Q?'" in str(caught.value)
