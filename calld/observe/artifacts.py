"""One finished call's artifacts, read once for the timeline picture and `calld-ctl show`.

Only files a call leaves are read (result.json, call_report.json, transcript.json,
events.jsonl); none is written. Fields added by later versions (reason, evidence,
typed answers, per-turn times, holds) are read when present and skipped when absent.

A call cut short by a crash (kill -9) never wrote its call_report.json; the next start finished
it (calld.ops.recovery) and left recovery.json and result.json beside what the call had written.
Such a directory is a finished call too, a recovered one: its report is rebuilt from the journal
(each track's changes, the last row's time) and says `recovered`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Callable
from typing import Any

from attrs import frozen


class ArtifactsMissing(LookupError):
    """The directory is not a finished call's (no result.json or call_report.json)."""


RECOVERY_NAME = "recovery.json"  # written by calld.ops.recovery into a call a crash cut short


def is_finished_run(path: Path) -> bool:
    """A finished call's directory: its own call_report.json, or the result a recovery finished it with."""
    try:
        return (path / "call_report.json").is_file() or ((path / RECOVERY_NAME).is_file() and (path / "result.json").is_file())
    except OSError:
        return False  # no directory has such a name (too long for one, say)


@frozen
class RunArtifacts:
    path: Path
    result: dict[str, Any]
    report: dict[str, Any]
    transcript: dict[str, Any]
    rows: tuple[dict[str, Any], ...]  # events.jsonl without the audio frames
    inbound_audio_at_ms: int | None  # call time of the first inbound frame: where audio/inbound.wav begins
    inbound_frames_lost: int = 0  # gaps in the inbound frames' chunk numbers
    recovered: dict[str, Any] | None = None  # recovery.json: the call was cut short and finished by the next start

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


_CHUNK = re.compile(r'"chunk": (\d+)')


def _audio_row(line: str) -> bool:
    # Audio frames are most of the journal; they are recognised without parsing.
    return '"pcm": ' in line and '"changed"' not in line and '"ignored"' not in line


class _InboundAudio:
    """The inbound frames as events.jsonl tells them (one by one, or a stretch of them): when the
    first came, and how many Telnyx numbered but never sent (gaps in the chunk counter)."""

    def __init__(self) -> None:
        self.at_ms: int | None = None
        self.lost = 0
        self._last: int | None = None

    def saw(self, t_ms: int | Callable[[], int], first: int, last: int, frames: int) -> None:
        """Frames `first`..`last` (`frames` of them) in a row at `t_ms` (a callable: read only when needed)."""
        if self.at_ms is None:
            self.at_ms = t_ms() if callable(t_ms) else t_ms
        if self._last is not None and first > self._last + 1:
            self.lost += first - self._last - 1
        self.lost += max(0, last - first + 1 - frames)  # gaps inside a stretch
        self._last = last if self._last is None else max(last, self._last)


def load_run(path: Path) -> RunArtifacts:
    """Read a finished call's directory. Raises ArtifactsMissing when it is not one."""
    result = _json(path / "result.json")
    report = _json(path / "call_report.json")
    recovered = _json(path / RECOVERY_NAME)
    recovered = recovered if isinstance(recovered, dict) else None
    if not isinstance(result, dict) or not (isinstance(report, dict) or recovered is not None):
        raise ArtifactsMissing(f"{path} holds no finished call (result.json and call_report.json, or recovery.json, are needed)")
    transcript = _json(path / "transcript.json") or {}
    rows: list[dict[str, Any]] = []
    inbound = _InboundAudio()
    try:
        with (path / "events.jsonl").open(encoding="utf-8") as journal:
            for line in journal:
                if '"kind": "media.audio_held"' in line:  # frames held for GPT-Live, each with its chunk
                    try:
                        row = json.loads(line)
                    except ValueError:
                        continue
                    for frame in row["event"]["frames"]:
                        inbound.saw(int(row["t_ms"]), int(frame["chunk"]), int(frame["chunk"]), 1)
                    continue
                if _audio_row(line):
                    if '"event": {"pcm"' in line and '"kind": "media.audio"' in line:
                        if (m := _CHUNK.search(line)) is not None:
                            chunk = int(m.group(1))
                            inbound.saw(lambda: int(json.loads(line)["t_ms"]), chunk, chunk, 1)
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a torn last line (the disk filled): the rows before it still stand
                event = row.get("event") or {}
                # a stretch the media task sent on itself, or (GPT-Live gone) only recorded
                if event.get("kind") in ("media.audio_forwarded", "media.audio_recorded"):
                    inbound.saw(int(row["t_ms"]), event["first_chunk"], event["last_chunk"], event["frames"])
                    continue
                rows.append(row)
    except FileNotFoundError:
        pass
    if not isinstance(report, dict):
        assert recovered is not None
        report = recovered_report(recovered, result, rows)
    return RunArtifacts(path=path, result=result, report=report, transcript=transcript, rows=tuple(rows),
                        inbound_audio_at_ms=inbound.at_ms, inbound_frames_lost=inbound.lost, recovered=recovered)


