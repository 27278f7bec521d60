"""After a crash (kill -9, power cut of the process): finish every call the last daemon left in flight.

For each request the ledger still has as placing or in flight:
- hang the call up at Telnyx, once (its command id is the one the call's own hangup would have used,
  and "already ended", 422 code 90018, is success); refused, the call's status says whether the line
  is down anyway, and while it does not, the result's line_may_be_up, recovery.json and the log say
  the line may still be up (a kill while calld.runtime.hangup was resending it lands here);
- repair the WAV headers to the audio actually written (a killed process never wrote them);
- finish the result: the verdict the call had accepted (task.json is written the moment it is, with
  the result it makes), or failed with reason `daemon_restart`;
- leave result.json and recovery.json in the call's directory, so `show` finds it, and store the
  result in the ledger, so a repeat of the request id returns it.
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from calld.domain import results
from calld.domain.transcript import Turn, add_fragment
from calld.ledger import Ledger, RequestRow
from calld.ledger.awaitable import AsyncLedger, awaitable
from calld.ops.private import write_atomic
from calld.runtime.rundir import RUN_MARKER, artifact_slug

log = logging.getLogger("calld.recovery")

Hangup = Callable[[str, str], Awaitable[str]]  # (call_control_id, command_id) -> what Telnyx said
Status = Callable[[str], Awaitable[Any]]  # call_control_id -> the call's status (a CallInfo: is_alive)


def hangup_command_id(run_id: str) -> str:
    """The command id of a call's one hangup: the call's own and the recovery's are the same, so
    Telnyx acts on it once even if both were sent."""
    return f"hangup-{run_id}"


async def recover_interrupted(ledger: Ledger | AsyncLedger, artifacts_dir: Path, hangup: Hangup | None, *,
                              status: Status | None = None, instance: str = "", now: float | None = None,
                              others_only: bool = False, own_only: bool = False) -> list[dict[str, Any]]:
    """Finish every unfinished request this daemon must settle; returns what was done for each (for the
    log and tests). `hangup` is None where no carrier call can outlive the daemon (stub mode); `status`
    reads a call's status after a hangup Telnyx refused (None: not read, so the line may be up).

    Those are its own (`instance`: it restarted) and those of a daemon whose lease ran out before `now`
    (epoch seconds; None: every unfinished request, as one daemon alone on its ledger has it). Each is
    taken over in the ledger first, in one statement that reads the owner's lease: of two daemons that
    find the same call, one settles it, and an owner that came back in time keeps its own."""
    ledger = awaitable(ledger)
    if now is None:
        rows = [r for status in ("placing", "in_flight") for r in await ledger.requests(1000, status=status)]  # type: ignore[arg-type]
    else:
        rows = await ledger.orphans(instance, now)
    if others_only:  # while serving: this daemon's own unfinished requests are its calls on the line
        rows = [r for r in rows if r.instance != instance]
    if own_only:  # starting: another daemon's lease is judged only once this one's has held (Daemon._may_judge_others)
        rows = [r for r in rows if r.instance == instance]
    done = []
    for row in rows:
        if now is not None and not await ledger.take_over(row.request_id, from_instance=row.instance,
                                                          to_instance=instance, now=now):
            continue  # another daemon took it, or its owner renewed its lease meanwhile
        report = await _recover(ledger, artifacts_dir, row, hangup, status)
        if row.instance != instance:
            report["taken_over_from"] = row.instance or "(a daemon with no instance name)"
            log.warning("request %s: its daemon %r let its lease run out; this daemon settled its call",
                        row.request_id, row.instance)
        done.append(report)
    return done


async def _recover(ledger: AsyncLedger, artifacts_dir: Path, row: RequestRow, hangup: Hangup | None,
                   status: Status | None) -> dict[str, Any]:
    run_dir = find_run_dir(artifacts_dir, row.run_id, row.call_control_id)
    # The ledger takes the call's id after the carrier gave it; a crash while that write stalled leaves
    # the row without it, but the run directory has it (run.json and dial.json, written at the dial).
    ccid = row.call_control_id or (dialled_call(run_dir) if run_dir is not None else None)
    report: dict[str, Any] = {"request_id": row.request_id, "run_id": row.run_id, "call_control_id": ccid}
    if ccid is not None and row.call_control_id is None:
        report["call_control_id_from"] = f"{run_dir.name if run_dir else '?'}: the ledger never took it"
    hung_up = False
    if ccid is None:
        report["hangup"] = "no call control id: the dial never returned one"
    elif hangup is None:
        report["hangup"] = "stub mode: no carrier call outlives the daemon"
    else:
        try:
            report["hangup"] = await hangup(ccid, hangup_command_id(row.run_id))
            hung_up = True
        except Exception as exc:  # noqa: BLE001 - the row is finished whatever Telnyx says
            report["hangup"] = f"error: {exc}"
            log.error("%s could not be hung up after the restart: %s", ccid, exc)
            report["call_status"] = await _call_status(ccid, status)
            hung_up = report["call_status"] == "ended"  # down anyway: nothing is left to hang up
    report["artifacts"] = run_dir.name if run_dir else None
    report["wav_repaired"] = [p.name for p in sorted(run_dir.glob("audio/*.wav")) if repair_wav(p)] if run_dir else []
    result = _result(row, run_dir, ccid, _what_became_of_it(ccid, hangup is None, hung_up, report["hangup"]))
    if ccid is not None and hangup is not None and not hung_up:
        # Never "hung up": the verdict stands (as the call's own result would), and the line is the operator's to check.
        up = (f"calld stopped while this call was in flight, and Telnyx did not take its hangup on restart "
              f"({report['hangup']}); the call's status: {report['call_status']}. The line may still be up: "
              f"hang it up in the Telnyx portal (call control id {ccid})")
        result["line_may_be_up"] = report["line_may_be_up"] = up
        log.error("%s recovered, but the line may still be up: %s", ccid, up)
    report["status"] = result["status"]
    if run_dir is not None:
        try:
            write_atomic(run_dir / "recovery.json", (json.dumps(report, indent=2) + "\n").encode())
            if not (run_dir / "result.json").exists():
                write_atomic(run_dir / "result.json", (json.dumps(result, indent=2) + "\n").encode())
        except OSError as exc:
            log.error("%s: could not write the recovery's artifacts: %s", row.run_id, exc)
    await ledger.finish_request(row.request_id, result)
    log.warning("request %s (%s) was in flight when calld stopped: hangup %s; finished %s",
                row.request_id, ccid or row.run_id, report["hangup"], result["status"])
    return report


async def _call_status(ccid: str, status: Status | None) -> str:
    """After a refused hangup: alive, ended, or why it is not known."""
    if status is None:
        return "not read"
    try:
        info = await status(ccid)
    except Exception as exc:  # noqa: BLE001 - a status that cannot be read says nothing either way
        return f"error: {exc}"
    return "alive" if info.is_alive else "ended"


async def finish_taken_over(ledger: Ledger | AsyncLedger, artifacts_dir: Path) -> list[str]:
    """At start: this daemon's run directories whose call another daemon settled while it was down (the
    ledger has the result, the directory does not). Each is finished as recovery would have: WAV headers
    repaired, result.json the ledger's result, recovery.json saying who settled it. Returns their names."""
    ledger = awaitable(ledger)
    done = []
    for marker in sorted(artifacts_dir.glob(f"*/{RUN_MARKER}")):
        run_dir = marker.parent
        if (run_dir / "result.json").exists():
            continue
        try:
            run_id = json.loads(marker.read_text()).get("run_id")
        except (OSError, ValueError, AttributeError):
            continue
        row = await ledger.request_for_call(run_id) if isinstance(run_id, str) else None
        if row is None or row.status != "done" or row.result is None or row.run_id != run_id:
            continue  # not finished yet (its own recovery does that), or not a call the ledger knows
        report = {"request_id": row.request_id, "run_id": run_id, "call_control_id": row.call_control_id,
                  "settled_by": row.instance or "(a daemon with no instance name)",
                  "hangup": "by the daemon that settled it while this one was down",
                  "artifacts": run_dir.name, "status": row.result.get("status"),
                  "wav_repaired": [p.name for p in sorted(run_dir.glob("audio/*.wav")) if repair_wav(p)]}
        try:
            write_atomic(run_dir / "recovery.json", (json.dumps(report, indent=2) + "\n").encode())
            write_atomic(run_dir / "result.json", (json.dumps(row.result, indent=2) + "\n").encode())
        except OSError as exc:
            log.error("%s: could not finish the run directory another daemon's recovery left: %s", run_id, exc)
            continue
        log.warning("request %s (%s): settled by daemon %r while this one was down; its run directory is finished",
                    row.request_id, run_id, row.instance)
        done.append(run_dir.name)
    return done


