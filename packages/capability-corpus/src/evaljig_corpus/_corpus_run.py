"""Run the corpus against a target and render the per-capability pass/fail table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evaljig_corpus._conformance import CONFORMANCE_CHECKS
from evaljig_corpus._errors import ConformanceError
from evaljig_corpus._fixture import CapabilityFixture
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target

#: Model names the corpus uses as placeholders; a run substitutes the models under test for them.
CHAT_PLACEHOLDER = "gpt-stub"
EMBED_PLACEHOLDER = "embed-stub"


@dataclass(frozen=True, slots=True)
class FixtureVerdict:
    """Whether one fixture passed against the target, and why (a secret-free one-line detail)."""

    fixture: CapabilityFixture
    passed: bool
    detail: str


def with_models(fixture: CapabilityFixture, models: Mapping[str, str]) -> dict[str, object]:
    """The fixture's kwargs with placeholder model names replaced; other names (deliberate mistakes) stay."""
    kwargs = fixture.kwargs()
    model = kwargs.get("model")
    if isinstance(model, str) and model in models:
        kwargs["model"] = models[model]
    return kwargs


def run_fixture(
    target: Target,
    fixture: CapabilityFixture,
    models: Mapping[str, str],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    redact: Iterable[str] = (),
) -> FixtureVerdict:
    """Valid fixtures must pass the helper; invalid ones must raise a ConformanceError matching their pattern.

    Any other exception is this fixture's failure, not the run's end; ``redact`` values never reach ``detail``.
    """
    passed, detail = _verdict(target, fixture, models, timeout)
    return FixtureVerdict(fixture, passed, redacted(detail, redact))


def _verdict(target: Target, fixture: CapabilityFixture, models: Mapping[str, str], timeout: float) -> tuple[bool, str]:
    helper = CONFORMANCE_CHECKS[fixture.capability]
    try:
        helper(target, **with_models(fixture, models), timeout=timeout)
    except ConformanceError as exc:
        if fixture.is_valid:
            return False, str(exc)
        if fixture.matches(str(exc)):
            return True, "rejected as expected"
        return False, f"rejected, but not with /{fixture.expected_error_pattern}/: {exc}"
    except Exception as exc:  # a target (or a check) broke in a way no check names: report it, run the rest
        return False, f"{fixture.capability}: unexpected {type(exc).__name__}: {exc}"
    if fixture.is_valid:
        return True, "ok"
    return False, f"accepted; expected an error matching /{fixture.expected_error_pattern}/"


def run_corpus(
    target: Target,
    fixtures: Iterable[CapabilityFixture],
    models: Mapping[str, str],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    redact: Iterable[str] = (),
) -> list[FixtureVerdict]:
    secrets = tuple(redact)
    return [run_fixture(target, fixture, models, timeout, redact=secrets) for fixture in fixtures]


def redacted(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret replaced by ``***``, also in the escaped form reprs show (httpx prints b'...')."""
    for secret in secrets:
        for form in dict.fromkeys((secret, repr(secret)[1:-1])):
            if form:
                text = text.replace(form, "***")
    return text


def render_table(outcomes: list[FixtureVerdict], *, redact: Iterable[str] = ()) -> str:
    """A Markdown table per capability, then one line per failed fixture; ``redact`` values never appear."""
    capabilities = list(dict.fromkeys(o.fixture.capability for o in outcomes))
    lines = ["| capability | fixtures | passed | failed | result |", "|---|---:|---:|---:|---|"]
    for capability in capabilities:
        mine = [o for o in outcomes if o.fixture.capability == capability]
        passed = sum(o.passed for o in mine)
        result = "PASS" if passed == len(mine) else "FAIL"
        lines.append(f"| {capability} | {len(mine)} | {passed} | {len(mine) - passed} | {result} |")
    failures = [o for o in outcomes if not o.passed]
    if failures:
        lines += ["", "failures:"]
        lines += [f"- {o.fixture.id}: {o.detail}" for o in failures]
    return redacted("\n".join(lines) + "\n", redact)
