"""What is published and under which object keys. Pure: no network, no clock, no files.

A call's objects live under `<prefix>/<user>/<date>/<artifact slug>/<name>`, where `<user>` is the
user's keyed stand-in (calld.ops.redaction), never the id as given. No key may carry a phone number: a segment that holds one (a user id that is a number, an odd call id) is
replaced by a short hash of itself, stable across retries, so the key is still unique.
"""

from __future__ import annotations

import hashlib
import re

from attrs import frozen

# The durable subset of a run directory, in upload order. events.jsonl is the working journal:
# call_report.json holds its timings, so it stays local. The manifest goes last (see publisher).
DURABLE = (
    "result.json",
    "call_report.json",
    "call_report.redacted.json",
    "transcript.json",
    "task.json",
    "hangup.json",
    "dial.json",
    "session_start.json",
    "timeline.svg",
    "audio/inbound.wav",
    "audio/outbound.wav",
    "audio/inbound.pcmu",
    "audio/outbound.pcmu",
)
REDACTED_ONLY = ("call_report.redacted.json",)
MANIFEST = "manifest.json"

_CONTENT_TYPES = {
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".wav": "audio/wav",
    ".pcmu": "audio/basic",  # 8 kHz mu-law, the type RFC 2046 names for it
}

# Seven digits in a row (separators allowed) reads as a phone number or most of one.
_PHONE_LIKE = re.compile(r"\+?\d(?:[\s\-.()]*\d){6,}")
_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
_HEX_TO_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def is_audio(name: str) -> bool:
    return name.startswith("audio/")


def content_type(name: str) -> str:
    suffix = name[name.rfind(".") :] if "." in name else ""
    return _CONTENT_TYPES.get(suffix, "application/octet-stream")


def has_phone_number(text: str) -> bool:
    return _PHONE_LIKE.search(text) is not None


def safe_segment(value: str, kind: str) -> str:
    """`value` as one key segment; a value that could hold a phone number becomes `<kind>-<hash>`."""
    if value and _SEGMENT.fullmatch(value) and not has_phone_number(value) and value not in (".", ".."):
        return value
    # Letters only (hex digits shifted to g-v), so the stand-in cannot itself read as a number.
    return f"{kind}-{hashlib.sha256(value.encode()).hexdigest()[:16].translate(_HEX_TO_LETTERS)}"


@frozen
class CallKeys:
    """Where one call's objects go."""

    prefix: str  # ends with "/"

    @classmethod
    def of(cls, prefix: str, user_key: str, date: str, slug: str) -> CallKeys:
        parts = [p for p in prefix.split("/") if p]
        if not _DATE.fullmatch(date):
            raise ValueError(f"{date!r} is not a date (YYYY-MM-DD)")
        parts += [safe_segment(user_key, "user"), date, safe_segment(slug, "call")]
        return cls("/".join(parts) + "/")

    def key(self, name: str) -> str:
        return self.prefix + name


def selected(names: list[str], *, redacted_only: bool, audio: bool) -> list[str]:
    """Which of the run's files (names relative to the run directory) are published, in order."""
    wanted = REDACTED_ONLY if redacted_only else DURABLE
    present = set(names)
    return [n for n in wanted if n in present and (audio or not is_audio(n))]


def check_prefix(value: str) -> str:
    """PUBLISH_PREFIX: path segments of [A-Za-z0-9._-], no phone numbers; slashes at the ends dropped."""
    value = value.strip().strip("/")
    for part in value.split("/") if value else []:
        if not _SEGMENT.fullmatch(part) or part in (".", ".."):
            raise ValueError(f"{value!r} is not a usable key prefix: use segments of letters, digits, '.', '_' or '-' joined by '/'")
    if has_phone_number(value):
        raise ValueError("object keys must not carry phone numbers; choose a prefix without a run of 7 digits")
    return value


def check_bucket_name(value: str) -> str:
    if not _BUCKET.fullmatch(value):
        raise ValueError(f"{value!r} is not a bucket name: 3 to 63 lowercase letters, digits, '.' or '-'")
    return value
