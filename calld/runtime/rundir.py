"""One call's artifact directory: every file a run leaves, and nothing outside it.

Created as `.pending-<run_id>` (the call_control_id is not known before the dial
answers), renamed to `<slug(call_control_id)>` once it is. Writes are small and
synchronous: a JSON file at the edges of the call, a journal line per event, and
PCM appended to two WAV files.

Resource handling: `close()` finishes the WAV headers and closes every file; it is
safe to call twice. Every JSON written is checked against the secrets it was given.

Write errors (a full disk, an I/O error) never raise out of a write: the first one is kept in
`write_error` and the call that owns this directory fails on it (the handle checks after each
step), while the daemon goes on. JSON files are written whole or not at all (temp + rename);
every directory is 0700 and every file 0600.
"""

from __future__ import annotations

import json
import logging
import re
import wave
from pathlib import Path
from typing import IO, Any

from calld.ops.private import open_private, private_dir, write_atomic

log = logging.getLogger("calld.call")

SAMPLE_RATE = 16000
RUN_MARKER = "run.json"  # names the run, so a restart finds an interrupted call's directory


def artifact_slug(value: str) -> str:
    """A directory name from an opaque id: anything outside [A-Za-z0-9._-] becomes _."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", value)
    return "_" + slug if slug.startswith(".") else slug


class SecretLeak(RuntimeError):
    pass


class RunDir:
    def __init__(self, artifacts_dir: Path, run_id: str, secrets: list[str]) -> None:
        self.root = artifacts_dir
        self.path = artifacts_dir / f".pending-{run_id}"
        private_dir(artifacts_dir)
        private_dir(self.path)
        private_dir(self.path / "audio")
        self._secrets = [s for s in secrets if s]
        write_atomic(self.path / RUN_MARKER, json.dumps({"run_id": run_id}).encode())
        self._journal = open_private(self.path / "events.jsonl", "a", encoding="utf-8")
        self._wavs: dict[str, wave.Wave_write] = {}
        self._wav_files: list[IO[bytes]] = []
        self.write_error: OSError | None = None
        self.closed = False

    def _failed(self, what: str, exc: OSError) -> None:
        if self.write_error is None:
            self.write_error = exc
            log.error("%s: writing %s failed: %s", self.path.name, what, exc)

    @property
    def prefix(self) -> str:
        return self.path.name

    def ref(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def adopt(self, ident: str) -> None:
        """Move to the directory named after the call (or the run, if the call never was)."""
        target = self.root / artifact_slug(ident)
        n = 1
        while target.exists():  # a reused id must never overwrite an earlier run's proof
            n += 1
            target = self.root / f"{artifact_slug(ident)}.{n}"
        self.path.rename(target)
        self.path = target

    def journal(self, line: str, *, flush: bool = True) -> None:
        if self.write_error is not None:
            return  # the journal stops at the first failed write: no gaps that look whole
        try:
            self._journal.write(line + "\n")
            if flush:  # audio rows ride along with the next event that matters
                self._journal.flush()
        except OSError as exc:
            self._failed("events.jsonl", exc)

    def audio(self, name: str, pcm: bytes) -> None:
        if self.write_error is not None:
            return
        try:
            w = self._wavs.get(name)
            if w is None:
                f = open_private(self.path / "audio" / name, "wb")
                self._wav_files.append(f)
                w = wave.open(f, "wb")
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(SAMPLE_RATE)
                self._wavs[name] = w
            w.writeframesraw(pcm)
        except OSError as exc:
            self._failed(f"audio/{name}", exc)

    def write_json(self, name: str, data: Any) -> str:
        """The file's ref. A failed write leaves no file (and sets write_error)."""
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        for s in self._secrets:
            if s in text:
                raise SecretLeak(f"refusing to write {name}: it contains a secret")
        try:
            write_atomic(self.path / name, (text + "\n").encode("utf-8"))
        except OSError as exc:
            self._failed(name, exc)
        return self.ref(name)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for name in ("inbound.wav", "outbound.wav"):
            if name not in self._wavs:  # an empty, valid WAV: the ref must exist either way
                self.audio(name, b"")
        for name, w in self._wavs.items():
            try:
                w.close()
            except OSError as exc:
                self._failed(f"audio/{name}", exc)
        for f in self._wav_files:
            try:
                f.close()
            except OSError as exc:
                self._failed("audio", exc)
        try:
            self._journal.close()
        except OSError as exc:
            self._failed("events.jsonl", exc)
