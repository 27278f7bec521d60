"""The call timeline picture: one finished call drawn on one time axis.

`build_timeline` turns a call's artifacts into plain data (state spans per track, speech
bars with their words, markers, bands); `draw` renders that data with matplotlib (Agg,
no pyplot, no display). Every drawn element carries a gid naming what it is and its
times in ms (e.g. `speech/business/1/7040/9120`), so the SVG can be checked by a program
as well as read by a person.

Times are the call's clock (ms since the call began, as in events.jsonl). Times given in
audio/inbound.wav (evidence, per-turn times) are moved onto it by where the recording
starts: the first inbound frame in the journal.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any, Literal

from attrs import frozen

from calld.observe.artifacts import WORD_MS, RunArtifacts, load_run, refused_records

TIMELINE_NAME = "timeline.svg"
TRACK_ROWS: tuple[tuple[str, str], ...] = (
    ("dial", "dial"), ("telnyx", "Telnyx"), ("media", "media"), ("live", "GPT-Live"),
    ("conversation", "conversation"), ("hangup", "hangup"),
)
SPEECH_GAP_MS = 1500  # transcript deltas further apart than this start a new bar
LABEL_CHARS = 72  # longer speech is cut with an ellipsis (the transcript has every word)

Speaker = Literal["business", "agent"]


@frozen
class StateSpan:
    track: str
    state: str
    start_ms: int
    end_ms: int


@frozen
class SpeechBar:
    speaker: Speaker
    start_ms: int
    end_ms: int
    text: str
    on_line: bool = True  # False: agent words GPT-Live spoke that calld kept off the line (drawn hollow)


@frozen
class Marker:
    kind: str  # tool, refused, dtmf, amd, mark_sent, mark_echo, clear, hangup_sent, call_hangup, failure
    t_ms: int
    label: str


@frozen
class Band:
    kind: str  # hold, trail, evidence, pickup (callee audio held before GPT-Live was ready)
    start_ms: int
    end_ms: int
    label: str


@frozen
class Timeline:
    title: str
    subtitle: str
    duration_ms: int
    states: tuple[StateSpan, ...]
    speech: tuple[SpeechBar, ...]
    markers: tuple[Marker, ...]
    bands: tuple[Band, ...]


# -- from artifacts to data ------------------------------------------------------------------------


def build_timeline(run: RunArtifacts) -> Timeline:
    last_row = max((int(r.get("t_ms", 0)) for r in run.rows), default=0)
    end = max(run.duration_ms, last_row, 1)
    return Timeline(
        title=_title(run, end),
        subtitle=_subtitle(run),
        duration_ms=end,
        states=tuple(_states(run.report, end)),
        speech=tuple(_speech(run)),
        markers=tuple(_markers(run)),
        bands=tuple(_bands(run)),
    )


def _title(run: RunArtifacts, end: int) -> str:
    rep, res = run.report, run.result
    who = rep.get("call_control_id") or rep.get("run_id") or run.path.name
    what = rep.get("question") or rep.get("job") or ""
    if rep.get("item"):
        what += f" ({rep['item']})"
    status = res.get("status", rep.get("status", "?"))
    if (reason := _reason_code(res)) and reason != status:
        status += f"/{reason}"
    if (source := res.get("verdict_source") or rep.get("verdict_source")) and source != "none":
        status += f" via {source}"
    return f"{who}  |  {what}  |  {status}  |  {end / 1000:.1f} s  |  {rep.get('started_at', '')}"


def _reason_code(result: dict[str, Any]) -> str | None:
    """The taxonomy code when result.json has one (a short token), not a sentence."""
    reason = result.get("reason")
    return reason if isinstance(reason, str) and reason and " " not in reason and len(reason) <= 40 else None


def _subtitle(run: RunArtifacts) -> str:
    res, rep = run.result, run.report
    quotes = [q for q in res.get("evidence") or [] if isinstance(q, dict) and q.get("quote")]
    if quotes:
        q = quotes[0]
        where = (f" at {run.call_ms(q['start_ms']) / 1000:.1f}-{run.call_ms(q['end_ms']) / 1000:.1f} s (highlighted)"
                 if isinstance(q.get("start_ms"), int | float) and isinstance(q.get("end_ms"), int | float) else "")
        said = f"  |  the business said: \u201c{q['quote']}\u201d{where}"
    else:
        said = ""
    if res.get("answer_text"):
        return f"answer: {res['answer_text']}{said}"
    if res.get("confirmation_text"):
        return f"booked: {res['confirmation_text']}{said}"
    text = res.get("reason") or rep.get("failure") or res.get("hangup_cause")
    return f"{res.get('status', '')}: {text}" if text else str(res.get("status", ""))


def _states(report: dict[str, Any], end: int) -> list[StateSpan]:
    spans = []
    for track, _label in TRACK_ROWS:
        moves = report.get("timing_ms", {}).get(track) or []
        for i, move in enumerate(moves):
            start = int(move["t_ms"])
            stop = int(moves[i + 1]["t_ms"]) if i + 1 < len(moves) else end
            if stop > start or (i + 1 == len(moves) and stop == start):
                spans.append(StateSpan(track, move["state"], start, max(stop, start)))
    return spans


def _speech(run: RunArtifacts) -> list[SpeechBar]:
    turns = run.turns
    if turns and all(isinstance(t.get("start_ms"), int | float) and isinstance(t.get("end_ms"), int | float) for t in turns):
        return [SpeechBar(t["speaker"], run.call_ms(t["start_ms"]), run.call_ms(t["end_ms"]), t.get("text", "").strip(),
                          t.get("on_line") is not False)
                for t in turns if t.get("speaker") in ("business", "agent")]
    bars: list[SpeechBar] = []
    open_: dict[str, list[Any]] = {}  # speaker -> [start, last, words]
    for row in run.rows:
        event = row.get("event") or {}
        speaker = {"live.input_transcript": "business", "live.output_transcript": "agent"}.get(event.get("kind", ""))
        if speaker is None or "ignored" in row:
            continue
        t = int(row["t_ms"])
        cur = open_.get(speaker)
        if cur is not None and t - cur[1] > SPEECH_GAP_MS:
            bars.append(SpeechBar(speaker, cur[0], cur[1] + WORD_MS, "".join(cur[2]).strip()))  # type: ignore[arg-type]
            cur = None
        if cur is None:
            open_[speaker] = cur = [t, t, []]
        cur[1] = t
        cur[2].append(event.get("text", ""))
    for speaker, cur in open_.items():
        bars.append(SpeechBar(speaker, cur[0], cur[1] + WORD_MS, "".join(cur[2]).strip()))  # type: ignore[arg-type]
    return sorted(bars, key=lambda b: (b.start_ms, b.speaker))


def _markers(run: RunArtifacts) -> list[Marker]:
    refused = refused_records(run.rows)
    markers: list[Marker] = []
    for row in run.rows:
        t = int(row.get("t_ms", 0))
        if (event := row.get("event")) is not None:
            kind = event.get("kind", "")
            if kind.startswith("tool."):
                name = event.get("name") if kind == "tool.rejected" else kind.removeprefix("tool.")
                label = str(name) + (f": {event['status']}" if event.get("status") else "")
                why = refused.get(int(row.get("seq", -1))) or event.get("error") or event.get("why")
                if kind == "tool.rejected" or "refus" in kind or row.get("refused") or why:
                    markers.append(Marker("refused", t, f"{label} refused ({why or row.get('refused') or 'not accepted'})"))
                elif "ignored" not in row and "dtmf" not in kind:  # a press is drawn from its effect
                    markers.append(Marker("tool", t, label))
            elif kind == "media.mark" and "ignored" not in row:
                markers.append(Marker("mark_echo", t, "mark echoed"))
            elif kind == "telnyx.call.hangup":
                markers.append(Marker("call_hangup", t, f"call.hangup ({event.get('cause', '?')}, {event.get('source', '?')})"))
            elif "machine" in kind or "amd" in kind:
                markers.append(Marker("amd", t, f"AMD: {event.get('result', '?')}"))
            elif kind == "call.crashed":
                markers.append(Marker("failure", t, f"crashed: {event.get('error', '')}"))
        elif (effect := row.get("effect")) is not None:
            kind = effect.get("kind", "")
            if kind == "media.mark":
                markers.append(Marker("mark_sent", t, "final mark sent"))
            elif kind == "hangup":
                markers.append(Marker("hangup_sent", t, f"hangup sent (via {effect.get('via', '?')})"))
            elif "dtmf" in kind:
                markers.append(Marker("dtmf", t, f"DTMF {effect.get('digits', '?')}"))
            elif kind == "media.clear":
                markers.append(Marker("clear", t, "clear"))
    return markers


def _ms(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else None


def _bands(run: RunArtifacts) -> list[Band]:
    bands: list[Band] = []
    end = run.duration_ms
    for hold in run.report.get("holds") or []:
        start = _ms(hold.get("start_ms", hold.get("start")))
        if start is None:
            continue
        stop = _ms(hold.get("end_ms", hold.get("end")))
        how = hold.get("ended") or hold.get("how") or hold.get("outcome") or ""
        cue = hold.get("cue") or ""
        bands.append(Band("hold", start, stop if stop is not None else end, f"hold ({cue}){': ' + how if how else ''}"))
    counts = run.report.get("counts") or {}
    live_ready = next((m["t_ms"] for m in (run.report.get("timing_ms") or {}).get("live") or [] if m["state"] == "active"), None)
    if counts.get("held_frames") and run.inbound_audio_at_ms is not None and live_ready is not None:
        dropped = counts.get("dropped_frames", 0)
        bands.append(Band("pickup", run.inbound_audio_at_ms, live_ready,
                          f"held {counts['held_frames']} frames until GPT-Live was ready"
                          + (f", {dropped} dropped" if dropped else ", none dropped")))
    echo = run.report.get("final_mark_echo_ms")
    hung = (run.report.get("hangup") or {}).get("requested_at_ms")
    if isinstance(echo, int) and isinstance(hung, int) and hung >= echo:
        bands.append(Band("trail", echo, hung, f"trail {hung - echo} ms"))
    turns = run.turns
    for quote in run.result.get("evidence") or []:
        start, stop = quote.get("start_ms"), quote.get("end_ms")
        if not isinstance(start, int | float) or not isinstance(stop, int | float):
            turn = turns[quote["turn"]] if isinstance(quote.get("turn"), int) and 0 <= quote["turn"] < len(turns) else {}
            start, stop = turn.get("start_ms"), turn.get("end_ms")
        if isinstance(start, int | float) and isinstance(stop, int | float):
            bands.append(Band("evidence", run.call_ms(start), run.call_ms(stop), f"evidence: \u201c{quote.get('quote', '')}\u201d"))
    return bands


# -- drawing ---------------------------------------------------------------------------------------

_STATE_COLOURS = {
    **dict.fromkeys(("idle", "none", "waiting", "pending"), "#eeeeee"),
    **dict.fromkeys(("requested", "initiated", "starting", "connected"), "#cfe3f7"),
    **dict.fromkeys(("accepted", "answered", "streaming", "active", "talking"), "#a8dba8"),
    **dict.fromkeys(("farewell", "draining", "marked", "trailing", "closing", "concluded"), "#f7d58b"),
    **dict.fromkeys(("ended", "stopped", "closed", "done"), "#c4c4de"),
    **dict.fromkeys(("rejected", "failed"), "#f29b9b"),
}
_SPEAKER_COLOURS = {"business": "#4f81bd", "agent": "#9b59b6"}
_MARKER_COLOURS = {
    "tool": "#2e7d32", "refused": "#c62828", "dtmf": "#6a1b9a", "amd": "#00838f", "mark_sent": "#ef6c00",
    "mark_echo": "#e65100", "clear": "#795548", "hangup_sent": "#37474f", "call_hangup": "#000000", "failure": "#c62828",
}
_LANE = 0.55  # height of one label lane, in rows
_FONT = 8.0
_DPI = 100
_render_lock = threading.Lock()  # matplotlib's rc settings are process-wide; one render at a time


def _clip(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _lanes(items: list[tuple[float, str]], px_per_s: float, x_max: float) -> list[tuple[int, float]]:
    """A label lane and left edge for each (x in s, text): no label overlaps another in its lane,
    and a label that would run past the right edge is moved left until it fits."""
    char_px = _FONT * _DPI / 72 * 0.58
    ends: list[float] = []
    out = []
    for x, text in items:
        width_s = (len(text) * char_px + 8) / px_per_s
        left = max(min(x, x_max - width_s), 0.0)
        lane = next((i for i, e in enumerate(ends) if e <= left), len(ends))
        if lane == len(ends):
            ends.append(0.0)
        ends[lane] = left + width_s
        out.append((lane, left))
    return out


def draw(tl: Timeline, out: Path) -> Path:
    """Render `tl` to `out` (.svg or .png). Thread-safe; no display is needed."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    end_s = tl.duration_ms / 1000
    width_in = min(max(12.0, 8.0 + end_s * 0.075), 32.0)
    axes_px = (width_in - 1.9) * _DPI
    px_per_s = axes_px / (end_s * 1.06)

    speech = {s: [b for b in tl.speech if b.speaker == s] for s in ("business", "agent")}
    speech_labels = {s: [_clip(b.text if b.on_line else f"(not on the line) {b.text}") for b in bars]
                     for s, bars in speech.items()}
    x_max = end_s * 1.06
    speech_lanes = {s: _lanes([(b.start_ms / 1000, t) for b, t in zip(bars, speech_labels[s], strict=True)], px_per_s, x_max)
                    for s, bars in speech.items()}
    markers = sorted(tl.markers, key=lambda m: m.t_ms)
    marker_lanes = _lanes([(m.t_ms / 1000, " " + m.label + " ") for m in markers], px_per_s, x_max)

    # Rows top to bottom: the six tracks, then business and agent speech, then the markers.
    rows: list[tuple[str, str, float, float]] = []  # key, label, top, height
    y = 0.0
    for key, label in TRACK_ROWS:
        rows.append((key, label, y, 1.0))
        y += 1.0
    for s in ("business", "agent"):
        h = 1.0 + (max((lane for lane, _a in speech_lanes[s]), default=-1) + 1) * _LANE
        rows.append((s, f"{s} says", y, h))
        y += h
    h = 0.8 + (max((lane for lane, _a in marker_lanes), default=-1) + 1) * _LANE
    rows.append(("events", "events", y, h))
    y += h
    top_of = {key: top for key, _l, top, _h in rows}

    with _render_lock, matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "calld-timeline",
                                              "font.size": _FONT}):
        fig = Figure(figsize=(width_in, 1.3 + y * 0.34), dpi=_DPI)
        ax = fig.add_axes((1.5 / width_in, 0.45 / (1.3 + y * 0.34), axes_px / _DPI / width_in, y * 0.34 / (1.3 + y * 0.34)))
        ax.set_xlim(0, x_max)
        ax.set_ylim(y, 0)
        ax.set_yticks([top + h / 2 if k not in ("business", "agent", "events") else top + 0.5 for k, _l, top, h in rows])
        ax.set_yticklabels([label for _k, label, _t, _h in rows])
        ax.set_xlabel("seconds since the call began")
        for _k, _l, top, _h in rows[1:]:
            ax.axhline(top, color="#dddddd", lw=0.6, zorder=0)
        ax.grid(axis="x", color="#eeeeee", lw=0.5, zorder=0)
        fig.suptitle(tl.title, x=0.01, ha="left", fontsize=_FONT + 2, fontweight="bold")
        fig.text(0.01, 1 - 0.55 / (1.3 + y * 0.34), _clip(tl.subtitle, 220), ha="left", va="top", fontsize=_FONT + 1,
                 gid="subtitle")

        for i, band in enumerate(tl.bands):
            x0, x1 = band.start_ms / 1000, max(band.end_ms, band.start_ms + 1) / 1000
            gid = f"band/{band.kind}/{i}/{band.start_ms}/{band.end_ms}"
            if band.kind == "hold":
                ax.add_patch(Rectangle((x0, 0), x1 - x0, y, color="#9e9e9e", alpha=0.18, lw=0, zorder=0.5, gid=gid))
                ax.text(x0, 0.05, " " + band.label, va="top", ha="left", fontsize=_FONT, color="#424242", gid=gid + "/label")
            elif band.kind == "trail":
                top = top_of["hangup"]
                ax.add_patch(Rectangle((x0, top + 0.1), x1 - x0, 0.8, fill=False, hatch="////", ec="#e65100", lw=0.6,
                                       zorder=2, gid=gid))
            elif band.kind == "pickup":
                top = top_of["business"]
                # A strip above the speech bar: the words were said then, and reached GPT-Live later.
                ax.add_patch(Rectangle((x0, top + 0.05), x1 - x0, 0.13, fill=False, hatch="xxxx", ec="#4f81bd", lw=0.6,
                                       zorder=2, gid=gid))
                ax.text(x1, top + 0.115, " " + band.label, va="center", ha="left", fontsize=_FONT - 1, color="#4f81bd",
                        gid=gid + "/label", zorder=6)
            elif band.kind == "evidence":
                top = top_of["business"]
                ax.add_patch(Rectangle((x0, top + 0.02), x1 - x0, 0.76, color="#ffd54f", alpha=0.9, lw=0, zorder=1, gid=gid))

        for span in tl.states:
            top = top_of[span.track]
            x0, w = span.start_ms / 1000, (span.end_ms - span.start_ms) / 1000
            gid = f"state/{span.track}/{span.state}/{span.start_ms}/{span.end_ms}"
            ax.add_patch(Rectangle((x0, top + 0.15), w, 0.7, fc=_STATE_COLOURS.get(span.state, "#e0e0e0"), ec="white",
                                   lw=0.8, zorder=1, gid=gid))
            if w * px_per_s > len(span.state) * _FONT * 0.62 + 4:
                ax.text(x0 + w / 2, top + 0.5, span.state, ha="center", va="center", fontsize=_FONT - 0.5, zorder=3,
                        gid=gid + "/label")

        for s in ("business", "agent"):
            top = top_of[s]
            for i, (bar, text, (lane, left)) in enumerate(zip(speech[s], speech_labels[s], speech_lanes[s], strict=True)):
                x0, w = bar.start_ms / 1000, max(bar.end_ms - bar.start_ms, 1) / 1000
                gid = f"speech/{s}/{i}/{bar.start_ms}/{bar.end_ms}"
                if bar.on_line:
                    ax.add_patch(Rectangle((x0, top + 0.2), w, 0.4, fc=_SPEAKER_COLOURS[s], ec="none", zorder=2, gid=gid))
                else:
                    ax.add_patch(Rectangle((x0, top + 0.2), w, 0.4, fc="none", ec=_SPEAKER_COLOURS[s], ls="--", lw=0.8,
                                           zorder=2, gid=gid + "/off_line"))
                ax.text(left, top + 0.95 + lane * _LANE, text, ha="left", va="center", fontsize=_FONT, color="#212121",
                        zorder=4, gid=f"words/{s}/{i}")

        top = top_of["events"]
        for i, (m, (lane, left)) in enumerate(zip(markers, marker_lanes, strict=True)):
            x = m.t_ms / 1000
            colour = _MARKER_COLOURS.get(m.kind, "#424242")
            gid = f"marker/{m.kind}/{i}/{m.t_ms}"
            if m.kind in ("refused", "dtmf", "mark_echo", "hangup_sent", "failure", "amd"):
                ax.axvline(x, color=colour, lw=0.7, ls="--", alpha=0.6, zorder=1.5, gid=gid + "/rule")
            ax.plot([x, x], [top + 0.1, top + 0.6], color=colour, lw=2, solid_capstyle="butt", zorder=5, gid=gid)
            ax.text(left, top + 0.9 + lane * _LANE, f" {m.label} ", ha="left", va="center", fontsize=_FONT, color=colour,
                    zorder=5, fontweight="bold" if m.kind == "refused" else "normal", gid=gid + "/label")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=_DPI, metadata={"Date": None} if out.suffix.lower() == ".svg" else None)
    return out


