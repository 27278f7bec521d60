"""One finished call's artifacts, read once for the timeline picture and `calld-ctl show`.

Only files a call leaves are read (result.json, call_report.json, transcript.json,
events.jsonl); none is written. Fields added by later versions (reason, evidence,
typed answers, per-turn times, holds) are read when present and skipped when absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attrs import frozen


class ArtifactsMissing(LookupError):
    """The directory is not a finished call's (no result.json or call_report.json)."""


@frozen
class RunArtifacts:
    path: Path
    result: dict[str, Any]
    report: dict[str, Any]
    transcript: dict[str, Any]
    rows: tuple[dict[str, Any], ...]  # events.jsonl without the audio frames
    inbound_audio_at_ms: int | None  # call time of the first inbound frame: where audio/inbound.wav begins

    @property
    def duration_ms(self) -> int:
        return int(self.report.get("duration_ms") or 0)

    @property
    def turns(self) -> list[dict[str, Any]]:
        return list(self.transcript.get("turns") or [])

    def call_ms(self, inbound_ms: int | float) -> int:
        """A time in audio/inbound.wav (evidence, turn times) as a time on the call's clock."""
        return round(inbound_ms + (self.inbound_audio_at_ms or 0))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ArtifactsMissing(f"{path} is not valid JSON ({exc}); the call's artifacts are damaged") from None


def _audio_row(line: str) -> bool:
    # Audio frames are most of the journal; they are recognised without parsing.
    return '"pcm": ' in line and '"changed"' not in line and '"ignored"' not in line


def load_run(path: Path) -> RunArtifacts:
    """Read a finished call's directory. Raises ArtifactsMissing when it is not one."""
    result = _json(path / "result.json")
    report = _json(path / "call_report.json")
    if not isinstance(result, dict) or not isinstance(report, dict):
        raise ArtifactsMissing(f"{path} holds no finished call (result.json and call_report.json are needed)")
    transcript = _json(path / "transcript.json") or {}
    rows: list[dict[str, Any]] = []
    inbound_at: int | None = None
    try:
        with (path / "events.jsonl").open(encoding="utf-8") as journal:
            for line in journal:
                if _audio_row(line):
                    if inbound_at is None and '"event": {"pcm"' in line and '"kind": "media.audio"' in line:
                        inbound_at = int(json.loads(line)["t_ms"])
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue  # a torn last line (the disk filled): the rows before it still stand
    except FileNotFoundError:
        pass
    return RunArtifacts(path=path, result=result, report=report, transcript=transcript, rows=tuple(rows),
                        inbound_audio_at_ms=inbound_at)


def find_run(artifacts_dir: Path, ident: str) -> Path | None:
    """A finished call's directory by run id, call_control_id or directory name."""
    from calld.runtime.rundir import artifact_slug

    if not ident or "/" in ident or ident in (".", ".."):
        return None
    direct = artifacts_dir / artifact_slug(ident)
    if (direct / "call_report.json").is_file():
        return direct
    for report in sorted(artifacts_dir.glob("*/call_report.json")):
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if ident in (data.get("run_id"), data.get("call_control_id"), report.parent.name):
            return report.parent
    return None
