"""pydantic-ai's Agent: text, streaming, each output mode (tool, native, prompted), nested, a tool loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .models import ANSWER, QUESTION, City, Person, check_person


@pytest.fixture
def pydantic_ai() -> Any:
    return client("pydantic_ai")


def _run(prompt: str, output_type: Any = str, tools: list[Any] | None = None, *, stream: bool = False) -> Any:
    """One agent run on a fresh keyed gateway, with an openai client this test closes."""
    openai = client("openai")
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def run(gw: Gateway) -> Any:
        async with openai.AsyncOpenAI(base_url=gw.base_url, api_key=FAKE_KEY) as http:
            model = OpenAIChatModel("gpt-stub", provider=OpenAIProvider(openai_client=http))
            agent = Agent(model, output_type=output_type, tools=tools or [])
            if stream:
                async with agent.run_stream(prompt) as result:
                    pieces = [piece async for piece in result.stream_text(delta=True)]
                    return "".join(pieces)
            return (await agent.run(prompt)).output

    with Gateway(answers={QUESTION: ANSWER}) as gw:
        return asyncio.run(run(gw))


@pytest.mark.cell("pydantic-ai", "chat")
def test_text(pydantic_ai: Any) -> None:
    assert _run(QUESTION) == ANSWER


@pytest.mark.cell("pydantic-ai", "stream")
def test_stream_text(pydantic_ai: Any) -> None:
    assert _run(QUESTION, stream=True) == ANSWER


@pytest.mark.cell("pydantic-ai", "structured")
@pytest.mark.parametrize("mode", ["ToolOutput", "NativeOutput", "PromptedOutput"])
def test_output_modes(pydantic_ai: Any, mode: str) -> None:
    output = _run("Describe a city.", getattr(pydantic_ai, mode)(City))
    assert isinstance(output, City)


@pytest.mark.cell("pydantic-ai", "nested")
def test_nested_output(pydantic_ai: Any) -> None:
    check_person(_run("Describe a person.", pydantic_ai.NativeOutput(Person)))


@pytest.mark.cell("pydantic-ai", "tools")
def test_tool_then_output_tool(pydantic_ai: Any) -> None:
    """A user tool, then the output tool: the loop finishes (tool_choice required after a tool result)."""
    seen: list[str] = []

    def get_population(city: str) -> int:
        """Population of a city."""
        seen.append(city)
        return 2_100_000

    assert isinstance(_run("Use get_population for Paris, then answer.", City, [get_population]), City)
    assert len(seen) == 1
