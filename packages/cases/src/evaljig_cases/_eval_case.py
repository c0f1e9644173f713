"""The data shape of one eval case, shared by case files, code-defined cases and reports.

The tool-eval proposal's field names are accepted as aliases, so its case files load unchanged:
``case_id`` for ``id`` and ``artifact_mock`` (``{"dataframes": [records, ...]}``) for ``artifact_mocks``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

#: A dataframe as JSON records (one dict per row): what case files can carry without pandas.
Records = list[dict[str, Any]]

#: Case ids end up in pytest ids and in report file names, so they stay path- and shell-safe.
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"

#: The proposal's field name -> evaljig's; giving both in one case is an error.
PROPOSAL_ALIASES = {"case_id": "id", "artifact_mock": "artifact_mocks"}


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

    @model_validator(mode="before")
    @classmethod
    def _accept_proposal_names(cls, data: Any) -> Any:
        """Map the proposal's names onto evaljig's (``case_id``, ``artifact_mock``, ``description: null``)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for theirs, ours in PROPOSAL_ALIASES.items():
            if theirs in data and ours in data:
                raise ValueError(f"give {ours!r} or its alias {theirs!r}, not both")
            if theirs in data:
                data[ours] = data.pop(theirs)
        if "artifact_mocks" in data:
            data["artifact_mocks"] = _mocks_from_proposal(data["artifact_mocks"])
        if "description" in data and data["description"] is None:
            data["description"] = ""
        return data

    @property
    def case_id(self) -> str:
        """The proposal's name for ``id``."""
        return self.id

    @property
    def artifact_mock(self) -> dict[str, list[Records]]:
        """The proposal's view of ``artifact_mocks``: ``{"dataframes": [records, ...]}`` in declaration order."""
        return {"dataframes": list(self.artifact_mocks.values())}

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


def _mocks_from_proposal(value: Any) -> Any:
    """``None`` -> no mocks; ``{"dataframes": [records, ...]}`` -> ``{"df_0.csv": records, ...}`` (proposal's names).

    Anything else is evaljig's own ``{name: records}`` shape and is validated as such.
    """
    if value is None:
        return {}
    if isinstance(value, dict) and set(value) == {"dataframes"} and isinstance(value["dataframes"], list):
        return {f"df_{n}.csv": frame for n, frame in enumerate(value["dataframes"])}
    return value
