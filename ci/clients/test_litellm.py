"""litellm's ``completion``: chat, streaming, ``response_format=Model`` (flat and nested), tools, embeddings."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .failures import MODELS, TOOL_FAILURES, WEATHER_TOOL, answer_text, cells, outcome, prompt, until_refused
from .models import ANSWER, QUESTION, City, Person, check_person

#: What litellm's ``completion`` does with each gateway failure.
EXPECTED = {
    "reasoning": (
        "completion: returns content 'Paris', finish_reason stop, reasoning kept",
        "stream: returns content 'Paris', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "think-empty": (
        "completion: returns content '', finish_reason stop, reasoning kept",
        "stream: returns content '', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "length": (
        "completion: returns content '', finish_reason length",
        "stream: returns content '', finish_reason length",
        "2 requests",
    ),
    "cut": (
        "completion: raises litellm.InternalServerError",
        "stream: returns content 'D', finish_reason stop",
        "2 requests",
    ),
    "drop": (
        "completion: raises litellm.InternalServerError",
        "stream: raises litellm.MidStreamFallbackError",
        "4 requests",
    ),
    "garble": (
        "completion: raises litellm.InternalServerError",
        "stream: raises litellm.MidStreamFallbackError",
        "2 requests",
    ),
    "context": (
        "completion: raises litellm.ContextWindowExceededError",
        "stream: raises litellm.ContextWindowExceededError",
        "2 requests",
    ),
    "tpm": (
        "call 6 raises litellm.RateLimitError",
        "8 requests",
    ),
    "bad-tool-args": (
        'completion: returns content null, finish_reason tool_calls, tool get_weather({"city")',
        "stream: returns content '', finish_reason tool_calls, tool get_weather({\"city\")",
        "2 requests",
    ),
    "unknown-tool": (
        'completion: returns content null, finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        'stream: returns content \'\', finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        "2 requests",
    ),
}


@pytest.fixture
def litellm() -> Any:
    return client("litellm")


@pytest.fixture
def keyed() -> Any:
    with Gateway(answers={QUESTION: ANSWER}) as gw:
        yield gw


def _kw(gw: Gateway) -> dict[str, Any]:
    return {"model": "openai/gpt-stub", "api_base": gw.base_url, "api_key": FAKE_KEY}


@pytest.mark.cell("litellm", "chat")
def test_chat(litellm: Any, keyed: Gateway) -> None:
    done = litellm.completion(messages=[{"role": "user", "content": QUESTION}], **_kw(keyed))
    assert done.choices[0].message.content == ANSWER


@pytest.mark.cell("litellm", "stream")
def test_stream(litellm: Any, keyed: Gateway) -> None:
    chunks = list(litellm.completion(messages=[{"role": "user", "content": QUESTION}], stream=True, **_kw(keyed)))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER


@pytest.mark.cell("litellm", "structured")
def test_response_format_model(litellm: Any, keyed: Gateway) -> None:
    done = litellm.completion(
        messages=[{"role": "user", "content": "Describe a city."}], response_format=City, **_kw(keyed)
    )
    City.model_validate_json(done.choices[0].message.content)


@pytest.mark.cell("litellm", "nested")
def test_response_format_nested(litellm: Any, keyed: Gateway) -> None:
    done = litellm.completion(
        messages=[{"role": "user", "content": "Describe a person."}], response_format=Person, **_kw(keyed)
    )
    check_person(Person.model_validate_json(done.choices[0].message.content))


@pytest.mark.cell("litellm", "tools")
def test_tool_then_text(litellm: Any, keyed: Gateway) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    messages: list[Any] = [{"role": "user", "content": "Use get_weather for Paris."}]
    first = litellm.completion(messages=messages, tools=[tool], tool_choice="required", **_kw(keyed))
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments)["city"], str)
    messages += [first.choices[0].message, {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
    then = litellm.completion(messages=messages, tools=[tool], **_kw(keyed))
    assert not then.choices[0].message.tool_calls
    assert then.choices[0].message.content


@pytest.mark.cell("litellm", "embeddings")
def test_embeddings(litellm: Any, keyed: Gateway) -> None:
    done = litellm.embedding(input=["a", "b"], **{**_kw(keyed), "model": "openai/text-embedding-stub"})
    assert [len(d["embedding"]) for d in done.data] == [1536, 1536]
    assert done.data[0]["embedding"] != done.data[1]["embedding"]


@pytest.mark.parametrize(("failure", "expected"), cells("litellm", EXPECTED))
def test_failure(litellm: Any, failure: str, expected: tuple[str, ...], seen: Callable[[str], None]) -> None:
    """``completion`` with its defaults, streamed and not: what it raises or returns, and the requests sent."""
    model = MODELS[failure]
    tools = {"tools": [WEATHER_TOOL], "tool_choice": "required"} if failure in TOOL_FAILURES else {}
    messages = [{"role": "user", "content": prompt(failure)}]
    with Gateway(answers={QUESTION: ANSWER}) as gw:
        kw = {**_kw(gw), "model": f"openai/{model}", "messages": messages, **tools}

        def create() -> str:
            message = (done := litellm.completion(**kw)).choices[0].message
            calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
            reasoning = getattr(message, "reasoning_content", None)
            return answer_text(message.content, done.choices[0].finish_reason, reasoning=reasoning, calls=calls)

        def stream() -> str:
            text, finish, reasoning, calls = "", None, "", {}
            for chunk in litellm.completion(**kw, stream=True):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    reasoning += getattr(choice.delta, "reasoning_content", None) or ""
                    for call in choice.delta.tool_calls or []:
                        name, arguments = calls.get(call.index, ("", ""))
                        calls[call.index] = (
                            name + (call.function.name or ""),
                            arguments + (call.function.arguments or ""),
                        )
                    finish = choice.finish_reason or finish
            return answer_text(text, finish, reasoning=reasoning, calls=calls.values())

        parts = (
            (until_refused(create),)
            if failure == "tpm"
            else (f"completion: {outcome(create)}", f"stream: {outcome(stream)}")
        ) + (f"{len(gw.calls(model=model))} requests",)
    seen("; ".join(parts))
    assert parts == expected
