"""The data shape of one eval case, shared by case files, code-defined cases and reports."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

#: A dataframe as JSON records (one dict per row): what case files can carry without pandas.
Records = list[dict[str, Any]]

#: Case ids end up in pytest ids and in report file names, so they stay path- and shell-safe.
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"


class FunctionCall(BaseModel):
    """The call a tool is asked to make: a function name and its keyword arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class EvalCase(BaseModel):
    """One eval case; unknown keys are rejected so a typo in a case file is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=CASE_ID_PATTERN)
    description: str = ""
    tool_id: str = Field(min_length=1)
    function_call: FunctionCall
    expectations: dict[str, Any] = Field(default_factory=dict)
    artifact_mocks: dict[str, Records] = Field(default_factory=dict)
    """Named mock dataframes (as records) that a patched artifact loader serves to the tool."""

    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """Where the case was defined (``file`` or ``module:Class``), for error messages; never serialized."""
        return self._source

    def __eq__(self, other: object) -> bool:
        """Equal when the data is equal: where a case was defined is not part of it."""
        if not isinstance(other, EvalCase):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # dict fields: cases are not hashable

    def with_source(self, source: str) -> EvalCase:
        """Remember where this case came from (kept out of ``model_dump``)."""
        self._source = source
        return self
