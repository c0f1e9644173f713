"""evaljig-gateway: a fast, deterministic, local OpenAI-compatible gateway for tests.

Behaviour is chosen by the model name (see ``behaviours.BEHAVIOUR_TABLE``), content is a
pure function of the request, and every call is journaled.
"""

from evaljig_gateway.answers import AnswerKeyError, load_answer_key
from evaljig_gateway.app import DEFAULT_MAX_BODY_BYTES, DEFAULT_RETRY_AFTER_MS, GatewayApp
from evaljig_gateway.behaviours import BEHAVIOUR_TABLE, Behaviour, behaviour_for, behaviour_table_markdown
from evaljig_gateway.content import AnswerKey
from evaljig_gateway.journal import Call, Journal
from evaljig_gateway.limits import Limits
from evaljig_gateway.server import Gateway, GatewayStartError

__all__ = [
    "BEHAVIOUR_TABLE",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RETRY_AFTER_MS",
    "AnswerKey",
    "AnswerKeyError",
    "Behaviour",
    "Call",
    "Gateway",
    "GatewayApp",
    "GatewayStartError",
    "Journal",
    "Limits",
    "behaviour_for",
    "behaviour_table_markdown",
    "load_answer_key",
]
