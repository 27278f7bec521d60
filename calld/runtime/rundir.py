"""One call's artifact directory: every file a run leaves, and nothing outside it.

Created as `.pending-<run_id>` (the call_control_id is not known before the dial
answers), renamed to `<slug(call_control_id)>` once it is. Writes are small and
synchronous: a JSON file at the edges of the call, a journal line per event, and
PCM appended to two WAV files.

Resource handling: `close()` finishes the WAV headers and closes every file; it is
safe to call twice. Every JSON written is checked against the secrets it was given.
"""

from __future__ import annotations

import json
import re
import wave
from pathlib import Path
from typing import Any

SAMPLE_RATE = 16000


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
        (self.path / "audio").mkdir(parents=True, exist_ok=True)
        self._secrets = [s for s in secrets if s]
        self._journal = (self.path / "events.jsonl").open("a", encoding="utf-8")
        self._wavs: dict[str, wave.Wave_write] = {}
        self.closed = False

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
        self._journal.write(line + "\n")
        if flush:  # audio rows ride along with the next event that matters
            self._journal.flush()

    def audio(self, name: str, pcm: bytes) -> None:
        w = self._wavs.get(name)
        if w is None:
            w = wave.open(str(self.path / "audio" / name), "wb")
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            self._wavs[name] = w
        w.writeframesraw(pcm)

    def write_json(self, name: str, data: Any) -> str:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        for s in self._secrets:
            if s in text:
                raise SecretLeak(f"refusing to write {name}: it contains a secret")
        (self.path / name).write_text(text + "\n", encoding="utf-8")
        return self.ref(name)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for name in ("inbound.wav", "outbound.wav"):
            if name not in self._wavs:  # an empty, valid WAV: the ref must exist either way
                self.audio(name, b"")
        for w in self._wavs.values():
            w.close()
        self._journal.close()
