"""Conversations written outside the check, run through its one entry point (calld.evidence.check_record).

    uv run python bench/evidence_corpus.py bench/corpora/rv19.jsonl.gz [more files] [--detail]
    uv run python bench/evidence_corpus.py --schema /tmp/schema.json    # what a corpus writer may read

A corpus is JSON lines (plain or gzipped), one case a line: the call so far, the record the model sent after it, and
whether that record is what the business said:

    {"id": "b001", "job": "book" | "quick_ask", "question": "hours" | "stock" | "aisle", "item": "..." | null,
     "party": 4, "time": "Friday 7pm", "when": "2026-12-11T19:00:00-05:00" | null, "today": "2026-12-06" | null,
     "window_minutes": 30, "turns": [["agent", "..."], ["business", "..."]], "record": {...the tool call's arguments...},
     "truth": "true" | "wrong", "plain": true | false, "kind": "booked" | "declined" | "hours" | ..., "note": "..."}

Prints true records accepted and wrong records accepted (plain ones apart), by kind; --detail prints each case the
check got wrong. A record the tool's schema refuses is the writer's slip: reported, not counted. bench/corpora/BRIEF.md
is what the writers of the corpora beside it were given (they read the schema and this script, never the checker);
docs/evidence.md says which corpus is which and what each measured.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from calld.adapters import gpt_live
from calld.core.plan import BookJob, QuickAskJob, build_book_plan, build_plan
from calld.core.plan import Timings
from calld.domain.ids import E164, FirstName, RunId, UserId
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import Accepted, check_record


def request(case: dict[str, Any]) -> QuickAskJob | BookJob:
    if case["job"] == "book":
        return BookJob(int(case["party"]), case.get("time") or "", None, int(case.get("window_minutes") or 0),
                       E164("+15555550100"), when=case.get("when"), today=case.get("today"))
    return QuickAskJob(QuestionType(case["question"]), case.get("item"))


def cases(path: Path) -> list[dict[str, Any]]:
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def schema() -> dict[str, Any]:
    """The tools' schemas and the voice model's instructions for each kind of call: all a corpus writer reads."""
    common: dict[str, Any] = {"run_id": RunId.new(), "user_id": UserId("corpus"), "first_name": FirstName("Nathan"),
                              "to": E164("+15555550142"), "from_": E164("+15555550100"), "command_id": "corpus",
                              "live_model": "gpt-live-1", "backend_model": "gpt-5.5", "reasoning_effort": "low",
                              "voice": "marin", "timings": Timings()}
    out: dict[str, Any] = {"book_tools": gpt_live._tools("book"), "quick_ask_tools": gpt_live._tools("quick_ask")}
    book = build_book_plan(**common, party=2, time="Friday 7pm", notes=None, window_minutes=30)
    out["book_instructions"] = book.live.instructions
    for q in QuestionType:
        plan = build_plan(**common, question=q, item="cast iron skillet" if q.value in ("stock", "aisle") else None)
        out[f"quick_ask_{q.value}_instructions"] = plan.live.instructions
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--detail", action="store_true", help="print each case the check got wrong")
    ap.add_argument("--schema", type=Path, help="write the tools' schemas and instructions here, and stop")
    args = ap.parse_args(argv)
    if args.schema:
        args.schema.write_text(json.dumps(schema(), indent=1))
        return 0
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    slips = 0
    for path in args.files:
        for case in cases(path):
            verdict = check_record(json.dumps(case["record"]), request(case), [Turn(s, t) for s, t in case["turns"]])
            if not isinstance(verdict, Accepted) and verdict.why.startswith("invalid arguments"):
                slips += 1
                print(f"{path.name}: {case.get('id')}: the record breaks the tool's schema: {verdict.why}", file=sys.stderr)
                continue
            ok, truth = isinstance(verdict, Accepted), case["truth"]
            for key in [(truth, "all"), (truth, case.get("kind", "?"))] + ([("wrong", "plain")] if truth == "wrong" and case.get("plain") else []):
                tally[key][0] += ok
                tally[key][1] += 1
            if args.detail and ok != (truth == "true"):
                print(f"--- {case['id']} {truth} {case.get('kind')} {'ACCEPTED' if ok else 'REFUSED: ' + verdict.why}")
                print(f"    note: {case.get('note', '')}")
                for speaker, text in case["turns"]:
                    print(f"    {speaker[0]}: {text}")
                print(f"    record: {json.dumps(case['record'])}")
    for (truth, kind), (accepted, n) in sorted(tally.items()):
        print(f"{truth:5} {kind:12} accepted {accepted}/{n} ({100 * accepted / max(n, 1):.1f}%)")
    if slips:
        print(f"records breaking the schema (not counted): {slips}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