def write_timeline(run_dir: Path, out: Path | None = None) -> Path:
    """Draw the call in `run_dir` to `out` (default: its timeline.svg). Reads artifacts only."""
    return draw(build_timeline(load_run(run_dir)), out or run_dir / TIMELINE_NAME)


def check_picture(svg: Path, run_dir: Path) -> list[str]:
    """Read a drawn timeline back and say what it fails to show of the call (empty: it shows it all):
    every track, each speaker who spoke, the final mark's echo and the hangup at their times, the evidence."""
    import xml.etree.ElementTree as ET

    run = load_run(run_dir)
    ids = {g.get("id") for g in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}g") if g.get("id")}
    problems = []
    for track in run.report.get("timing_ms") or {}:
        if not any(i.startswith(f"state/{track}/") for i in ids):
            problems.append(f"no {track} row")
    for speaker in {t.get("speaker") for t in run.turns} & {"business", "agent"}:
        if not any(i.startswith(f"speech/{speaker}/") for i in ids):
            problems.append(f"no {speaker} speech")
    expected = {"mark_echo": run.report.get("final_mark_echo_ms"),
                "hangup_sent": (run.report.get("hangup") or {}).get("requested_at_ms")}
    for kind, t_ms in expected.items():
        if t_ms is not None and not any(i.startswith(f"marker/{kind}/") and i.endswith(f"/{t_ms}") for i in ids):
            problems.append(f"no {kind.replace('_', ' ')} marker at {t_ms} ms")
    quotes = [q for q in run.result.get("evidence") or [] if isinstance(q, dict)]
    if quotes and not any(i.startswith("band/evidence/") for i in ids):
        problems.append("the evidence is not highlighted")
    return problems
