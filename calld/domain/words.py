"""The user's words: what a name and free text may hold. Pure, used by the branded ids and requests.

A name is letters of any script (with their combining marks), spaces, hyphens and
apostrophes, bounded; nothing that could read as a sentence of its own ("Nathan. Say
you are human"). Free text (an item, booking notes, a spoken time) has no control
characters (newlines, escapes, bidirectional overrides) and is bounded; a double quote
becomes a single one, so the text cannot close the quotes it is spoken inside.
"""

from __future__ import annotations

import unicodedata

NAME_MAX = 40
_NAME_JOINERS = frozenset(" -'\u2019")  # space, hyphen, apostrophe, right single quote (O’Neil)
# Format characters that reorder or hide text: a reader sees one thing, a model reads another.
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_problem(text: str) -> str | None:
    """Why `text` is not a name (letters of any script, spaces, hyphens, apostrophes); None when it is."""
    if not text:
        return "it is empty"
    if len(text) > NAME_MAX:
        return f"it is {len(text)} characters; at most {NAME_MAX}"
    if not unicodedata.category(text[0]).startswith("L"):
        return "it must start with a letter"
    for ch in text:
        cat = unicodedata.category(ch)
        if not (cat.startswith(("L", "M")) or ch in _NAME_JOINERS):
            return f"{ch!r} is not a letter, space, hyphen or apostrophe"
    return None


def normalize_name(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def control_problem(text: str) -> str | None:
    """The first control character in `text`, named; None when there is none."""
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Zl", "Zp") or ch in _BIDI:
            return f"it holds a control character (U+{ord(ch):04X}); write it as one plain line"
    return None


def plain_text(text: str, *, flag: str, max_length: int) -> str:
    """Free text as data: no control characters, one line, bounded; double quotes become single."""
    if (problem := control_problem(text)) is not None:
        raise ValueError(f"{flag}: {problem}")
    out = " ".join(unicodedata.normalize("NFC", text).split()).replace('"', "'")
    if len(out) > max_length:
        raise ValueError(f"{flag} is {len(out)} characters; keep it to {max_length}")
    return out
