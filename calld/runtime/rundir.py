"""One call's artifact directory: every file a run leaves, and nothing outside it.

Created as `.pending-<run_id>` (the call_control_id is not known before the dial
answers), renamed to `<slug(call_control_id)>` once it is. Writes are small and
synchronous: a JSON file at the edges of the call, a journal line per event, and
PCM appended to two WAV files.

Audio is batched. The audio rows of the journal (`journal_audio`, a few a second each way) wait
in memory and are written, in order, before the next row that is not audio, or once
AUDIO_ROWS_BATCH have gathered. The PCM of each WAV file waits until WAV_BATCH_BYTES of it have
gathered (about two seconds of one direction), and is written then in one write: a file's PCM
does not wait for the journal, and the journal does not wait for it (the rows count what was
heard; the WAV holds it). Both are written at `close()`. So a killed process loses at most about
two seconds of each WAV and the last rows (recovery repairs the headers; a call that crashes or
ends closes its directory and loses nothing), and a write error surfaces within that time. Fewer,
larger writes: at 100 calls, one write a call-second in place of about ten (each a system call
on the loop's core; docs/performance.md, the thirteenth session).

Resource handling: `close()` finishes the WAV headers and closes every file; it is
safe to call twice. Every JSON written is scanned for the secrets it was given, and a secret
found is redacted in the file (never a reason to leave a file unwritten: see `write_json`).

Errors never raise out of a write or a rename (a full disk, an I/O error, JSON that cannot be
made): the first one is kept in `write_error` and the call that owns this directory fails on it
(the handle checks after each step: the call is hung up once and its result says what failed),
while the daemon goes on. A call is live while its files are written; an exception here would
leave it without an owner and its line open (issue 51). JSON files are written whole or not at
all (temp + rename); every directory is 0700 and every file 0600.

The WAV files are the exception: the answer and the result matter more than the recording. A
failed audio write (the largest writes, so the first to meet a full disk, and with delayed
allocation a failure may only show when the file is closed) is kept in `audio_error` instead:
the recording stops there for both files (later PCM is dropped, not held), their headers are
finished over what was written, and the call goes on to its own end; its result says the audio
is incomplete (`audio_gap`). Issue 55: a failed audio write had failed the call, answer and all.
"""

from __future__ import annotations

import json
import logging
import re
import wave
from pathlib import Path
from typing import IO, Any

import orjson

from calld.ops.private import open_private, private_dir, write_atomic

log = logging.getLogger("calld.call")

SAMPLE_RATE = 16000
AUDIO_ROWS_BATCH = 50  # about 250 ms of audio rows (an inbound frame and its forward: two rows a 20 ms frame)
WAV_BATCH_BYTES = 65536  # 2.05 s of 16 kHz PCM16 a write
RUN_MARKER = "run.json"  # names the run, so a restart finds an interrupted call's directory


def artifact_slug(value: str) -> str:
    """A directory name from an opaque id: anything outside [A-Za-z0-9._-] becomes _."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", value)
    return "_" + slug if slug.startswith(".") else slug


REDACTED = "[redacted]"
# A secret shorter than this is not looked for. The scan matches a configured value whole, wherever
# it stands in a file; a value of a few characters stands in ordinary text by chance (a one-letter
# key matched every dial.json, whose write was then refused and its live call stranded), and
# redacting it would garble the proof for nothing. The keys calld is given are far longer (API keys,
# signing secrets: 20 characters and more); 8 characters is where an accidental match in a few
# kilobytes of JSON becomes negligible, and below it there is hardly a secret left to keep.
SECRET_MIN_CHARS = 8


# The standard library's pretty printer is pure Python (its C encoder serves only indent=None):
# 130 us for a call report, 40 times orjson's, on the loop every call ends on. Dates and
# dataclasses go through `default` as they did there, so the text is the same.
_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def pretty_json(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False, default=str)`, made by orjson."""
    try:
        return orjson.dumps(data, option=_PRETTY, default=str).decode()
    except TypeError:  # what orjson cannot hold (an integer past 64 bits): the standard library can
        return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _escaped(secret: str) -> str:
    """How `secret` stands inside a JSON string."""
    return json.dumps(secret, ensure_ascii=False)[1:-1]


def _scrub(value: Any, secrets: list[str]) -> Any:
    """`value` (decoded JSON) with each secret replaced by REDACTED in every string and key."""
    if isinstance(value, str):
        for s in secrets:
            if s in value:
                value = value.replace(s, REDACTED)
        return value
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    if isinstance(value, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in value.items()}
    return value


