"""Judge a client's retries from the gateway's timed journal.

The gateway sees every attempt a client makes, and when: the lighteval CLI in a subprocess
included, where no in-process mock can look. From those facts alone this module tells whether
the client waited as long as Retry-After asked, retried a request no retry can fix, retried
without end, retried without backing off, or moved on from an answer the gateway cut short.

Attempts are grouped into *logical requests* by a fingerprint of the request (method, path and
the body as canonical JSON): a retry resends the same body. An attempt counts as a retry of an
earlier same-fingerprint attempt only when that one failed *and had ended* before it started
(a client cannot retry a failure it has not seen), so identical requests sent side by side are
separate requests, not a storm. SDK retry headers (``x-stainless-retry-count``) are not used:
they count only the SDK's own retries and read 0 on every attempt of an application's loop,
which is the loop worth judging. No body field is left out of the fingerprint: the OpenAI SDK,
litellm and lighteval all resend the identical body.

The check names follow llmock's ``assert_resilient``; see docs/gateway.md for each definition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import orjson

from evaljig_common import EvaljigError, loads_strict
from evaljig_gateway._journal import Call

#: Every check, in the order findings are listed.
CHECKS: tuple[str, ...] = (
    "retry_after_ignored",
    "retried_non_retryable",
    "retry_storm",
    "no_backoff",
    "truncated_stream_accepted",
)
#: Attempts allowed for one logical request before it is a ``retry_storm`` (llmock's cap too).
DEFAULT_MAX_ATTEMPTS = 10
#: Client errors a retry may fix: timeout, conflict, rate limit, and 499 (the client itself gave up).
RETRYABLE_4XX = frozenset({408, 409, 429, 499})
#: An earlier retry than Retry-After asked by at most this much is forgiven (clock granularity).
SLACK_NS = 10_000_000
#: A ``retry_storm`` message lists this many calls (``Finding.calls`` holds them all).
SHOWN_SEQS = 12
#: Waits shorter than this are "no delay at all" for ``no_backoff``.
NO_DELAY_NS = 50_000_000
#: A wait must grow by more than this factor over the previous one to count as backing off.
GROWTH = 1.1


class VerdictInputError(EvaljigError, ValueError):
    """A journal the verdict cannot read; the message names the file (or source), entry, field and reason."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One journal entry, as the verdict sees it."""

    seq: int
    method: str
    path: str
    model: str | None
    status: int
    started_ns: int
    ended_ns: int
    retry_after_ms: int | None
    cut: bool
    fingerprint: str

    @property
    def failed(self) -> bool:
        """Anything a client should not take as a whole answer: an error status or a cut one."""
        return self.status >= 400 or self.cut