def _what_became_of_it(ccid: str | None, stub: bool, hung_up: bool, said: str) -> str:
    if ccid is None:
        return "calld stopped before the carrier named this call; there was no call to hang up"
    if stub:
        return "calld stopped while this call was in flight; a stub call ends with its daemon"
    if hung_up:
        return "calld stopped while this call was in flight; it was hung up on restart (or had ended)"
    return f"calld stopped while this call was in flight; hanging it up on restart failed ({said})"


def dialled_call(run_dir: Path) -> str | None:
    """The call control id the carrier gave this run's dial, as the run directory has it (run.json,
    rewritten at the dial, or dial.json); None when the dial never returned one."""
    for name in (RUN_MARKER, "dial.json"):
        try:
            ccid = json.loads((run_dir / name).read_text()).get("call_control_id")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(ccid, str) and ccid:
            return ccid
    return None


def find_run_dir(artifacts_dir: Path, run_id: str, ccid: str | None) -> Path | None:
    names = [f".pending-{run_id}"]
    if ccid:
        names.append(artifact_slug(ccid))
        names += sorted(p.name for p in artifacts_dir.glob(f"{artifact_slug(ccid)}.*"))
    for name in names:
        if _is_run(artifacts_dir / name, run_id):
            return artifacts_dir / name
    if ccid is None:  # dialled, and the ledger never took the call's id: the directory bears it, so look at every one
        for marker in sorted(artifacts_dir.glob(f"*/{RUN_MARKER}")):
            if _is_run(marker.parent, run_id):
                return marker.parent
    return None


