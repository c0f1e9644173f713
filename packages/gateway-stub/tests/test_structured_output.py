"""``response_format``: the real openai SDK's ``parse()`` and litellm get JSON they can parse into the model."""

from __future__ import annotations

import datetime
import json
from typing import Literal

import httpx
import jsonschema
import litellm
import openai
import pydantic
import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY

MESSAGES = [{"role": "user", "content": "Describe a customer."}]


class Address(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    street: str
    zip: str = pydantic.Field(pattern=r"^\d{5}$")


class Order(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    sku: str
    quantity: int = pydantic.Field(ge=1, le=5)
    status: Literal["open", "shipped"]


class Customer(pydantic.BaseModel):
    """A nested, pydantic-made schema with ``$defs``/``$ref``, bounds, a pattern and an optional union."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: str = pydantic.Field(min_length=3)
    since: datetime.date
    address: Address
    orders: list[Order] = pydantic.Field(min_length=1, max_length=3)
    referrer: Customer | None


def test_parse_returns_a_parsed_instance(client: openai.OpenAI) -> None:
    reply = client.chat.completions.parse(model="gpt-stub", messages=MESSAGES, response_format=Customer)  # type: ignore[arg-type]
    parsed = reply.choices[0].message.parsed
    assert isinstance(parsed, Customer)
    assert 1 <= len(parsed.orders) <= 3
    jsonschema.validate(json.loads(reply.choices[0].message.content or ""), Customer.model_json_schema())


def test_json_object_answers_an_object(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, response_format={"type": "json_object"})
    assert isinstance(json.loads(reply.choices[0].message.content or ""), dict)


def test_same_request_same_bytes_and_choices_differ(http: httpx.Client) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "c", "schema": Customer.model_json_schema(), "strict": True}}
    body = {"model": "gpt-stub", "messages": MESSAGES, "response_format": fmt, "n": 2}
    first, second = http.post("/v1/chat/completions", json=body), http.post("/v1/chat/completions", json=body)
    assert first.content == second.content
    contents = [c["message"]["content"] for c in first.json()["choices"]]
    assert contents[0] != contents[1]
    for content in contents:
        Customer.model_validate_json(content)


def test_stream_carries_the_same_json(client: openai.OpenAI) -> None:
    with client.chat.completions.stream(model="gpt-stub", messages=MESSAGES, response_format=Customer) as stream:  # type: ignore[arg-type]
        final = stream.get_final_completion()
    plain = client.chat.completions.parse(model="gpt-stub", messages=MESSAGES, response_format=Customer)  # type: ignore[arg-type]
    assert final.choices[0].message.parsed == plain.choices[0].message.parsed


def test_the_answer_key_pins_the_json(client: openai.OpenAI, gateway: Gateway) -> None:
    pinned = {"sku": "A-1", "quantity": 2, "status": "open"}
    gateway.set_answers({"Describe a customer.": json.dumps(pinned)})
    reply = client.chat.completions.parse(model="gpt-stub", messages=MESSAGES, response_format=Order)  # type: ignore[arg-type]
    assert reply.choices[0].message.parsed == Order(**pinned)  # type: ignore[arg-type]
    gateway.set_answers({"Describe a customer.": "B"})
    keyed = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, response_format={"type": "json_object"})
    assert json.loads(keyed.choices[0].message.content or "") == {"answer": "B"}


def test_litellm_response_format_model(gateway: Gateway) -> None:
    reply = litellm.completion(
        model="openai/gpt-stub",
        messages=MESSAGES,
        api_base=gateway.base_url,
        api_key=FAKE_KEY,
        response_format=Customer,
    )
    Customer.model_validate_json(reply.choices[0].message.content)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("response_format", "param"),
    [
        ({"type": "yaml"}, "response_format.type"),
        ({"type": "json_schema"}, "response_format.json_schema"),
        ({"type": "json_schema", "json_schema": {"schema": {}}}, "response_format.json_schema.name"),
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": []}}, "response_format.json_schema.schema"),
        (
            {
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": {"type": "integer", "minimum": 3, "maximum": 1}},
            },
            "response_format.json_schema.schema",
        ),
    ],
)
def test_bad_response_format_is_a_400_naming_the_field(
    http: httpx.Client, response_format: dict[str, object], param: str
) -> None:
    response = http.post(
        "/v1/chat/completions", json={"model": "gpt-stub", "messages": MESSAGES, "response_format": response_format}
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


def _prompted(schema_text: str, user: str = "Describe a customer.") -> list[dict[str, str]]:
    """Messages as instructor's Mode.JSON writes them: the schema indented inside the system message."""
    system = f"\n    Answer in json matching this json_schema:\n\n\n    {schema_text}\n\n    Return an instance\n"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def test_json_object_follows_a_schema_in_the_system_message(client: openai.OpenAI) -> None:
    """pydantic-ai's PromptedOutput and instructor's Mode.JSON ask for json_object and put the schema in the prompt."""
    schema = Customer.model_json_schema()
    messages = _prompted(json.dumps(schema, indent=2))
    reply = client.chat.completions.create(model="gpt-stub", messages=messages, response_format={"type": "json_object"})  # type: ignore[arg-type]
    content = json.loads(reply.choices[0].message.content or "")
    jsonschema.validate(content, schema)  # nested: $defs/$ref, bounds, the pattern
    Customer.model_validate(content)


def test_a_prompted_schema_is_only_read_from_system_messages(client: openai.OpenAI) -> None:
    schema = json.dumps(Order.model_json_schema())
    as_user = [{"role": "user", "content": f"Describe a customer.\n{schema}"}]
    reply = client.chat.completions.create(model="gpt-stub", messages=as_user, response_format={"type": "json_object"})  # type: ignore[arg-type]
    assert set(json.loads(reply.choices[0].message.content or "")) == {"answer"}
    plain = client.chat.completions.create(model="gpt-stub", messages=_prompted(schema))  # type: ignore[arg-type]
    assert not (plain.choices[0].message.content or "").startswith("{")  # no response_format: text, as before


def test_the_answer_key_wins_over_a_prompted_schema(client: openai.OpenAI, gateway: Gateway) -> None:
    pinned = {"sku": "A-1", "quantity": 2, "status": "open"}
    gateway.set_answers({"Describe a customer.": json.dumps(pinned)})
    messages = _prompted(json.dumps(Customer.model_json_schema()))
    reply = client.chat.completions.create(model="gpt-stub", messages=messages, response_format={"type": "json_object"})  # type: ignore[arg-type]
    assert json.loads(reply.choices[0].message.content or "") == pinned


@pytest.mark.parametrize(
    "schema_text",
    [
        '{"type": "object", "properties": {"a": {"type": "string", "pattern": "\\\\p{L}"}}, "required": ["a"]}',
        '{"properties": ' * 3000 + "{",  # deep and unclosed: not JSON, given up on, never a 500
        "{not json at all}",
        json.dumps(Order.model_json_schema()) + " " * 70_000,  # a system message over 64 KiB is not searched
    ],
    ids=["unanswerable", "deep-unclosed", "not-json", "too-long"],
)
def test_a_prompted_schema_the_gateway_cannot_use_gives_any_object(http: httpx.Client, schema_text: str) -> None:
    body = {"model": "gpt-stub", "messages": _prompted(schema_text), "response_format": {"type": "json_object"}}
    reply = http.post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    assert set(json.loads(reply.json()["choices"][0]["message"]["content"])) == {"answer"}