@dataclass(frozen=True, slots=True)
class Finding:
    """One fault of the client's, naming the journal entries (``seq``) that show it."""

    check: str
    message: str
    calls: tuple[Attempt, ...]

    def as_dict(self, origin_ns: int) -> dict[str, Any]:
        return {
            "check": self.check,
            "message": self.message,
            "calls": [
                {
                    "seq": a.seq,
                    "status": a.status,
                    "model": a.model,
                    "started_ms": _ms(a.started_ns - origin_ns),
                    "ended_ms": _ms(a.ended_ns - origin_ns),
                    "retry_after_ms": a.retry_after_ms,
                    "cut": a.cut,
                }
                for a in self.calls
            ],
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """The findings over a journal, and how many logical requests and attempts it held."""

    requests: int
    attempts: int
    findings: tuple[Finding, ...]
    origin_ns: int
    """The first attempt's start: times in reports are relative to it."""

    @property
    def passed(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "requests": self.requests,
            "attempts": self.attempts,
            "findings": [f.as_dict(self.origin_ns) for f in self.findings],
        }

    def render(self) -> str:
        """The verdict for people: one line per finding, then the calls it names (times from the first call)."""
        head = f"verdict: {self.requests} logical request(s), {self.attempts} attempt(s), "
        if self.passed:
            return head + "no findings\n"
        lines = [head + f"{len(self.findings)} finding(s)"]
        for finding in self.findings:
            lines.append(f"{finding.check}: {finding.message}")
            for a in finding.calls:
                asked = f", retry-after {a.retry_after_ms} ms" if a.retry_after_ms is not None else ""
                cut = ", cut" if a.cut else ""
                lines.append(
                    f"  #{a.seq} {a.method} {a.path} model={a.model} status {a.status}{asked}{cut}"
                    f" at +{_ms(a.started_ns - self.origin_ns):.1f} ms .. +{_ms(a.ended_ns - self.origin_ns):.1f} ms"
                )
        return "\n".join(lines) + "\n"


class _HasCalls(Protocol):
    def calls(self) -> list[Call]: ...


#: What ``judge`` and ``assert_resilient`` take: a ``Gateway`` or ``Journal`` (anything with ``calls()``),
#: ``Call`` objects, or journal entries as parsed JSON (``GET /_gateway/calls``, a ``--journal`` file).
JournalLike = _HasCalls | Iterable[Call] | Iterable[Mapping[str, Any]] | Iterable[Attempt]


def judge(
    journal: JournalLike,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    checks: Iterable[str] | None = None,
    source: str = "journal",
) -> Verdict:
    """Run ``checks`` (default: all of ``CHECKS``) over ``journal``; ``source`` names it in input errors."""
    chosen = _chosen(checks)
    if max_attempts < 1:
        raise VerdictInputError(f"max_attempts must be at least 1, got {max_attempts}")
    attempts = sorted(_attempts(journal, source), key=lambda a: (a.started_ns, a.seq))
    groups = group_attempts(attempts)
    findings: list[Finding] = []
    for group in groups:
        if "retry_after_ignored" in chosen:
            findings += _retry_after_ignored(group)
        if "retried_non_retryable" in chosen:
            findings += _retried_non_retryable(group)
        if "retry_storm" in chosen:
            findings += _retry_storm(group, max_attempts)
        if "no_backoff" in chosen:
            findings += _no_backoff(group)
    if "truncated_stream_accepted" in chosen:
        findings += _truncated_stream_accepted(groups, attempts)
    findings.sort(key=lambda f: (CHECKS.index(f.check), [a.seq for a in f.calls]))
    origin = attempts[0].started_ns if attempts else 0
    return Verdict(len(groups), len(attempts), tuple(findings), origin)


def assert_resilient(
    journal: JournalLike,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    checks: Iterable[str] | None = None,
) -> Verdict:
    """Fail (``AssertionError`` listing every finding and its calls) unless the client's retries were sound.

    ``journal`` is the ``gateway`` fixture, a ``Gateway``, its ``calls()`` or parsed journal entries;
    ``checks`` picks some of ``CHECKS`` (default: all). Returns the passing verdict.
    """
    verdict = judge(journal, max_attempts=max_attempts, checks=checks)
    if not verdict.passed:
        raise AssertionError("the client's retries are not resilient:\n" + verdict.render())
    return verdict


def group_attempts(attempts: Sequence[Attempt]) -> list[tuple[Attempt, ...]]:
    """Attempts (in start order) grouped into logical requests, each group in start order.

    An attempt joins the group of a same-fingerprint request whose latest attempt failed and had
    ended by the time it started (the one that ended last, when several did); else it starts a group.
    """
    groups: list[list[Attempt]] = []
    open_failures: dict[str, list[list[Attempt]]] = {}
    for attempt in attempts:
        pool = open_failures.setdefault(attempt.fingerprint, [])
        seen = [g for g in pool if g[-1].ended_ns <= attempt.started_ns]
        if seen:
            group = max(seen, key=lambda g: (g[-1].ended_ns, g[-1].seq))
            group.append(attempt)
            pool[:] = [g for g in pool if g is not group]  # by identity: it is no longer open
        else:
            group = [attempt]
            groups.append(group)
        if attempt.failed:
            pool.append(group)
    return [tuple(g) for g in groups]


def fingerprint(method: str, path: str, body: Any) -> str:
    """A short hash of the request: method, path and the body as canonical JSON (sorted keys, compact)."""
    try:
        canonical = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        canonical = repr(body).encode()
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + canonical).hexdigest()[:16]


