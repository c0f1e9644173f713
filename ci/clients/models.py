"""The pydantic models every client is asked for: a flat one and a nested one (``$defs``/``$ref`` on the wire)."""

from __future__ import annotations

import pydantic

#: The one question every test's answer key knows, and its answer.
QUESTION = "What is the capital of France?"
ANSWER = "Paris"


class City(pydantic.BaseModel):
    name: str = pydantic.Field(min_length=1)
    population: int = pydantic.Field(ge=0)


class Address(pydantic.BaseModel):
    street: str = pydantic.Field(min_length=1)
    city: City


class Person(pydantic.BaseModel):
    """Nested twice: a client sends ``$defs`` for Address and City and ``$ref``s to them."""

    name: str = pydantic.Field(min_length=1)
    email: str = pydantic.Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]+$")
    home: Address
    previous: list[Address] = pydantic.Field(min_length=1)


def check_person(person: object) -> None:
    """A parsed Person is really one: validated again, nested parts present and non-empty."""
    assert isinstance(person, Person), type(person)
    Person.model_validate(person.model_dump())
    assert person.home.city.name
    assert person.previous
