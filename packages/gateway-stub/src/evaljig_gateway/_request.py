"""What every endpoint handler takes (a parsed ``Request``) and the small pieces they share.

Imports no endpoint module, so the endpoints (``_chat``, ``_completions``, ``_embeddings``,
``_responses``, ``_models``) import only downward and never each other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from evaljig_common import SYSTEM_FINGERPRINT
from evaljig_gateway import _content
from evaljig_gateway._limits import Limits, check_product


@dataclass(slots=True)
class Request:
    """A parsed, validated-as-object request body with its bytes and model."""

    raw: bytes
    body: dict[str, Any]
    model: str
    answers: _content.AnswerKey
    limits: Limits

    @property
    def digest(self) -> str:
        """SHA-256 of the body, in hex: what ids and ``created`` are made from."""
        return hashlib.sha256(self.raw).hexdigest()


def answer(known: str | None, prompt: str, index: int) -> str:
    """The answer key's answer (looked up once per prompt) or the prompt-derived one for choice ``index``."""
    return known if known is not None else _content.default_answer(prompt, index)


def check_prompt(req: Request, chars: int, param: str) -> None:
    """400 naming ``param`` when the prompt text is longer than ``limits.max_prompt_chars``, before it is tokenised."""
    check_product(param, "prompt characters", chars, req.limits.max_prompt_chars, "--max-prompt-chars")


def check_tokens(req: Request, n: int, max_tokens: int | None, param: str) -> None:
    """400 naming ``param`` when ``n`` x ``max_tokens`` is over ``limits.max_output_tokens``."""
    if max_tokens is not None:
        what = f"n x {param} ({n} x {max_tokens})"
        check_product(param, what, n * max_tokens, req.limits.max_output_tokens, "--max-output-tokens")


def head_of(req: Request, digest: str, id_prefix: str, kind: str) -> dict[str, Any]:
    """The fields a chat or legacy completions answer (and each of its chunks) begins with; ``digest`` is
    ``req.digest``, which the caller may need again."""
    return {
        "id": f"{id_prefix}{digest[:24]}",
        "object": kind,
        "created": _content.created_from(digest),
        "model": req.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }


def usage_of(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int = 0) -> dict[str, Any]:
    """``usage`` as OpenAI sends it for chat and completions, with the token details (``completion_tokens``
    includes the ``reasoning_tokens``, as OpenAI counts them)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
