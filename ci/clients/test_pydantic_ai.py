"""pydantic-ai's Agent: text, streaming, each output mode (tool, native, prompted), nested, a tool loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .failures import MODELS, TOOL_FAILURES, TPM_CALLS, cells, exception_name, prompt
from .models import ANSWER, QUESTION, City, Person, check_person

#: What an Agent run does with each gateway failure.
EXPECTED = {
    "reasoning": (
        "run: returns output 'Paris', reasoning kept",
        "run_stream: returns output 'Paris', reasoning kept",
        "2 requests",
    ),
    "think-empty": (
        "run: raises pydantic_ai.UnexpectedModelBehavior",
        "run_stream: raises pydantic_ai.UnexpectedModelBehavior",
        "4 requests",
    ),
    "length": (
        "run: raises pydantic_ai.OutputTokenLimitExceeded",
        "run_stream: raises pydantic_ai.OutputTokenLimitExceeded",
        "2 requests",
    ),
    "cut": (
        "run: raises pydantic_ai.ModelAPIError",
        "run_stream: returns output 'D'",
        "2 requests",
    ),
    "drop": (
        "run: raises pydantic_ai.ModelConnectionError",
        "run_stream: raises pydantic_ai.ModelConnectionError",
        "4 requests",
    ),
    "garble": (
        "run: raises pydantic_ai.ModelAPIError",
        "run_stream: raises pydantic_ai.ModelAPIError",
        "2 requests",
    ),
    "context": (
        "run: raises pydantic_ai.ModelContextWindowExceededError",
        "run_stream: raises pydantic_ai.ModelContextWindowExceededError",
        "2 requests",
    ),
    "tpm": (
        "run 6 raises pydantic_ai.ModelRateLimitError",
        "8 requests",
    ),
    "bad-tool-args": (
        "run: returns output 'Deterministic answer: ro...'",
        "run_stream: returns output 'Deterministic answer: ro...'",
        "4 requests",
    ),
    "unknown-tool": (
        "run: returns output 'Deterministic answer: fo...'",
        "run_stream: returns output 'Deterministic answer: fo...'",
        "4 requests",
    ),
}


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


def _agent_outcome(gw: Gateway, model_name: str, failure: str, *, stream: bool) -> str:
    """One agent run against a failure model: its output (and whether it kept reasoning), or what it raised."""
    openai = client("openai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ThinkingPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    async def run() -> str:
        async with openai.AsyncOpenAI(base_url=gw.base_url, api_key=FAKE_KEY) as http:
            model = OpenAIChatModel(model_name, provider=OpenAIProvider(openai_client=http))
            agent = Agent(model, tools=[get_weather] if failure in TOOL_FAILURES else [])
            if stream:
                async with agent.run_stream(prompt(failure)) as result:
                    output = "".join([piece async for piece in result.stream_text(delta=True)])
                    messages = result.all_messages()
            else:
                done = await agent.run(prompt(failure))
                output, messages = done.output, done.all_messages()
        thinking = any(isinstance(p, ThinkingPart) for m in messages for p in getattr(m, "parts", []))
        shown = repr(output if len(output) <= 24 else output[:24] + "...")
        return f"output {shown}" + (", reasoning kept" if thinking else "")

    try:
        return f"returns {asyncio.run(run())}"
    except Exception as exc:
        return f"raises {exception_name(exc)}"


@pytest.mark.parametrize(("failure", "expected"), cells("pydantic-ai", EXPECTED))
def test_failure(pydantic_ai: Any, failure: str, expected: tuple[str, ...], seen: Callable[[str], None]) -> None:
    """``Agent.run`` and ``run_stream`` with their defaults: the output or the exception, and the requests sent."""
    model = MODELS[failure]
    with Gateway(answers={QUESTION: ANSWER}) as gw:
        if failure == "tpm":
            runs = [_agent_outcome(gw, model, failure, stream=False) for _ in range(TPM_CALLS)]
            refused = next((n for n, r in enumerate(runs, 1) if r.startswith("raises")), None)
            parts: tuple[str, ...] = (f"run {refused} {runs[refused - 1]}" if refused else "every run answered",)
        else:
            parts = (
                f"run: {_agent_outcome(gw, model, failure, stream=False)}",
                f"run_stream: {_agent_outcome(gw, model, failure, stream=True)}",
            )
        parts += (f"{len(gw.calls(model=model))} requests",)
    seen("; ".join(parts))
    assert parts == expected
