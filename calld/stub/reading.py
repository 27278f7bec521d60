"""The fake model's reading of what the business said: the typed fields a record carries.

The live model reads the business's words into typed fields (hours as ranges, stock, the aisle) and
cites them. The stub world's stand-in does the same, crudely, for the lines its scenarios say. For
hours it borrows the transcript assessment's reading (calld.evidence.assess.read_hours), and the citation
check's words of no set hours ("by appointment only") where that reads no hours; whether its
fields hold is still the citation check's to decide (calld.evidence.cite, which reads nothing into
the words), and scenarios that script a wrong record give their fields outright
(calld.stub.scenario.ModelRecord.fields).
"""

from __future__ import annotations

import re
from typing import Any

from calld.core.answers import DayRange
from calld.domain.questions import QuestionType
from calld.evidence import vocab as v
from calld.evidence.assess import read_hours
from calld.evidence.cite import no_set_hours_said


def question_of(instructions: str) -> QuestionType:
    """Which question the session asks, from its instructions (the ask line is in them)."""
    if "in stock" in instructions:
        return QuestionType.STOCK
    if "Which aisle" in instructions:
        return QuestionType.AISLE
    return QuestionType.HOURS


def fields(question: QuestionType, heard: str) -> dict[str, Any]:
    """The typed fields of an answer to `question` read from `heard`: hours, stock and aisle (two null)."""
    out: dict[str, Any] = {"hours": None, "stock": None, "aisle": None}
    match question:
        case QuestionType.HOURS:
            if ranges := hours(heard):
                out["hours"] = {"ranges": ranges, "no_set_hours": False}
            elif no_set_hours_said(heard):  # "by appointment only, there aren't set hours"
                out["hours"] = {"ranges": [], "no_set_hours": True}
            else:  # no hours it can read: no hours field, a record the citation check can judge
                out["hours"] = None
        case QuestionType.STOCK:
            out["stock"] = stock(heard)
        case QuestionType.AISLE:
            out["aisle"] = {"location": aisle(heard)}
    return out


def hours(heard: str) -> list[dict[str, Any]]:
    """Ranges of days with times, sentence by sentence, read as the transcript assessment reads them;
    where that finds the words ambiguous, the first clause's own reading, for no day in particular
    ("in winter we close at 5, and in summer at 8": closing at 5)."""
    ranges = [r for a, b in v.sentence_spans(heard) for r in read_hours(heard[a:b])]
    if not ranges:
        first = next((rs for clause in v.normal_clauses(heard) if (rs := read_hours(clause))), [])
        ranges = [DayRange((), r.opens, r.closes, r.closed, r.date, r.around_the_clock) for r in first[:1]]
    return [{"days": list(r.days), "opens": r.opens, "closes": r.closes, "closed": r.closed,
             "around_the_clock": r.around_the_clock, "date": r.date} for r in ranges]


# Ways of saying they do not have it now: out, none or zero, sold the last, on back order, not now.
_OUT = re.compile(r"\b(?:out of stock|sold out|all out|out of (?:those|them|it)|(?:we're|we are) (?:all |completely |totally )?out|"
                  r"ran out|run out|on back ?order|backordered|sold (?:the|our) last|none|0 (?:left|in stock|of (?:those|them))|"
                  r"have 0|no more|not (?:in stock|right now|at the moment|currently|today)|discontinued|"
                  r"don't have|do not have|dont have|don't carry|do not carry|dont carry|no longer|online only|"
                  r"only (?:sell|have|carry) (?:those|them|it|that) online|not in (?:the )?store|"
                  # gone for now, or only coming: "all gone for today", "we should be getting some in Thursday"
                  r"all gone|(?:should be|will be|we'll be|be) getting (?:some|more|them|it|those) in|order (?:it|them|one) in)\b"
                  r"|^(?:no|nope|nah|not)\b(?! problem| worries)")  # "no, but the store down the road has them"
