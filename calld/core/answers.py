"""The typed answer a record carries: the model's reading of the business's words, as fields.

The model fills them (record_task_result); the evidence check (calld.evidence.check_record) accepts them
only when every time, day, number and place in them stands in the business's quoted words. Once
accepted they are the result's typed answer as they are: the app never reads English into them.
Contradictory shapes (times on a closed day, kinds without some_kinds, ranges beside no set hours) are refused at
the wire.
"""

from __future__ import annotations

from attrs import frozen

from calld.domain.transcript import Quote


@frozen
class DayRange:
    days: tuple[str, ...]  # weekday names; empty when the business named none ("until nine tonight")
    opens: str | None  # HH:MM, 24-hour
    closes: str | None
    closed: bool = False
    date: str | None = None  # "today", "tomorrow", or a date as said ("December 24")
    around_the_clock: bool = False  # "open 24 hours": no times, never closed


@frozen
class Hours:
    ranges: tuple[DayRange, ...]


@frozen
class NoSetHours:
    """The business said it keeps no set hours ("by appointment only", "there aren't set hours", "it varies, call
    ahead"): an hours answer of its own, with no ranges, so no value can hold both hours and none."""


HoursReading = Hours | NoSetHours  # the hours answer: ranges of days and times, or no set hours


@frozen
class KindStock:
    kind: str  # as the business named it: "12-inch", "deluxe ones"
    availability: str
    quantity: int | None


@frozen
class Stock:
    availability: str  # in_stock | out_of_stock | limited | some_kinds | unknown
    quantity: int | None
    kinds: tuple[KindStock, ...] = ()  # some_kinds only


@frozen
class Aisle:
    location: str


@frozen
class TextOnly:
    """No typed reading: the words are the answer (answer_text holds them)."""


Answer = Hours | NoSetHours | Stock | Aisle | TextOnly


# -- what a record points at: each fact with the words that state it ------------------------------------


@frozen
class Fact:
    """One typed fact of a record and the business's words the model points at for it.

    `kind` says how its value stands in `quote`: a clock time (`clock`, HH:MM), an opening and a closing
    (`range`, HH:MM-HH:MM: two readings of the one quote), weekdays (`days`, comma
    separated), a date (`date`: weekdays, today/tomorrow, a month and day), a number (`count`), a place or a
    kind by its words (`place`, `kind`), a word of one list (`closed`, `always`, `no_set_hours`), or the outcome
    itself (`yes`, `no`: something is, or is not). `readback`: the value stands in the agent's question that the
    record's outcome quote answers, not in `quote`. `context`: the quote a bare "half past" takes its hour from.
    `item`: the words (or the question they answer) must name the item asked about. `topic`: `stock` or `booking`,
    where a yes or a no is read against that topic's word list too. `days`: the weekdays a time is for. `beside`: the quote of a time's days."""

    kind: str
    value: str
    quote: str | None
    readback: bool = False
    context: str | None = None
    item: bool = False
    topic: str = ""
    days: tuple[str, ...] = ()  # a time's days (an hours range's), so words about other days are not about it
    beside: str | None = None  # its range's days_quote: said with no other day or time between the two


@frozen
class Cited:
    """A terminal record as the checker sees it: its status, its facts, the words of its outcome, an opt-out."""

    status: str
    facts: tuple[Fact, ...]
    outcome: Fact | None
    opt_out_quote: str | None = None


@frozen
class Accepted:
    """The evidence check's yes to a record (calld.evidence.check_record): where the business said it."""

    quotes: tuple[Quote, ...]  # the business sentences the record's quotes stand in: the result's evidence
    reason: str | None = None  # declined: the reason code
    opt_out: Quote | None = None  # where the business said the record's opt_out_quote


@frozen
class Refused:
    """The evidence check's no: the rule a record broke, what was checked, what to do instead."""

    rule: int
    why: str  # said to the model, and journaled
    next: str  # what the model should do instead
    opt_out: Quote | None = None

    @property
    def text(self) -> str:
        return f"rule {self.rule}: {self.why}; {self.next}"


Verdict = Accepted | Refused
