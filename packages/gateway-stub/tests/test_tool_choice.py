"""Tools at every turn, as agent loops drive them through the real openai SDK."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import jsonschema
import openai
import pydantic
import pytest

from evaljig_gateway._validation import MAX_SCHEMA_DEPTH


def tool(name: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    schema = parameters or {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


WEATHER, TIME, FINAL = tool("get_weather"), tool("get_time"), tool("final_result")
ASK = {"role": "user", "content": "What is the weather like in Paris?"}


def after_one_call(client: openai.OpenAI, tools: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    """The conversation after the assistant called a tool and the tool answered."""
    first = client.chat.completions.create(model="gpt-stub", messages=[ASK], tools=tools, **kwargs)  # type: ignore[arg-type]
    message = first.choices[0].message
    assert message.tool_calls
    results = [{"role": "tool", "tool_call_id": c.id, "content": "sunny"} for c in message.tool_calls]
    return [ASK, message.model_dump(exclude_none=True), *results]


def called(reply: Any) -> list[str]:
    return [c.function.name for c in reply.choices[0].message.tool_calls or []]


def test_required_after_a_tool_message_still_calls(client: openai.OpenAI) -> None:
    history = after_one_call(client, [WEATHER])
    reply = client.chat.completions.create(model="gpt-stub", messages=history, tools=[WEATHER], tool_choice="required")  # type: ignore[arg-type]
    assert reply.choices[0].finish_reason == "tool_calls"
    assert called(reply) == ["get_weather"]


def test_named_tool_after_a_tool_message(client: openai.OpenAI) -> None:
    history = after_one_call(client, [WEATHER, TIME])
    choice = {"type": "function", "function": {"name": "get_time"}}
    reply = client.chat.completions.create(
        model="gpt-stub", messages=history, tools=[WEATHER, TIME], tool_choice=choice
    )  # type: ignore[arg-type]
    assert called(reply) == ["get_time"]


def test_auto_after_a_tool_result_answers_text_and_none_never_calls(client: openai.OpenAI) -> None:
    history = after_one_call(client, [WEATHER])
    reply = client.chat.completions.create(model="gpt-stub", messages=history, tools=[WEATHER], tool_choice="auto")  # type: ignore[arg-type]
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.content
    never = client.chat.completions.create(model="gpt-stub", messages=[ASK], tools=[WEATHER], tool_choice="none")  # type: ignore[arg-type]
    assert never.choices[0].message.tool_calls is None
    assert never.choices[0].message.content


def test_a_required_loop_moves_on_to_its_final_tool(client: openai.OpenAI) -> None:
    """pydantic-ai's shape: a user tool plus an output tool, ``required`` every turn; it must finish."""
    tools = [WEATHER, FINAL]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris please"}]
    for _turn in range(3):
        reply = client.chat.completions.create(model="gpt-stub", messages=messages, tools=tools, tool_choice="required")  # type: ignore[arg-type]
        message = reply.choices[0].message
        assert message.tool_calls
        if called(reply) == ["final_result"]:
            return
        messages += [message.model_dump(exclude_none=True)]
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "sunny"} for c in message.tool_calls]
    pytest.fail("the loop never reached final_result")


def test_the_tool_named_in_the_last_user_message_wins(client: openai.OpenAI) -> None:
    for name in ("get_weather", "get_time", "final_result"):
        ask = {"role": "user", "content": f"Please use {name.replace('_', ' ')} now."}
        reply = client.chat.completions.create(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME, FINAL])  # type: ignore[arg-type]
        assert called(reply) == [name]


def test_without_a_name_the_choice_follows_the_conversation_not_the_first_tool(client: openai.OpenAI) -> None:
    chosen = set()
    for i in range(12):
        ask = {"role": "user", "content": f"Question number {i}?"}
        first = client.chat.completions.create(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME, FINAL])  # type: ignore[arg-type]
        again = client.chat.completions.create(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME, FINAL])  # type: ignore[arg-type]
        assert called(first) == called(again)
        chosen.update(called(first))
    assert len(chosen) > 1


