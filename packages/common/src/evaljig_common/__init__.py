"""evaljig-common: the few contracts every evaljig package shares, each defined once.

Importing it needs the standard library only, so the noxfile can import it from nox's own venv: the
strict YAML reader (PyYAML) is imported on first use.
"""

from typing import TYPE_CHECKING

from evaljig_common._atomic import (
    TMP_SUFFIX,
    exchange_paths,
    open_atomic,
    open_atomic_binary,
    write_bytes_atomic,
    write_text_atomic,
)
from evaljig_common._cli import one_line_errors
from evaljig_common._contracts import CANONICAL_BASE_URL, SYSTEM_FINGERPRINT
from evaljig_common._errors import EvaljigError
from evaljig_common._json import MAX_INT_DIGITS, MAX_JSON_DEPTH, StrictJSONError, depth_exceeds, loads_strict
from evaljig_common._lazy import lazy_exports
from evaljig_common._lock import exclusive_lock
from evaljig_common._offline import OFFLINE_ENV
from evaljig_common._records import RECORD_KEY, valid_text
from evaljig_common._runid import claim_run, explicit_run_id, run_id, safe_segment
from evaljig_common._secrets import (
    CREDENTIAL_PARAMS,
    SecretHit,
    credential_params,
    credential_values,
    find_secret,
    joined_streams,
    secret_spellings,
)

if TYPE_CHECKING:  # imported on first use (lazy_exports): it needs PyYAML
    from evaljig_common._yaml import MAX_YAML_DEPTH, StrictYAMLError, loads_yaml_strict

__all__ = [
    "CANONICAL_BASE_URL",
    "CREDENTIAL_PARAMS",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "MAX_YAML_DEPTH",
    "OFFLINE_ENV",
    "RECORD_KEY",
    "SYSTEM_FINGERPRINT",
    "TMP_SUFFIX",
    "EvaljigError",
    "SecretHit",
    "StrictJSONError",
    "StrictYAMLError",
    "claim_run",
    "credential_params",
    "credential_values",
    "depth_exceeds",
    "exchange_paths",
    "exclusive_lock",
    "explicit_run_id",
    "find_secret",
    "joined_streams",
    "lazy_exports",
    "loads_strict",
    "loads_yaml_strict",
    "one_line_errors",
    "open_atomic",
    "open_atomic_binary",
    "run_id",
    "safe_segment",
    "secret_spellings",
    "valid_text",
    "write_bytes_atomic",
    "write_text_atomic",
]

__getattr__ = lazy_exports(__name__, __file__, ("MAX_YAML_DEPTH", "StrictYAMLError", "loads_yaml_strict"))