_LIMITED = re.compile(r"\b(?:only|last|just a few|a few|a couple|few left|not many|running low|low on|limited|[1-5] (?:\w+ ){0,2}left)\b")
# a count: "6 of those", "2 sourdough loaves left", "2 sets of those", "we have 1 copy"
_COUNT = re.compile(r"\b(\d+) (?:of (?:those|them|each)|(?:\w+ ){0,2}left|in stock|on the shelf|units|bags|boxes|sets|copies|copy)\b"
                    r"|\b(?:got|have|has) (?:about |around )?(\d+)\b(?! (?:am|pm|o'clock|inch|in\b))")
# not knowing, in words: it might be there, the computer says so but nobody can find it, they'd have to check
_UNSURE = re.compile(r"\b(?:might be|may be|not sure|couldn't tell you|can't tell you|don't know|dunno|(?:i'd|i would|we'd) have to check|"
                     r"can't find (?:it|them|any))\b")


# one kind had, another not: "we've got the 10 inch, not the 12"
_ONE_NOT_THE_OTHER = re.compile(r"\b(?:got|have) the ([\w-]+(?: [\w-]+)?),? (?:but )?not the ([\w-]+(?: [\w-]+)?)\b")


def _kinds(said: str) -> list[dict[str, Any]] | None:
    """Kinds had and not had, in the normal form: the first kind in stock and the second out."""
    m = _ONE_NOT_THE_OTHER.search(said)
    if m is None:
        return None
    had, not_had = m.group(1), m.group(2)
    if re.fullmatch(r"\d+", not_had) and (unit := re.fullmatch(r"\d+ (\w+)", had)):
        not_had = f"{not_had} {unit.group(1)}"  # "the 10 inch, not the 12": the 12 inch
    return [{"kind": had, "availability": "in_stock", "quantity": None},
            {"kind": not_had, "availability": "out_of_stock", "quantity": None}]


def stock(heard: str) -> dict[str, Any]:
    said = v.normal(heard)
    if _OUT.search(said):
        return {"availability": "out_of_stock", "quantity": None, "kinds": []}
    if _UNSURE.search(said):
        return {"availability": "unknown", "quantity": None, "kinds": []}
    if (kinds := _kinds(said)) is not None:
        return {"availability": "some_kinds", "quantity": None, "kinds": kinds}
    count = _COUNT.search(said)
    quantity = int(count.group(1) or count.group(2)) if count else None
    availability = "limited" if _LIMITED.search(said) else "in_stock"
    return {"availability": availability, "quantity": quantity, "kinds": []}


_PLACE = re.compile(r"\b(?:aisle \w+|[\w-]+ (?:department|section|counter|wall)|(?:back|front) of the store|end ?cap|garden cent(?:er|re))\b",
                    re.I)


_MOVED = re.compile(r"\b(?:moved|used to|anymore|no longer)\b", re.I)


_NUMBER = r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty"
# an aisle said, then taken back for another number: "Aisle five, no sorry, six", "aisle 12, actually 13"
_CORRECTED = re.compile(rf"\b(aisle) (?:{_NUMBER})\b[,.]? (?:(?:no|sorry|wait|actually|oops)[,.]? )+(?:it's |its |aisle )?({_NUMBER})\b", re.I)


def aisle(heard: str) -> str:
    """The place named, with the places that narrow it in the same clause ("the endcap at the end of aisle
    4"); where the words say it moved ("it used to be in aisle 5, now it's in 9"), the last one."""
    if (fixed := _CORRECTED.search(heard)) is not None:
        return f"{fixed.group(1)} {fixed.group(2)}"
    places = list(_PLACE.finditer(heard))
    if not places:
        return heard.strip().rstrip(".")
    if _MOVED.search(heard):
        return places[-1].group()
    first = places[0]
    same_clause = [m for m in places if not re.search(r"[,.;!?]| and | but | or ", heard[first.end():m.start()])]
    return heard[first.start():same_clause[-1].end()]