def recovered_report(recovery: dict[str, Any], result: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What a recovered call's journal tells of it, in call_report.json's shape: each track's states
    (from the rows' `changed`) and how long it ran until the kill (the last row's time)."""
    timing: dict[str, list[dict[str, Any]]] = {}
    last = 0
    for row in rows:
        t_ms = row.get("t_ms")
        if not isinstance(t_ms, int):
            continue
        last = max(last, t_ms)
        for track, move in (row.get("changed") or {}).items():
            if isinstance(move, list) and len(move) == 2:
                timing.setdefault(track, [{"state": move[0], "t_ms": 0}]).append({"state": move[1], "t_ms": t_ms})
    return {"run_id": recovery.get("run_id") or result.get("run_id"),
            "call_control_id": recovery.get("call_control_id") or result.get("call_control_id"),
            "status": result.get("status"), "duration_ms": last, "timing_ms": timing, "recovered": True}


def refused_records(rows: tuple[dict[str, Any], ...]) -> dict[int, str]:
    """Tool calls the call did not take, by their event's seq, with why: a rejected call, or a record
    whose function output told the model it was not recorded (or not accepted)."""
    out: dict[int, str] = {}
    for row in rows:
        event = row.get("event") or {}
        if event.get("kind") == "tool.rejected" or (str(event.get("kind", "")).startswith("tool.") and row.get("refused")):
            out[int(row.get("seq", -1))] = str(event.get("error") or row.get("refused") or "rejected")
        effect = row.get("effect") or {}
        if effect.get("kind") != "live.tool_output":
            continue
        try:
            output = json.loads(effect.get("output") or "{}")
        except ValueError:
            continue
        if isinstance(output, dict) and (output.get("recorded") is False or output.get("accepted") is False):
            out[int(row.get("cause", -1))] = str(output.get("why") or output.get("error") or "not accepted")
    return out


def find_run(artifacts_dir: Path, ident: str) -> Path | None:
    """A finished call's directory by run id, call_control_id or directory name."""
    from calld.runtime.rundir import artifact_slug

    if not ident or "/" in ident or ident in (".", ".."):
        return None
    direct = artifacts_dir / artifact_slug(ident)
    if is_finished_run(direct):
        return direct
    # A call's own report, else (a crash cut it short) the recovery that finished it.
    for name in ("call_report.json", RECOVERY_NAME):
        for found in sorted(artifacts_dir.glob(f"*/{name}")):
            try:
                data = json.loads(found.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and ident in (data.get("run_id"), data.get("call_control_id"), found.parent.name) \
                    and is_finished_run(found.parent):
                return found.parent
    return None


WORD_MS = 300  # a transcript delta arrives as its word ends; a turn runs one word past its last delta


def turn_times(run: RunArtifacts) -> list[tuple[int, int]] | None:
    """Each transcript turn's (start, end) on the call's clock: from transcript.json's per-turn times
    (in audio/inbound.wav) when it has them, else from the journal's transcript deltas, grouped as the
    reducer groups them (consecutive deltas of one speaker). None when neither account fits."""
    turns = run.turns
    if turns and all(isinstance(t.get("start_ms"), int | float) and isinstance(t.get("end_ms"), int | float) for t in turns):
        return [(run.call_ms(t["start_ms"]), run.call_ms(t["end_ms"])) for t in turns]
    deltas: list[tuple[str, int, str]] = []  # (speaker, t_ms, text), in the reducer's order
    for row in run.rows:
        event = row.get("event") or {}
        speaker = {"live.input_transcript": "business", "live.output_transcript": "agent"}.get(event.get("kind", ""))
        if speaker is not None and "ignored" not in row:
            deltas.append((speaker, int(row["t_ms"]), event.get("text", "")))
    # Each turn is the deltas that spell it, in order (an agent turn also ends where its audio
    # stopped reaching the line, so two turns of one speaker may follow each other).
    out: list[tuple[int, int]] = []
    i = 0
    for turn in turns:
        text, first, last = "", None, None
        while i < len(deltas) and deltas[i][0] == turn.get("speaker") and (
                len(text) < len(str(turn.get("text", ""))) or not deltas[i][2]):
            text += deltas[i][2]
            first = deltas[i][1] if first is None else first
            last = deltas[i][1]
            i += 1
        if first is None or last is None or text != turn.get("text"):
            return None
        out.append((first, last + WORD_MS))
    return out if i == len(deltas) else None
