"""instructor over the openai SDK: each mode (TOOLS, JSON_SCHEMA, JSON), nested models, and validation retries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .models import City, Person, check_person


@pytest.fixture
def instructor() -> Any:
    return client("instructor")


@pytest.fixture
def openai_client() -> Iterator[Any]:
    openai = client("openai")
    with Gateway() as gw, openai.OpenAI(base_url=gw.base_url, api_key=FAKE_KEY, max_retries=0) as c:
        yield c


def _ask(instructor: Any, openai_client: Any, mode: str, model: type[Any], prompt: str, **kw: Any) -> Any:
    patched = instructor.from_openai(openai_client, mode=getattr(instructor.Mode, mode))
    return patched.chat.completions.create(
        model="gpt-stub", response_model=model, messages=[{"role": "user", "content": prompt}], **kw
    )


@pytest.mark.cell("instructor", "structured")
@pytest.mark.parametrize("mode", ["TOOLS", "JSON_SCHEMA", "JSON"])
def test_modes(instructor: Any, openai_client: Any, mode: str) -> None:
    assert isinstance(_ask(instructor, openai_client, mode, City, "Describe a city."), City)


@pytest.mark.cell("instructor", "nested")
@pytest.mark.parametrize("mode", ["TOOLS", "JSON_SCHEMA", "JSON"])
def test_nested(instructor: Any, openai_client: Any, mode: str) -> None:
    check_person(_ask(instructor, openai_client, mode, Person, "Describe a person."))


class Rejected(pydantic.BaseModel):
    """A city whose first answer is rejected, so instructor retries with the error in the conversation."""

    name: str
    population: int

    @pydantic.field_validator("name")
    @classmethod
    def _not_first(cls, value: str, info: pydantic.ValidationInfo) -> str:
        seen = _ATTEMPTS.setdefault("names", [])
        seen.append(value)
        if len(seen) == 1:
            raise ValueError("try again with another name")
        return value


_ATTEMPTS: dict[str, list[str]] = {}


@pytest.mark.cell("instructor", "tools")
def test_retry_finishes(instructor: Any, openai_client: Any) -> None:
    """A rejected first answer: instructor sends the error back (a tool result in TOOLS mode) and the retry finishes."""
    _ATTEMPTS.clear()
    city = _ask(instructor, openai_client, "TOOLS", Rejected, "Describe a city.", max_retries=2)
    assert isinstance(city, Rejected)
    assert len(_ATTEMPTS["names"]) == 2
