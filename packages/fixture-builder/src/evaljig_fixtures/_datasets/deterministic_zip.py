"""Zip bytes that depend only on the members' names and bytes, so a rebuild is byte-for-byte identical."""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Mapping

FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
"""The earliest time a zip can store; no clock or file mtime leaks in."""
FILE_MODE = 0o644
COMPRESS_TYPE = zipfile.ZIP_DEFLATED
COMPRESS_LEVEL = 9
_UNIX = 3


def deterministic_zip(members: Mapping[str, bytes]) -> bytes:
    """Sorted entries, fixed timestamp and permissions, one compression setting, no extra fields or comment."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.create_system = _UNIX
            info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
            info.compress_type = COMPRESS_TYPE
            archive.writestr(info, members[name], compress_type=COMPRESS_TYPE, compresslevel=COMPRESS_LEVEL)
    return buffer.getvalue()
