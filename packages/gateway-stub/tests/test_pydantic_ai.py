"""pydantic-ai's agent loop (a user tool plus its output tool, ``tool_choice: required``) finishes on the gateway."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pydantic
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY


class City(pydantic.BaseModel):
    name: str
    population: int = pydantic.Field(ge=0)


def _run(gateway: Gateway, prompt: str, output_type: Any, tool: Any = None) -> Any:
    """One agent run with a client this test closes (pydantic-ai's default one would leak its sockets)."""

    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=gateway.base_url, api_key=FAKE_KEY) as client:
            model = OpenAIChatModel("gpt-stub", provider=OpenAIProvider(openai_client=client))
            agent = Agent(model, output_type=output_type, tools=[tool] if tool else [])
            return (await agent.run(prompt)).output

    return asyncio.run(run())


def test_tool_then_output_tool(gateway: Gateway) -> None:
    seen: list[str] = []

    def get_population(city: str) -> int:
        """Population of a city."""
        seen.append(city)
        return 2_100_000

    output = _run(gateway, "Use get_population for Paris, then answer.", City, get_population)
    assert isinstance(output, City)
    assert len(seen) == 1  # the named tool first, then the output tool: two requests, no endless loop
    assert len(gateway.calls(path="/v1/chat/completions")) == 2


def test_native_output(gateway: Gateway) -> None:
    assert isinstance(_run(gateway, "Tell me about Paris.", NativeOutput(City)), City)
