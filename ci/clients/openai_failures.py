"""What the openai SDK makes of each failure, streamed and not: shared by the 3.x (httpx2) and 2.x (httpx) venvs.

``chat.completions.create`` with the SDK's defaults (two retries, honouring ``retry-after-ms``);
the parts give the non-streamed result, then the streamed one, then how many requests the gateway
saw (the SDK's own retries show there).
"""

from __future__ import annotations

from typing import Any

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY
from .failures import MODELS, TOOL_FAILURES, WEATHER_TOOL, answer_text, outcome, prompt, until_refused
from .models import ANSWER, QUESTION

#: What openai 3.x (on httpx2) does with each gateway failure.
EXPECTED = {
    "reasoning": (
        "create: returns content 'Paris', finish_reason stop, reasoning kept",
        "stream: returns content 'Paris', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "think-empty": (
        "create: returns content '', finish_reason stop, reasoning kept",
        "stream: returns content '', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "length": (
        "create: returns content '', finish_reason length",
        "stream: returns content '', finish_reason length",
        "2 requests",
    ),
    "cut": (
        "create: raises json.JSONDecodeError",
        "stream: returns content 'D', finish_reason None",
        "2 requests",
    ),
    "drop": (
        "create: raises openai.APIConnectionError",
        "stream: raises openai.APIConnectionError",
        "4 requests",
    ),
    "garble": (
        "create: raises json.JSONDecodeError",
        "stream: raises json.JSONDecodeError",
        "2 requests",
    ),
    "context": (
        "create: raises openai.BadRequestError",
        "stream: raises openai.BadRequestError",
        "2 requests",
    ),
    "tpm": (
        "call 6 raises openai.RateLimitError",
        "8 requests",
    ),
    "bad-tool-args": (
        'create: returns content null, finish_reason tool_calls, tool get_weather({"city")',
        "stream: returns content '', finish_reason tool_calls, tool get_weather({\"city\")",
        "2 requests",
    ),
    "unknown-tool": (
        'create: returns content null, finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        'stream: returns content \'\', finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        "2 requests",
    ),
}

#: openai 2.x (on httpx) does the same, but for a dropped stream: httpx's own error reaches the caller unwrapped.
EXPECTED_2 = {
    **EXPECTED,
    "drop": (
        "create: raises openai.APIConnectionError",
        "stream: raises httpx.RemoteProtocolError",
        "4 requests",
    ),
}


def observe(sdk: Any, failure: str) -> tuple[str, ...]:
    """``("create: ...", "stream: ...", "N requests")``; for ``tpm``, the call refused and the requests."""
    model = MODELS[failure]
    tools = {"tools": [WEATHER_TOOL], "tool_choice": "required"} if failure in TOOL_FAILURES else {}
    messages = [{"role": "user", "content": prompt(failure)}]
    with Gateway(answers={QUESTION: ANSWER}) as gw, sdk.OpenAI(base_url=gw.base_url, api_key=FAKE_KEY) as client:

        def create() -> str:
            done = client.chat.completions.create(model=model, messages=messages, **tools)
            message = done.choices[0].message
            calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
            reasoning = (message.model_extra or {}).get("reasoning_content")
            return answer_text(message.content, done.choices[0].finish_reason, reasoning=reasoning, calls=calls)

        def stream() -> str:
            text, finish, reasoning, calls = "", None, "", {}
            for chunk in client.chat.completions.create(model=model, messages=messages, stream=True, **tools):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
                    for call in choice.delta.tool_calls or []:
                        name, arguments = calls.get(call.index, ("", ""))
                        calls[call.index] = (
                            name + (call.function.name or ""),
                            arguments + (call.function.arguments or ""),
                        )
                    finish = choice.finish_reason or finish
            return answer_text(text, finish, reasoning=reasoning, calls=calls.values())

        if failure == "tpm":
            return until_refused(create), f"{len(gw.calls(model=model))} requests"
        return f"create: {outcome(create)}", f"stream: {outcome(stream)}", f"{len(gw.calls(model=model))} requests"