class RunDir:
    def __init__(self, artifacts_dir: Path, run_id: str, secrets: list[str]) -> None:
        self.root = artifacts_dir
        self.path = artifacts_dir / f".pending-{run_id}"
        private_dir(artifacts_dir)
        private_dir(self.path)
        private_dir(self.path / "audio")
        # Longest first: a secret that holds a shorter one is redacted whole, not around it.
        self._secrets = sorted({s for s in secrets if len(s) >= SECRET_MIN_CHARS}, key=len, reverse=True)
        # Each secret as it stands in the text and as JSON writes it in a string: looked for in every file.
        self._secret_forms = [(s, _escaped(s)) for s in self._secrets]
        self.redacted: list[str] = []  # the files a secret was found (and redacted) in
        self._run_id = run_id
        write_atomic(self.path / RUN_MARKER, json.dumps({"run_id": run_id}).encode())
        self._journal = open_private(self.path / "events.jsonl", "a", encoding="utf-8")
        self._audio_rows: list[str] = []  # journal rows of audio not yet written (see journal_audio)
        self._wavs: dict[str, wave.Wave_write] = {}
        self._wav_files: dict[str, IO[bytes]] = {}
        # PCM not yet written, per WAV file: its pieces and their bytes, joined once when written (a
        # bytearray grown piece by piece was copied again at each realloc that could not grow in place)
        self._pcm: dict[str, list[bytes]] = {}
        self._pcm_bytes: dict[str, int] = {}
        self.write_error: Exception | None = None
        self.audio_error: Exception | None = None  # the first failed audio write: the recording stopped there
        self._audio_failed_in = ""
        self.closed = False

    def failed(self, what: str, exc: Exception) -> None:
        """A write (or a rename, or the making of a file's text) failed: the first such is kept."""
        if self.write_error is None:
            self.write_error = exc
            log.error("%s: writing %s failed: %s", self.path.name, what, exc)

    def _audio_failed(self, name: str, exc: Exception) -> None:
        """An audio write failed: the first such is kept, and no more audio is written (the handle logs it)."""
        if self.audio_error is None:
            self.audio_error = exc
            self._audio_failed_in = f"audio/{name}"
        for pending in self._pcm.values():
            pending.clear()
        self._pcm_bytes.clear()

    def audio_gap(self) -> str | None:
        """What the result says of a recording cut short by a failed write, or None when it is whole."""
        if self.audio_error is None:
            return None
        held = ", ".join(f"audio/{name} at most {self._wav_seconds(name):.1f} s" for name in ("inbound.wav", "outbound.wav"))
        why = str(self.audio_error)[:300]  # a result's text has a bound; the log has the whole error
        return (f"the audio is incomplete: writing {self._audio_failed_in} failed ({why}), so the recording "
                f"stops there ({held}); the call went on, and its result stands")

    def _wav_seconds(self, name: str) -> float:
        w = self._wavs.get(name)
        return w.getnframes() / SAMPLE_RATE if w is not None else 0.0

    @property
    def prefix(self) -> str:
        return self.path.name

    def ref(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def adopt(self, ident: str, *, call_control_id: str | None = None) -> None:
        """Move to the directory named after the call (or the run, if the call never was). A dialled call's
        id goes into run.json first: a crash before the ledger has it still leaves it to recovery."""
        if call_control_id is not None:
            try:
                write_atomic(self.path / RUN_MARKER,
                             json.dumps({"run_id": self._run_id, "call_control_id": call_control_id}).encode())
            except OSError as exc:
                self.failed(RUN_MARKER, exc)
        target = self.root / artifact_slug(ident)
        n = 1
        while target.exists():  # a reused id must never overwrite an earlier run's proof
            n += 1
            target = self.root / f"{artifact_slug(ident)}.{n}"
        try:
            self.path.rename(target)
        except OSError as exc:  # the files stay where they are, under the run's id, and the call fails on it
            self.failed(f"the move to {target.name}", exc)
            return
        self.path = target

    def journal(self, line: str, *, flush: bool = True) -> None:
        """A row that is not audio: the audio rows before it go first, then it (to the OS when `flush`)."""
        if self.write_error is not None:
            return  # the journal stops at the first failed write: no gaps that look whole
        rows = self._audio_rows
        rows.append(line)
        self._write_rows(flush=flush)

    def journal_audio(self, line: str) -> None:
        """An audio row: kept with the others until the next row that is not audio (or the batch is full)."""
        rows = self._audio_rows
        rows.append(line)
        if len(rows) >= AUDIO_ROWS_BATCH:
            self._write_rows(flush=True)

    def _write_rows(self, *, flush: bool) -> None:
        rows, self._audio_rows = self._audio_rows, []
        if self.write_error is not None or not rows:
            return
        try:
            self._journal.write("\n".join(rows) + "\n")
            if flush:
                self._journal.flush()
        except (OSError, ValueError) as exc:  # ValueError: a row after close(), which must not raise either
            self.failed("events.jsonl", exc)

    def audio(self, name: str, pcm: bytes) -> None:
        """PCM for a WAV file: kept until WAV_BATCH_BYTES have gathered (or `close`), then written at once.
        After a failed audio write, dropped: the recording has stopped (see the module's note)."""
        if self.audio_error is not None:
            return
        pending = self._pcm.get(name)
        if pending is None:
            pending = self._pcm[name] = []
        pending.append(pcm)
        size = self._pcm_bytes.get(name, 0) + len(pcm)
        if size >= WAV_BATCH_BYTES:
            self._write_pcm(name, pending, flush=True)
        else:
            self._pcm_bytes[name] = size

    def flush_audio(self) -> None:
        """Write every WAV file's pending PCM."""
        for name, pending in self._pcm.items():
            if pending:
                self._write_pcm(name, pending, flush=False)

    def _write_pcm(self, name: str, pending: list[bytes], *, flush: bool) -> None:
        self._pcm_bytes[name] = 0
        if self.write_error is not None or self.audio_error is not None:
            pending.clear()
            return
        try:
            w = self._wavs.get(name) or self._open_wav(name)
            w.writeframesraw(b"".join(pending))
            if flush:  # a full batch goes to the OS at once
                self._wav_files[name].flush()
        except (OSError, ValueError) as exc:
            self._audio_failed(name, exc)
        pending.clear()

    def _open_wav(self, name: str) -> wave.Wave_write:
        f = self._wav_files[name] = open_private(self.path / "audio" / name, "wb")
        w = wave.open(f, "wb")
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        self._wavs[name] = w
        return w

    def write_json(self, name: str, data: Any) -> str:
        """The file's ref. A failed write leaves no file (and sets write_error); never raises.

        A configured secret found in the text is replaced by REDACTED and the file written: the
        call it belongs to is live, and refusing the file would fail the call over a value that
        is simply left out (the log says which file, never the value)."""
        try:
            text = pretty_json(data)
            if any(s in text or escaped in text for s, escaped in self._secret_forms):
                text = self._redact(name, text)
            write_atomic(self.path / name, (text + "\n").encode("utf-8"))
        except Exception as exc:  # noqa: BLE001 - see the module's note: the call fails on it, never strands
            self.failed(name, exc)
        return self.ref(name)

    def _redact(self, name: str, text: str) -> str:
        """`text` with every secret replaced, inside the JSON's strings (where a value stands
        decoded, so one that JSON escapes is found too); the text is whole JSON after it."""
        text = pretty_json(_scrub(json.loads(text), self._secrets))
        for s in self._secrets:  # a secret spread over JSON's own syntax: no one string holds it
            text = text.replace(s, REDACTED).replace(_escaped(s), REDACTED)
        self.redacted.append(name)
        log.warning("%s: a configured secret was found in %s and redacted there", self.path.name, name)
        return text

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._write_rows(flush=True)
        self.flush_audio()
        for name in ("inbound.wav", "outbound.wav"):
            if name not in self._wavs and self.write_error is None:  # an empty, valid WAV: the ref must exist either way
                try:  # even after a failed audio write: the ref is the result's
                    self._open_wav(name)
                except (OSError, ValueError) as exc:
                    self._audio_failed(name, exc)
        for name, w in self._wavs.items():
            try:
                w.close()  # the header, over the frames really written
            except (OSError, ValueError) as exc:
                self._audio_failed(name, exc)
        for name, f in self._wav_files.items():
            try:
                f.close()
            except (OSError, ValueError) as exc:
                self._audio_failed(name, exc)
        try:
            self._journal.close()
        except OSError as exc:
            self.failed("events.jsonl", exc)
