"""evaljig-gateway: a fast, deterministic, local OpenAI-compatible gateway for tests.

Behaviour is chosen by the model name (see ``BEHAVIOUR_TABLE``), content is a pure function
of the request, and every call is journaled. Start it with :class:`Gateway` (a context
manager), the ``gateway`` pytest fixture (registered by installing this package) or the
``evaljig-gateway`` command; :class:`GatewayApp` (with its :class:`Journal`) is the ASGI app
for your own server. With ``Gateway(tape=Record(path, upstream=url))`` it records a real server's
answers to a vcrpy-compatible cassette, and with ``Gateway(tape=Replay(path))`` it answers from one.
Every journal entry is timed, so :func:`assert_resilient` (and ``evaljig-gateway verdict``) can
judge how a client retried.

The ``gateway`` fixture's plugin loads into every pytest session, so each public name is imported on
first use (``evaljig_common.lazy_exports``): a session that never starts a gateway loads no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaljig_common import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time lazy_exports imports each name from the module named here
    from evaljig_gateway._answers import AnswerKeyError, load_answer_key
    from evaljig_gateway._app import GatewayApp
    from evaljig_gateway._behaviours import (
        BEHAVIOUR_TABLE,
        Behaviour,
        base_model,
        behaviour_for,
        behaviour_table_markdown,
    )
    from evaljig_gateway._cassette import (
        DEFAULT_IGNORED_FIELDS,
        DEFAULT_MAX_CASSETTE_BYTES,
        CassetteError,
        Exchange,
        load_cassette,
        match_key,
        write_cassette,
    )
    from evaljig_gateway._content import AnswerKey
    from evaljig_gateway._journal import Call, Journal
    from evaljig_gateway._limits import Limits
    from evaljig_gateway._miss import CassetteMiss, first_miss
    from evaljig_gateway._server import Gateway, GatewayStartError
    from evaljig_gateway._tape import Record, Replay
    from evaljig_gateway._verdict import CHECKS, Finding, Verdict, VerdictInputError, assert_resilient, judge

__all__ = [
    "BEHAVIOUR_TABLE",
    "CHECKS",
    "DEFAULT_IGNORED_FIELDS",
    "DEFAULT_MAX_CASSETTE_BYTES",
    "AnswerKey",
    "AnswerKeyError",
    "Behaviour",
    "Call",
    "CassetteError",
    "CassetteMiss",
    "Exchange",
    "Finding",
    "Gateway",
    "GatewayApp",
    "GatewayStartError",
    "Journal",
    "Limits",
    "Record",
    "Replay",
    "Verdict",
    "VerdictInputError",
    "assert_resilient",
    "base_model",
    "behaviour_for",
    "behaviour_table_markdown",
    "first_miss",
    "judge",
    "load_answer_key",
    "load_cassette",
    "match_key",
    "write_cassette",
]

__getattr__ = lazy_exports(__name__, __file__, __all__)
