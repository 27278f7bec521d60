"""The question table: the one place per-question policy lives.

Each quick ask has the text a user sees by default, the line the agent speaks
(with `{item}` where the question names one), and the needles the transcript
fallback uses to tell an answer from a decline. Tune needles here, nowhere else.
"""

from __future__ import annotations

import enum
import re

from attrs import frozen


class QuestionType(enum.StrEnum):
    HOURS = "hours"
    STOCK = "stock"
    AISLE = "aisle"


@frozen
class Question:
    kind: QuestionType
    default_text: str
    spoken_ask: str
    takes_item: bool
    answer_needles: tuple[re.Pattern[str], ...]

    def ask_line(self, item: str | None) -> str:
        if self.takes_item:
            if not item:
                raise ValueError(f"--ask {self.kind} needs --item (what to ask about)")
            return self.spoken_ask.format(item=item)
        return self.spoken_ask

    def user_text(self, item: str | None) -> str:
        return self.default_text.format(item=item) if self.takes_item else self.default_text


def _needles(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


QUESTIONS: dict[QuestionType, Question] = {
    QuestionType.HOURS: Question(
        kind=QuestionType.HOURS,
        default_text="What are your hours?",
        spoken_ask="What are your opening hours?",
        takes_item=False,
        answer_needles=_needles(
            r"\b\d{1,2}(:\d{2})?\s*(a\.?m\.?|p\.?m\.?)",
            r"\b(open|close[sd]?)\b.*\b(\d{1,2}|noon|midnight)\b",
            r"\b24 hours\b",
        ),
    ),
    QuestionType.STOCK: Question(
        kind=QuestionType.STOCK,
        default_text="Is {item} in stock?",
        spoken_ask="Do you have {item} in stock right now?",
        takes_item=True,
        answer_needles=_needles(
            r"\b(yes|yeah|yep)\b.*\b(have|got|stock|shelf)",
            r"\b(in stock|on the shelf|we have (some|a few|plenty|them|it))\b",
            r"\b(out of stock|sold out|don't have (any|it|them)|none left)\b",
        ),
    ),
    QuestionType.AISLE: Question(
        kind=QuestionType.AISLE,
        default_text="Which aisle is {item} in?",
        spoken_ask="Which aisle is {item} in?",
        takes_item=True,
        answer_needles=_needles(r"\baisle\s+(\d+|[a-z])\b", r"\b(back|front) of the store\b"),
    ),
}

# A business that will not answer says so in much the same words whatever was asked.
DECLINE_NEEDLES: tuple[re.Pattern[str], ...] = _needles(
    r"\b(can't|cannot|can not|won't|not able to|unable to)\b.*\b(give|share|say|tell|help)",
    r"\bdon't give (that|this|it) out\b",
    r"\bno comment\b",
)
