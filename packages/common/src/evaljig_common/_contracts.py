"""Values that more than one package writes into files or answers, so each must be spelled once.

A cassette recorded by the gateway and one recorded by the fixture builder replay through the
same provider fixture only if both rewrite the live URL to the same placeholder; a client that
compares ``system_fingerprint`` across the gateway's endpoints must see one value.
"""

from __future__ import annotations

#: Every recorded URI starts with this; the provider fixtures use it as their placeholder ``base_url``.
CANONICAL_BASE_URL = "http://127.0.0.1:8000/v1"
#: The ``system_fingerprint`` of every gateway answer (chat, completions, responses).
SYSTEM_FINGERPRINT = "fp_evaljig"