def test_parallel_tool_calls(client: openai.OpenAI) -> None:
    ask = {"role": "user", "content": "Call get_time and get_weather for Paris."}
    both = client.chat.completions.create(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME])  # type: ignore[arg-type]
    assert called(both) == ["get_time", "get_weather"]  # in the order the message names them
    assert len({c.id for c in both.choices[0].message.tool_calls or []}) == 2
    one = client.chat.completions.create(
        model="gpt-stub",
        messages=[ask],
        tools=[WEATHER, TIME],  # type: ignore[list-item]
        parallel_tool_calls=False,
    )
    assert called(one) == ["get_time"]


def test_parallel_calls_stream_as_the_plain_answer(client: openai.OpenAI) -> None:
    ask = {"role": "user", "content": "Call get_time and get_weather for Paris."}
    plain = client.chat.completions.create(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME])  # type: ignore[arg-type]
    with client.chat.completions.stream(model="gpt-stub", messages=[ask], tools=[WEATHER, TIME]) as stream:  # type: ignore[arg-type]
        final = stream.get_final_completion()
    got = [(c.function.name, c.function.arguments) for c in final.choices[0].message.tool_calls or []]  # type: ignore[union-attr]
    want = [(c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls or []]  # type: ignore[union-attr]
    assert got == want  # ids differ: like every id, they come from the request's bytes
    assert final.choices[0].finish_reason == "tool_calls"


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(min_length=2)
    email: str = pydantic.Field(json_schema_extra={"format": "email"})


class Team(pydantic.BaseModel):
    """Nested models in tool arguments: ``$defs``/``$ref`` as pydantic writes them."""

    lead: Person
    members: list[Person] = pydantic.Field(min_length=2)
    parent: Team | None = None


def test_nested_pydantic_tool_arguments_parse(client: openai.OpenAI) -> None:
    reply = client.chat.completions.parse(
        model="gpt-stub",
        messages=[{"role": "user", "content": "Create the team."}],
        tools=[openai.pydantic_function_tool(Team)],
    )
    [call] = reply.choices[0].message.tool_calls or []
    assert isinstance(call.function.parsed_arguments, Team)
    assert len(call.function.parsed_arguments.members) >= 2
    assert call.function.parsed_arguments.lead.name != ""
    plain = {"type": "function", "function": {"name": "team", "parameters": Team.model_json_schema()}}
    reply2 = client.chat.completions.create(model="gpt-stub", messages=[ASK], tools=[plain])  # type: ignore[list-item]
    jsonschema.validate(
        json.loads(reply2.choices[0].message.tool_calls[0].function.arguments), Team.model_json_schema()
    )  # type: ignore[index,union-attr]


def test_allowed_tools_narrow_the_choice(http: httpx.Client) -> None:
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "get_time"}}]},
    }
    body = {"model": "gpt-stub", "messages": [ASK], "tools": [WEATHER, TIME], "tool_choice": choice}
    reply = http.post("/v1/chat/completions", json=body).json()
    assert [c["function"]["name"] for c in reply["choices"][0]["message"]["tool_calls"]] == ["get_time"]


# --------------------------------------------------------------------------- legacy functions and custom tools


FUNCTIONS = [WEATHER["function"], TIME["function"]]


def test_legacy_functions_answer_function_call(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=[ASK], functions=FUNCTIONS)  # type: ignore[arg-type]
    choice = reply.choices[0]
    assert choice.finish_reason == "function_call"
    assert choice.message.tool_calls is None
    assert choice.message.function_call is not None
    assert choice.message.function_call.name in {"get_weather", "get_time"}
    assert set(json.loads(choice.message.function_call.arguments)) == {"city"}
    forced = client.chat.completions.create(
        model="gpt-stub",
        messages=[ASK],
        functions=FUNCTIONS,  # type: ignore[arg-type]
        function_call={"name": "get_time"},
    )
    assert forced.choices[0].message.function_call.name == "get_time"  # type: ignore[union-attr]
    history = [
        ASK,
        forced.choices[0].message.model_dump(exclude_none=True),
        {"role": "function", "name": "get_time", "content": "noon"},
    ]
    done = client.chat.completions.create(model="gpt-stub", messages=history, functions=FUNCTIONS)  # type: ignore[arg-type]
    assert done.choices[0].finish_reason == "stop"


