"""Which writing systems and tricky Unicode features a text really contains (by code point, not by claim)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

ZWJ = "\u200d"
_NAME_PREFIXES = {
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari",
    "CJK UNIFIED IDEOGRAPH": "Han",
    "HIRAGANA": "Hiragana",
    "KATAKANA": "Katakana",
    "HANGUL": "Hangul",
    "THAI": "Thai",
}
_EMOJI_RANGES = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF))


def char_script(char: str) -> str | None:
    """The script of a letter-like character, ``Emoji`` for pictographs, ``None`` for everything else."""
    if any(low <= ord(char) <= high for low, high in _EMOJI_RANGES):
        return "Emoji"
    if unicodedata.category(char)[0] not in "LM":
        return None
    name = unicodedata.name(char, "")
    return next((script for prefix, script in _NAME_PREFIXES.items() if name.startswith(prefix)), None)


def scripts_in(texts: Iterable[str]) -> set[str]:
    return {script for text in texts for char in text if (script := char_script(char)) is not None}


def features_in(texts: Iterable[str]) -> set[str]:
    """``combining-marks`` (a decomposed sequence NFC would change) and ``zwj-sequences``."""
    found = set()
    for text in texts:
        if unicodedata.normalize("NFC", text) != text:
            found.add("combining-marks")
        if ZWJ in text:
            found.add("zwj-sequences")
    return found
