"""``tpm-<n>``: the tokens each model name has spent in the current rate-limit window.

A real server's window is a minute of wall clock; a test must never wait on one, so this window
ends only when a test says so: ``reset`` (a new journal epoch starts a new window) or
``advance`` (``POST /_gateway/advance``, ``Gateway.advance()``), which ends it and keeps the journal.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

#: Model names whose spending is kept; the oldest is forgotten past this (its window starts afresh).
MAX_MODELS = 4096


class TokenWindows:
    """Tokens spent per model name in the current window; safe to use from any thread."""

    def __init__(self) -> None:
        self._spent: OrderedDict[str, int] = OrderedDict()
        self._epoch = 0
        self._lock = threading.Lock()

    def spent(self, model: str, epoch: int) -> int:
        """Tokens ``model`` spent in the window; a journal ``epoch`` other than the last one seen starts a new one."""
        with self._lock:
            self._follow(epoch)
            return self._spent.get(model, 0)

    def spend(self, model: str, tokens: int, epoch: int) -> None:
        with self._lock:
            self._follow(epoch)
            self._spent[model] = self._spent.get(model, 0) + tokens
            self._spent.move_to_end(model)
            while len(self._spent) > MAX_MODELS:
                self._spent.popitem(last=False)

    def advance(self) -> None:
        """End the current window: every model name starts again at 0 tokens."""
        with self._lock:
            self._spent.clear()

    def _follow(self, epoch: int) -> None:
        if epoch != self._epoch:
            self._epoch = epoch
            self._spent.clear()