def test_legacy_function_call_streams(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(model="gpt-stub", messages=[ASK], functions=FUNCTIONS, stream=True))  # type: ignore[arg-type]
    name = "".join(
        c.choices[0].delta.function_call.name or "" for c in chunks if c.choices and c.choices[0].delta.function_call
    )
    args = "".join(
        c.choices[0].delta.function_call.arguments or ""
        for c in chunks
        if c.choices and c.choices[0].delta.function_call
    )
    assert name in {"get_weather", "get_time"}
    assert set(json.loads(args)) == {"city"}
    assert chunks[-1].choices[0].finish_reason == "function_call"


def test_custom_tools_get_custom_calls(client: openai.OpenAI) -> None:
    custom = {"type": "custom", "custom": {"name": "run_sql", "description": "Run SQL"}}
    grammar = {
        "type": "custom",
        "custom": {
            "name": "zip_code",
            "format": {"type": "grammar", "grammar": {"syntax": "regex", "definition": r"\d{5}"}},
        },
    }
    reply = client.chat.completions.create(
        model="gpt-stub", messages=[{"role": "user", "content": "use run_sql"}], tools=[custom, grammar]
    )  # type: ignore[list-item]
    [call] = reply.choices[0].message.tool_calls or []
    assert call.type == "custom"
    assert call.custom.name == "run_sql"  # type: ignore[union-attr]
    assert call.custom.input  # type: ignore[union-attr]
    zipped = client.chat.completions.create(
        model="gpt-stub",
        messages=[ASK],
        tools=[custom, grammar],  # type: ignore[list-item]
        tool_choice={"type": "custom", "custom": {"name": "zip_code"}},
    )
    [zip_call] = zipped.choices[0].message.tool_calls or []
    assert re.fullmatch(r"\d{5}", zip_call.custom.input)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tools": [WEATHER], "functions": FUNCTIONS}, "functions"),
        ({"functions": [{"description": "no name"}]}, "functions[0].name"),
        ({"functions": FUNCTIONS, "function_call": {"name": "nope"}}, "function_call"),
        ({"tools": [WEATHER, {"type": "custom", "custom": {}}]}, "tools[1].custom.name"),
        (
            {"tools": [{"type": "custom", "custom": {"name": "x", "format": {"type": "grammar"}}}]},
            "tools[0].custom.format",
        ),
        ({"tools": [WEATHER], "tool_choice": {"type": "custom", "custom": {"name": "get_weather"}}}, "tool_choice"),
        ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
        (
            {
                "tools": [WEATHER],
                "tool_choice": {
                    "type": "allowed_tools",
                    "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "x"}}]},
                },
            },
            "tool_choice.allowed_tools.tools[0]",
        ),
        (
            {
                "tools": [
                    tool("f", {"type": "object", "properties": {"n": {"type": "integer", "minimum": 9, "maximum": 1}}})
                ]
            },
            "tools[0].function.parameters.properties.n",  # the place in the schema
        ),
        (  # a legacy function's schema: its own place, not tools[0]'s
            {"functions": [{"name": "f"}, {"name": "g", "parameters": {"type": "object", "properties": []}}]},
            "functions[1].parameters.properties",
        ),
    ],
)
def test_bad_tool_requests_are_a_400_naming_the_field(http: httpx.Client, extra: dict[str, Any], param: str) -> None:
    response = http.post("/v1/chat/completions", json={"model": "gpt-stub", "messages": [ASK], **extra})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


def _nested_object(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels - 1):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_a_tool_schema_nested_too_deep_is_a_400_on_chat_and_responses(http: httpx.Client, path: str) -> None:
    """The flat Responses tool shape is checked by the same code as chat's nested one."""
    too_deep = _nested_object(MAX_SCHEMA_DEPTH + 8)
    if path == "/v1/responses":
        body = {"input": "hi", "tools": [{"type": "function", "name": "f", "parameters": too_deep}]}
        where = "tools[0].parameters"
    else:
        body = {"messages": [ASK], "tools": [{"type": "function", "function": {"name": "f", "parameters": too_deep}}]}
        where = "tools[0].function.parameters"
    response = http.post(path, json={"model": "gpt-stub", "tool_choice": "required", **body})
    assert response.status_code == 400, response.text[:300]
    error = response.json()["error"]
    assert error["param"] == where + ".properties.a" * MAX_SCHEMA_DEPTH
    assert f"nests deeper than {MAX_SCHEMA_DEPTH} levels" in error["message"]