def load_journal_file(path: Path) -> list[Attempt]:
    """The entries of a ``--journal`` JSONL file; an unreadable line is a ``VerdictInputError`` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise VerdictInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise VerdictInputError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    entries: list[Attempt] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = loads_strict(line)
        except ValueError as exc:
            raise VerdictInputError(f"{path}: line {number}: not JSON ({exc})") from exc
        if not isinstance(entry, dict):
            raise VerdictInputError(f"{path}: line {number}: expected a journal entry (a JSON object)")
        entries.append(_from_entry(entry, f"{path}: line {number}"))
    return entries


# -- reading a journal ------------------------------------------------------------------------------------


def _chosen(checks: Iterable[str] | None) -> frozenset[str]:
    if checks is None:
        return frozenset(CHECKS)
    chosen = frozenset([checks] if isinstance(checks, str) else checks)
    unknown = sorted(chosen - set(CHECKS))
    if unknown:
        raise VerdictInputError(f"unknown check(s) {', '.join(unknown)}; the checks are: {', '.join(CHECKS)}")
    return chosen


def _attempts(journal: JournalLike, source: str) -> Iterator[Attempt]:
    entries: Iterable[Any] = journal.calls() if hasattr(journal, "calls") else journal
    for index, entry in enumerate(entries, start=1):
        if isinstance(entry, Attempt):
            yield entry
        elif isinstance(entry, Call):
            yield _from_call(entry, source)
        elif isinstance(entry, Mapping):
            yield _from_entry(entry, f"{source}: entry {index}")
        else:
            raise VerdictInputError(f"{source}: entry {index}: expected a journal entry, got {type(entry).__name__}")


def _from_call(call: Call, source: str) -> Attempt:
    if call.ended_ns == 0:
        raise VerdictInputError(f"{source}: call #{call.seq} is not timed (ended_ns 0); only a gateway's journal is")
    return Attempt(
        call.seq,
        call.method,
        call.path,
        call.model,
        call.status,
        call.started_ns,
        call.ended_ns,
        call.retry_after_ms,
        call.cut,
        fingerprint(call.method, call.path, call.body),
    )


def _from_entry(entry: Mapping[str, Any], where: str) -> Attempt:
    def field(name: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
        if name not in entry:
            if optional:
                return None
            hint = " (a journal from before timed entries?)" if name.endswith("_ns") else ""
            raise VerdictInputError(f"{where}: field '{name}' is missing{hint}")
        value = entry[name]
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise VerdictInputError(f"{where}: field '{name}' has the wrong type ({type(value).__name__})")
        return value

    seq, method, path = field("seq", int), field("method", str), field("path", str)
    status, started, ended = field("status", int), field("started_ns", int), field("ended_ns", int)
    if ended < started:
        raise VerdictInputError(f"{where}: field 'ended_ns' is before 'started_ns'")
    model = field("model", str, optional=True)
    retry_after = field("retry_after_ms", int, optional=True)
    cut = bool(field("cut", bool, optional=True))
    body = entry.get("body")
    return Attempt(seq, method, path, model, status, started, ended, retry_after, cut, fingerprint(method, path, body))


# -- the checks -------------------------------------------------------------------------------------------


def _pairs(group: Sequence[Attempt]) -> Iterator[tuple[Attempt, Attempt]]:
    return pairwise(group)


def _retry_after_ignored(group: Sequence[Attempt]) -> list[Finding]:
    found = []
    for before, after in _pairs(group):
        wanted = before.retry_after_ms
        if wanted is None:
            continue
        waited = after.started_ns - before.ended_ns
        if waited + SLACK_NS < wanted * 1_000_000:
            found.append(
                Finding(
                    "retry_after_ignored",
                    f"#{after.seq} retried #{before.seq} (status {before.status}) after {_ms(waited):.1f} ms; "
                    f"Retry-After asked for {wanted} ms",
                    (before, after),
                )
            )
    return found


def _retried_non_retryable(group: Sequence[Attempt]) -> list[Finding]:
    for before, after in _pairs(group):
        if 400 <= before.status < 500 and before.status not in RETRYABLE_4XX:
            return [
                Finding(
                    "retried_non_retryable",
                    f"#{after.seq} retried #{before.seq}, a {before.status}: the same request fails the same way",
                    (before, after),
                )
            ]
    return []


def _retry_storm(group: Sequence[Attempt], max_attempts: int) -> list[Finding]:
    if len(group) <= max_attempts:
        return []
    seqs = ", ".join(f"#{a.seq}" for a in group[:SHOWN_SEQS]) + (", …" if len(group) > SHOWN_SEQS else "")
    return [Finding("retry_storm", f"{len(group)} attempts at one request (cap {max_attempts}): {seqs}", tuple(group))]


def _no_backoff(group: Sequence[Attempt]) -> list[Finding]:
    waits = [after.started_ns - before.ended_ns for before, after in _pairs(group) if before.retry_after_ms is None]
    if len(waits) < 2:
        return []
    if all(w < NO_DELAY_NS for w in waits):
        how = "with no delay"
    elif all(later <= earlier * GROWTH for earlier, later in pairwise(waits)):
        how = "at a constant or shrinking interval"
    else:
        return []
    shown = ", ".join(f"{_ms(w):.1f}" for w in waits)
    return [
        Finding(
            "no_backoff",
            f"retried {len(waits)} times {how} (waits {shown} ms) after failures that gave no Retry-After",
            tuple(group),
        )
    ]


def _truncated_stream_accepted(groups: Sequence[Sequence[Attempt]], attempts: Sequence[Attempt]) -> list[Finding]:
    """A request whose last attempt was cut, followed by a different request and never retried."""
    found = []
    for group in groups:
        last = group[-1]
        if not last.cut:
            continue
        nxt = next((a for a in attempts if a.fingerprint != last.fingerprint and a.started_ns >= last.ended_ns), None)
        if nxt is not None:
            found.append(
                Finding(
                    "truncated_stream_accepted",
                    f"#{last.seq}'s answer was cut short and never retried; the client went on to #{nxt.seq}",
                    (last, nxt),
                )
            )
    return found


def _ms(ns: int) -> float:
    return round(ns / 1_000_000, 3)
