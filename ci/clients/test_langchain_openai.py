"""langchain-openai's ChatOpenAI: invoke, stream, ``with_structured_output`` (default method), nested, tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .models import ANSWER, QUESTION, City, Person, check_person


@pytest.fixture
def chat() -> Iterator[Any]:
    langchain_openai = client("langchain_openai")
    with Gateway(answers={QUESTION: ANSWER}) as gw:
        yield langchain_openai.ChatOpenAI(model="gpt-stub", base_url=gw.base_url, api_key=FAKE_KEY, max_retries=0)


@pytest.mark.cell("langchain-openai", "chat")
def test_invoke(chat: Any) -> None:
    assert chat.invoke(QUESTION).content == ANSWER


@pytest.mark.cell("langchain-openai", "stream")
def test_stream(chat: Any) -> None:
    assert "".join(str(chunk.content) for chunk in chat.stream(QUESTION)) == ANSWER


@pytest.mark.cell("langchain-openai", "structured")
def test_with_structured_output(chat: Any) -> None:
    assert isinstance(chat.with_structured_output(City).invoke("Describe a city."), City)


@pytest.mark.cell("langchain-openai", "nested")
def test_with_structured_output_nested(chat: Any) -> None:
    check_person(chat.with_structured_output(Person).invoke("Describe a person."))


@pytest.mark.cell("langchain-openai", "tools")
def test_bound_tool_then_text(chat: Any) -> None:
    messages = client("langchain_core.messages")

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    bound = chat.bind_tools([get_weather])
    history: list[Any] = [messages.HumanMessage("Use get_weather for Paris.")]
    first = bound.invoke(history)
    assert [c["name"] for c in first.tool_calls] == ["get_weather"]
    assert isinstance(first.tool_calls[0]["args"]["city"], str)
    history += [first, messages.ToolMessage("sunny", tool_call_id=first.tool_calls[0]["id"])]
    then = bound.invoke(history)
    assert not then.tool_calls
    assert then.content