def _is_run(run_dir: Path, run_id: str) -> bool:
    try:
        return json.loads((run_dir / RUN_MARKER).read_text()).get("run_id") == run_id
    except (OSError, ValueError, AttributeError):
        return False


def _result(row: RequestRow, run_dir: Path | None, ccid: str | None, detail: str) -> dict[str, Any]:
    refs: dict[str, str | None] = {"transcript_ref": None, "audio_ref": None}
    if run_dir is not None:
        if _write_transcript(run_dir):
            refs["transcript_ref"] = f"{run_dir.name}/transcript.json"
        if (run_dir / "audio" / "inbound.wav").exists():
            refs["audio_ref"] = f"{run_dir.name}/audio/inbound.wav"
    task = _task(run_dir)
    if task is not None and ccid is not None and refs["transcript_ref"] and refs["audio_ref"]:
        accepted = _accepted(task)
        if accepted is not None:
            return accepted
    failed = results.Failed(run_id=row.run_id, call_control_id=ccid, reason="daemon_restart", detail=detail, **refs)
    return failed.model_dump(mode="json")


def _task(run_dir: Path | None) -> dict[str, Any] | None:
    if run_dir is None:
        return None
    try:
        data = json.loads((run_dir / "task.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _accepted(task: dict[str, Any]) -> dict[str, Any] | None:
    """The result the call would have ended with on the verdict it had accepted (the handle writes it
    into task.json the moment the verdict is accepted); None unless it is a verdict."""
    result = task.get("result_if_interrupted")
    if not isinstance(result, dict) or result.get("status") not in ("answered", "booked", "declined", "voicemail"):
        return None
    return result


def _write_transcript(run_dir: Path) -> bool:
    """transcript.json from the journal's transcript rows, unless the call got to write its own."""
    target = run_dir / "transcript.json"
    if target.exists():
        return True
    turns: tuple[Turn, ...] = ()
    try:
        lines = (run_dir / "events.jsonl").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    for line in lines:
        try:
            event = json.loads(line).get("event") or {}
        except ValueError:
            continue  # the last line may be cut short by the kill
        speaker = {"live.input_transcript": "business", "live.output_transcript": "agent"}.get(event.get("kind"))
        if speaker is None:
            continue
        start, end = event.get("start_ms"), event.get("end_ms")
        turns = add_fragment(turns, speaker, str(event.get("text", "")), start if isinstance(start, int) else None,
                             end if isinstance(end, int) else None)  # grouped as the reducer groups them
    transcript = {
        "turns": [{"speaker": t.speaker, "text": t.text} for t in turns],
        "agent_text": "".join(t.text for t in turns if t.speaker == "agent"),
        "business_text": "".join(t.text for t in turns if t.speaker == "business"),
        "recovered_from": "events.jsonl",
    }
    try:
        write_atomic(target, (json.dumps(transcript, indent=2, ensure_ascii=False) + "\n").encode())
    except OSError:
        return False
    return True


def repair_wav(path: Path) -> bool:
    """Rewrite a WAV's RIFF and data sizes to the bytes actually on disk. True if they were wrong."""
    try:
        with path.open("r+b") as f:
            size = f.seek(0, 2)
            f.seek(0)
            head = f.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return False
            pos = 12
            while pos + 8 <= size:
                f.seek(pos)
                chunk, length = struct.unpack("<4sI", f.read(8))
                if chunk == b"data":
                    actual = size - (pos + 8)
                    actual -= actual % 2  # whole 16-bit samples only
                    riff = pos + actual  # RIFF size counts from byte 8: header chunks + data
                    if length == actual and struct.unpack("<I", _read_at(f, 4, 4))[0] == riff:
                        return False
                    f.seek(pos + 4)
                    f.write(struct.pack("<I", actual))
                    f.seek(4)
                    f.write(struct.pack("<I", riff))
                    return True
                pos += 8 + length + (length & 1)
    except OSError:
        return False
    return False


def _read_at(f: Any, offset: int, n: int) -> bytes:
    f.seek(offset)
    return f.read(n)
