"""The redacted report and the object keys give away no phone number, no known name and no user id:
every free-text field is scrubbed (libphonenumber's matcher and the call's names), and the user id
is an HMAC under a secret kept in the state directory, the same stand-in in the report and the keys."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import pytest
import trio

from calld.ops.redaction import KEY_FILE, Pseudonyms, load_or_create_key, scrub
from calld.publish.publisher import upload_run
from calld.publish.store import StoredObject
from calld.runtime.report import CallReport, redact
from daemons import daemon_settings, stop
from tests.stubcall import stub_book

PLANT = "call my cell 212-555-0143 or ask for Nathan Smith, or +44 20 7946 0958, or 555-0199"
LEAKS = ("212-555-0143", "2125550143", "20 7946 0958", "555-0199", "nathan", "smith")
USER = "nathan.smith"
# Typed fields (closed sets the model checks), ids and times: not free text.
NOT_FREE = {"status", "verdict_source", "job", "run_id", "call_control_id", "artifact_prefix", "refs", "started_at",
            "timing_ms", "to", "from_did", "callback", "user_id", "first_name", "media"}


def planted(value, key=""):
    """Every free-text leaf of a report with PLANT in it (and one of each list's items, if empty)."""
    if key in NOT_FREE:
        return value
    if isinstance(value, str):
        return f"{value} {PLANT}"
    if isinstance(value, dict):
        return {k: planted(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [planted(v, key) for v in value]
    return value


def leaks(text: str) -> list[str]:
    return [s for s in LEAKS if s in text.lower()]


@pytest.fixture
async def report(tmp_path, autojump_clock) -> CallReport:
    run = await stub_book(tmp_path, "book_straight")
    data = run.report | {"user_id": USER, "item": "a skillet", "question": "stock", "detail": "d", "failure": "f",
                         "transcript_verdict": "t", "answer_text": "We have it"}
    data["refused_records"] = [{"call_id": "c1", "status": "booked", "why": "not said"}]
    data["holds"] = [{"cue": "please hold", "start_ms": 1, "end_ms": 2, "ended": "returned"}]
    data["booking"]["unanswered_questions"] = ["a question"]
    data["hangup"] = {k: v if v is not None else "x" for k, v in data["hangup"].items()}
    assert data["evidence"], "the booking's record cites the business's words"
    return CallReport.model_validate(planted(data))


async def test_every_free_text_field_loses_its_numbers_and_names(report, tmp_path):
    raw = json.dumps(report.model_dump(mode="json"))
    assert raw.count(PLANT) >= 12 and leaks(raw)  # planted in each free-text field
    redacted = redact(report, Pseudonyms.in_state_dir(tmp_path))
    text = json.dumps(redacted)
    assert not leaks(text), leaks(text)
    # what is left still reads: the planted words around the numbers and names
    scrubbed = "call my cell [number] or ask for [name] [name], or [number], or [number]"
    assert redacted["answer_text"] == f"We have it {scrubbed}"
    assert redacted["status"] == report.status and redacted["duration_ms"] == report.duration_ms
    # the report's own dump, handed in (as a call's end does), gives the same and is left as it was
    dumped = report.model_dump(mode="json")
    assert redact(report, Pseudonyms.in_state_dir(tmp_path), dumped) == redacted
    assert dumped == report.model_dump(mode="json") and dumped["booking"]["callback"] == report.booking.callback


async def test_the_user_id_is_keyed_with_the_state_dirs_secret(report, tmp_path):
    key = load_or_create_key(tmp_path)
    redacted = redact(report, Pseudonyms.in_state_dir(tmp_path))
    stand_in = redacted["user_id"]
    assert stand_in == "user-" + hmac.new(key, USER.encode(), "sha256").hexdigest()[:20].translate(
        str.maketrans("0123456789abcdef", "ghijklmnopqrstuv"))
    assert hashlib.sha256(USER.encode()).hexdigest()[:16] not in json.dumps(redacted)  # not the unsalted hash
    assert redact(report, Pseudonyms.in_state_dir(tmp_path))["user_id"] == stand_in  # stable
    other = tmp_path / "other"
    other.mkdir()
    assert redact(report, Pseudonyms.in_state_dir(other))["user_id"] != stand_in  # nothing to try without the key
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600


class KeysOnly:
    """The bucket port, keeping only the keys it was given."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def put_file(self, key: str, path: Path, content_type: str, name: str) -> StoredObject:
        self.keys.append(key)
        return StoredObject(name, key, "0" * 64, 0, content_type)

    def put_bytes(self, key: str, data: bytes, content_type: str) -> str:
        self.keys.append(key)
        return "0" * 64


@pytest.mark.parametrize("user", [USER, "2125550143", "nathan-212-555-0143"])
async def test_object_keys_carry_the_keyed_id_and_no_name_or_number(tmp_path, user, autojump_clock):
    run = await stub_book(tmp_path, "book_straight")
    pseudonyms = Pseudonyms.in_state_dir(tmp_path)
    bucket = KeysOnly()

    class Row:
        run_id, call_control_id, user_id, created_at = run.result.run_id, run.result.call_control_id, user, "2026-12-01"

    keys, _ = upload_run(bucket, run.settings, Row, run.dir, pseudonyms)
    assert bucket.keys and all(k.startswith(keys.prefix) for k in bucket.keys)
    assert keys.prefix.split("/")[1] == pseudonyms.user(user)
    assert not any(leaks(k.replace("2026-12-01", "")) for k in bucket.keys), bucket.keys


async def test_the_key_is_made_at_first_start_and_kept_out_of_the_ledger_and_the_artifacts(tmp_path, nursery, autojump_clock):
    from calld.daemon.service import Daemon

    settings = daemon_settings(tmp_path)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    path = settings.calld_state_dir / KEY_FILE
    key = path.read_bytes()
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.is_relative_to(settings.artifacts_dir)
    await stop(d)
    await trio.sleep(1)  # the lock is released as serve() returns
    ledger = b"".join(p.read_bytes() for p in settings.calld_state_dir.glob("calld.sqlite3*"))
    assert key not in ledger and key.hex().encode() not in ledger
    again: Daemon = await nursery.start(Daemon(settings).serve)  # a restart keeps it: the same stand-ins
    assert path.read_bytes() == key
    await stop(again)


SAID_IN_WORDS = "for Margaret Thornton's birthday, ring two one two five five five oh one four three"


async def test_the_free_text_the_user_wrote_is_dropped_for_its_length_and_a_keyed_hash(report, tmp_path):
    """No scrubbing finds "Margaret Thornton" or a number spelled out: the item, the notes, the time
    and the first name are not in the shareable copy at all, only how long they were and a keyed hash."""
    data = report.model_dump(mode="json")
    data["item"], data["first_name"] = f"skillet {SAID_IN_WORDS}", "Margaret"
    data["booking"] = {**data["booking"], "notes": SAID_IN_WORDS, "time": "Friday 7pm, Margaret Thornton's party"}
    written = CallReport.model_validate(data)
    pseudonyms = Pseudonyms.in_state_dir(tmp_path)
    redacted = redact(written, pseudonyms)
    text = json.dumps(redacted).lower()
    for word in ("margaret", "thornton", "birthday", "two one two", "skillet", "friday"):
        assert word not in text, word
    fields = {"item": written.item, "first_name": written.first_name, "notes": written.booking.notes, "time": written.booking.time}
    shown = {"item": redacted["item"], "first_name": redacted["first_name"], "notes": redacted["booking"]["notes"],
             "time": redacted["booking"]["time"]}
    key = load_or_create_key(tmp_path)
    for name, value in fields.items():
        digest = hmac.new(key, b"free-text\0" + value.encode(), "sha256").hexdigest()[:32]
        assert shown[name] == {"chars": len(value), "hmac": "hmac-sha256:" + digest}, name
    # the same words give the same hash (two calls that asked the same can be told apart from others) ...
    assert redacted["booking"]["notes"]["hmac"] != redacted["item"]["hmac"]
    assert redact(written, pseudonyms)["item"] == redacted["item"]
    # ... and without the key no guess at them can be checked
    assert hashlib.sha256(written.item.encode()).hexdigest()[:32] not in text
    other = tmp_path / "other"
    other.mkdir()
    assert redact(written, Pseudonyms.in_state_dir(other))["item"]["hmac"] != redacted["item"]["hmac"]
    assert redacted["booking"]["party"] == written.booking.party  # the typed fields stay


def test_scrub_keeps_ordinary_words_and_numbers():
    assert scrub("5.0 amp-hour battery, 12 inch, open 9 to 5, $24.99", ["nathan"]) == "5.0 amp-hour battery, 12 inch, open 9 to 5, $24.99"
    assert scrub("Nathanael asked Nathan", ["nathan"]) == "Nathanael asked [name]"


def test_scrub_reads_numbers_in_any_digits_and_leaves_text_without_digits_to_the_names():
    from calld.ops.redaction import NAME, NUMBER, scrub

    assert scrub("call FLOWERS-NOW, ask for Nathan", ["nathan"]) == f"call FLOWERS-NOW, ask for {NAME}"
    assert scrub("ring ２１２ ５５５ ０１４２ today") == f"ring {NUMBER} today"
    assert scrub("or (212) 555-0142, Nathan", ["nathan"]) == f"or {NUMBER}, {NAME}"


def test_a_key_file_others_can_read_is_made_private_or_refused(tmp_path, monkeypatch, caplog) -> None:
    from calld.ops import redaction
    from calld.ops.errors import OperationalError

    key = load_or_create_key(tmp_path)
    path = tmp_path / KEY_FILE
    os.chmod(path, 0o640)
    assert load_or_create_key(tmp_path) == key and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "was 0640 (group or others could read it): made 0600" in caplog.text
    os.chmod(path, 0o604)

    def refused(fd: int, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(redaction.os, "fchmod", refused)  # a file of another owner's
    with pytest.raises(OperationalError, match=rf"{path} is 0604 \(group or others can read it\) and cannot be made 0600"):
        load_or_create_key(tmp_path)


def test_a_redaction_key_setting_is_64_hex_digits_and_a_secret() -> None:
    from calld.settings import SettingsError, load_settings

    given = "ab" * 32
    settings = load_settings(_env_file=None, calld_redaction_key=given.upper())
    assert settings.calld_redaction_key.get_secret_value() == given and given in settings.secrets()
    with pytest.raises(SettingsError, match="CALLD_REDACTION_KEY: write it as 64 hex digits"):
        load_settings(_env_file=None, calld_redaction_key="hunter2")
