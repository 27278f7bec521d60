"""What shareable copies must not give away: user ids (a keyed stand-in) and, in free text, phone
numbers and the call's known names.

User ids: an HMAC-SHA256 of the id under a secret kept in the state directory (`redaction.key`,
32 random bytes, 0600, made at first start). Without the secret no one can try every phone
number or every likely id to undo it; with it the stand-in is stable, so one user's calls still
sort together. The secret lives beside the ledger, never in it, and never in the artifacts
directory, so it is never published.

Free text: phone numbers as libphonenumber's matcher finds them (any country, US as the default
region), any other run of seven digits or more, and each known name as a whole word.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

import phonenumbers
from attrs import field, frozen

from calld.ops.errors import OperationalError
from calld.ops.private import open_private

KEY_FILE = "redaction.key"
KEY_BYTES = 32
NUMBER = "[number]"
NAME = "[name]"

_HEX_TO_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")
_ANY_DIGIT = re.compile(r"\d")  # any Unicode decimal digit, as phonenumbers' own patterns read them
_DIGIT_RUN = re.compile(r"\+?\d(?:[\s\-.()]*\d){6,}")  # seven digits, separators allowed
_NAME_PARTS = re.compile(r"[^\W\d_]{2,}")


@frozen
class Pseudonyms:
    """Keyed stand-ins for user ids."""

    key: bytes = field(repr=False)

    @classmethod
    def in_state_dir(cls, state_dir: Path) -> Pseudonyms:
        return cls(load_or_create_key(state_dir))

    @classmethod
    def ephemeral(cls) -> Pseudonyms:
        """A key that is never stored: stand-ins nobody can link to anything (a handle with no state dir)."""
        return cls(secrets.token_bytes(KEY_BYTES))

    def user(self, user_id: str) -> str:
        """`user-` and 20 letters (80 bits): no digits, so the stand-in never reads as a number."""
        digest = hmac.new(self.key, user_id.encode(), "sha256").hexdigest()[:20]
        return "user-" + digest.translate(_HEX_TO_LETTERS)


def load_or_create_key(state_dir: Path) -> bytes:
    """The state directory's redaction key; made here (0600, complete or absent) if there is none."""
    path = state_dir / KEY_FILE
    if not path.exists():
        tmp = state_dir / f".{KEY_FILE}.tmp-{os.getpid()}"
        try:
            with open_private(tmp, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
            os.link(tmp, path)  # never replaces one another process made meanwhile
        except FileExistsError:
            pass
        except OSError as exc:
            raise OperationalError(f"cannot create the redaction key {path}: {exc.strerror}; make {state_dir} writable") from None
        finally:
            tmp.unlink(missing_ok=True)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            key = f.read(KEY_BYTES + 1)
    except OSError as exc:
        raise OperationalError(f"cannot read the redaction key {path}: {exc.strerror}") from None
    if len(key) != KEY_BYTES:
        raise OperationalError(f"the redaction key {path} is damaged ({len(key)} bytes, not {KEY_BYTES}); "
                               "move it away and start calld again to make a new one (published keys will change)")
    return key


def name_words(*names: str | None) -> list[str]:
    """The words of names and ids ("nathan.smith" -> nathan, smith), each two letters or more."""
    words = {w.lower() for n in names if n for w in _NAME_PARTS.findall(n)}
    return sorted(words, key=lambda w: (-len(w), w))


def scrub(text: str, names: Iterable[str] = ()) -> str:
    """`text` with every phone number and every known name replaced."""
    if _ANY_DIGIT.search(text) is not None:  # no digit, no number: the matcher's patterns all need one
        spans = [(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(text, "US")]
        for start, end in reversed(spans):
            text = text[:start] + NUMBER + text[end:]
        text = _DIGIT_RUN.sub(NUMBER, text)
    words = list(names)
    if words:
        text = re.sub(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", NAME, text, flags=re.IGNORECASE)
    return text
