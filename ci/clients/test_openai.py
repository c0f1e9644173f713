"""The openai SDK: chat, streaming, ``parse()`` (flat and nested), a tool loop, Responses, embeddings."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from evaljig_gateway import Gateway

from . import openai_failures
from .conftest import FAKE_KEY, client
from .failures import cells
from .models import ANSWER, QUESTION, City, Person, check_person

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture
def sdk() -> Any:
    return client("openai")


@pytest.fixture
def openai_client(sdk: Any) -> Iterator[Any]:
    with Gateway(answers={QUESTION: ANSWER}) as gw, sdk.OpenAI(base_url=gw.base_url, api_key=FAKE_KEY) as c:
        yield c


@pytest.mark.cell("openai", "chat")
def test_chat(openai_client: Any) -> None:
    done = openai_client.chat.completions.create(model="gpt-stub", messages=[{"role": "user", "content": QUESTION}])
    assert done.choices[0].message.content == ANSWER
    assert done.usage.prompt_tokens > 0


@pytest.mark.cell("openai", "stream")
def test_stream(openai_client: Any) -> None:
    chunks = list(
        openai_client.chat.completions.create(
            model="gpt-stub",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == ANSWER
    assert chunks[-1].usage is not None


@pytest.mark.cell("openai", "structured")
def test_parse(openai_client: Any) -> None:
    done = openai_client.chat.completions.parse(
        model="gpt-stub", messages=[{"role": "user", "content": "Describe a city."}], response_format=City
    )
    city = done.choices[0].message.parsed
    assert isinstance(city, City)
    assert city.population >= 0


@pytest.mark.cell("openai", "nested")
def test_parse_nested(openai_client: Any) -> None:
    done = openai_client.chat.completions.parse(
        model="gpt-stub", messages=[{"role": "user", "content": "Describe a person."}], response_format=Person
    )
    check_person(done.choices[0].message.parsed)


@pytest.mark.cell("openai", "tools")
def test_tool_then_text(openai_client: Any) -> None:
    """A named tool first, its result back, then ``auto`` answers text; ``required`` after it calls a tool again."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Use get_weather for Paris."}]
    first = openai_client.chat.completions.create(model="gpt-stub", messages=messages, tools=[WEATHER_TOOL])
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments)["city"], str)
    messages += [first.choices[0].message.model_dump(exclude_none=True)]
    messages += [{"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
    then = openai_client.chat.completions.create(model="gpt-stub", messages=messages, tools=[WEATHER_TOOL])
    assert then.choices[0].message.tool_calls is None
    assert then.choices[0].message.content
    again = openai_client.chat.completions.create(
        model="gpt-stub", messages=messages, tools=[WEATHER_TOOL], tool_choice="required"
    )
    assert again.choices[0].message.tool_calls[0].function.name == "get_weather"


@pytest.mark.cell("openai", "responses")
def test_responses_tools(openai_client: Any) -> None:
    tool = {"type": "function", **WEATHER_TOOL["function"]}
    first = openai_client.responses.create(model="gpt-stub", input="Use get_weather for Paris.", tools=[tool])
    calls = [item for item in first.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["get_weather"]
    then = openai_client.responses.create(
        model="gpt-stub",
        input=[
            {"role": "user", "content": "Use get_weather for Paris."},
            {
                "type": "function_call",
                "call_id": calls[0].call_id,
                "name": "get_weather",
                "arguments": calls[0].arguments,
            },
            {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"},
        ],
        tools=[tool],
    )
    assert then.output_text


@pytest.mark.cell("openai", "responses")
def test_responses_stream(openai_client: Any) -> None:
    with openai_client.responses.stream(model="gpt-stub", input=QUESTION) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created"
    assert "response.output_text.delta" in kinds
    assert kinds[-1] == "response.completed"
    assert final.output_text == ANSWER


@pytest.mark.cell("openai", "responses")
def test_responses_parse(openai_client: Any) -> None:
    done = openai_client.responses.parse(model="gpt-stub", input="Describe a person.", text_format=Person)
    check_person(done.output_parsed)


@pytest.mark.cell("openai", "embeddings")
def test_embeddings(openai_client: Any) -> None:
    done = openai_client.embeddings.create(model="text-embedding-stub", input=["a", "b"])  # base64 on the wire
    first, second = (d.embedding for d in done.data)
    assert len(first) == 1536
    assert abs(sum(x * x for x in first) - 1) < 1e-6
    assert first != second


@pytest.mark.parametrize(("failure", "expected"), cells("openai", openai_failures.EXPECTED))
def test_failure(sdk: Any, failure: str, expected: tuple[str, ...], seen: Callable[[str], None]) -> None:
    """What the SDK raises or returns for each gateway failure (ci/clients/openai_failures.py)."""
    parts = openai_failures.observe(sdk, failure)
    seen("; ".join(parts))
    assert parts == expected
