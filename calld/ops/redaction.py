"""What shareable copies must not give away: user ids (a keyed stand-in) and, in free text, phone
numbers and the call's known names.

User ids: an HMAC-SHA256 of the id under a secret of 32 random bytes. Without the secret no one can
try every phone number or every likely id to undo it; with it the stand-in is stable, so one user's
calls still sort together. It is never in the artifacts directory, so it is never published. Where
it is kept (`daemon_pseudonyms`):
- CALLD_REDACTION_KEY, when set (every daemon given the same);
- else, on a ledger several daemons share (PostgreSQL), in the ledger: the first daemon to start
  makes it (its own redaction.key from before, if it had one, so its stand-ins stay), the others read
  it, so one user has one stand-in on every daemon;
- else in the state directory beside the SQLite ledger (`redaction.key`, 0600, made at first start).
A key file that group or others may read is made 0600 at start (logged), or refused when calld
cannot change it.

Free text the user wrote (an item, booking notes and time, a first name) cannot be scrubbed
reliably ("for Margaret Thornton's birthday", a number spelled out in words): a shareable copy keeps
only its length and a keyed hash (`Pseudonyms.text`), enough to tell two calls asked the same thing.

Other free text (the business's words, details): phone numbers as libphonenumber's matcher finds
them (any country, US as the default region), any other run of seven digits or more, and each
known name as a whole word.
"""

from __future__ import annotations

import functools
import hmac
import logging
import os
import stat
import re
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import phonenumbers
from attrs import field, frozen

from calld.ops.errors import OperationalError
from calld.ops.private import open_private

if TYPE_CHECKING:
    from calld.ledger import Ledger
    from calld.settings import Settings

log = logging.getLogger("calld.redaction")

KEY_FILE = "redaction.key"
KEY_BYTES = 32
SHARED_KEY_NAME = "redaction"  # its row in the ledger's shared_keys
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

    def text(self, value: str) -> dict[str, int | str]:
        """What a shareable copy keeps of free text the user wrote: its length and a keyed hash (its own
        domain, so it never equals a user stand-in); without the key no guess at the words can be checked."""
        digest = hmac.new(self.key, b"free-text\0" + value.encode(), "sha256").hexdigest()[:32]
        return {"chars": len(value), "hmac": "hmac-sha256:" + digest}


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
    key = _read_key(path)
    if len(key) != KEY_BYTES:
        raise OperationalError(f"the redaction key {path} is damaged ({len(key)} bytes, not {KEY_BYTES}); "
                               "move it away and start calld again to make a new one (published keys will change)")
    return key


def _read_key(path: Path) -> bytes:
    """The key file's bytes; a file group or others may read is made 0600 first (or refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
            if mode & 0o077:
                try:
                    os.fchmod(f.fileno(), 0o600)
                except OSError as exc:
                    raise OperationalError(
                        f"the redaction key {path} is {mode:04o} (group or others can read it) and cannot be made 0600 "
                        f"({exc.strerror}); chmod 0600 {path}, or move it away for a new key") from None
                log.warning("the redaction key %s was %04o (group or others could read it): made 0600", path, mode)
            return f.read(KEY_BYTES + 1)
    except OSError as exc:
        raise OperationalError(f"cannot read the redaction key {path}: {exc.strerror}") from None


def daemon_pseudonyms(settings: Settings, ledger: Ledger) -> Pseudonyms:
    """The daemon's stand-ins: under CALLD_REDACTION_KEY, else the shared ledger's key (made once, by the
    first daemon to ask), else the state directory's redaction.key (see the module's docstring)."""
    if given := settings.calld_redaction_key.get_secret_value():
        return Pseudonyms(bytes.fromhex(given))
    state_dir = settings.calld_state_dir
    if ledger.engine != "postgresql":
        return Pseudonyms.in_state_dir(state_dir)
    path = state_dir / KEY_FILE
    own = existing_key(state_dir)
    key = share_key(ledger, own or secrets.token_bytes(KEY_BYTES))
    if own is not None and own != key:
        log.warning("redaction key: the shared ledger's; %s (this daemon's from before) is no longer used, so its "
                    "users' stand-ins change", path)
    return Pseudonyms(key)


def existing_key(state_dir: Path) -> bytes | None:
    """The state directory's redaction key if it has a whole one (made private first), else None."""
    path = state_dir / KEY_FILE
    if not path.exists():
        return None
    key = _read_key(path)
    return key if len(key) == KEY_BYTES else None


def share_key(ledger: Ledger, candidate: bytes) -> bytes:
    """The shared ledger's redaction key, made `candidate` if it has none yet (once, whoever asks first)."""
    try:
        key = bytes.fromhex(ledger.shared_key(SHARED_KEY_NAME, candidate.hex()))
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise OperationalError(f"the redaction key in the ledger {ledger.describe()} is damaged (not {KEY_BYTES} bytes "
                               "in hex); set CALLD_REDACTION_KEY, or delete its row (shared_keys, name 'redaction') "
                               "for a new one (published keys will change)")
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
    words = tuple(names)
    if words:
        text = _names_pattern(words).sub(NAME, text)
    return text


@functools.lru_cache(maxsize=64)  # a report scrubs each of its strings with the same names
def _names_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
