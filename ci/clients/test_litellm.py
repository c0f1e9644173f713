"""litellm's ``completion``: chat, streaming, ``response_format=Model`` (flat and nested), tools, embeddings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .models import ANSWER, QUESTION, City, Person, check_person


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
