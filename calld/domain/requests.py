"""What a user asks for, validated at the boundary (CLI flags, control API bodies)."""

from __future__ import annotations

import re
from typing import Annotated, Self

from pydantic import (BaseModel, BeforeValidator, ConfigDict, StringConstraints, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from calld.domain.fields import FLAGS
from calld.domain.ids import DEFAULT_REGION, E164, FirstName, UserId, typed_number
from calld.domain.questions import QUESTIONS, QuestionType
from calld.domain.words import control_problem, plain_text

ITEM_MAX = 120


def _item(value: object) -> object:
    if not isinstance(value, str):
        return value
    if not value.strip():  # else pydantic's "at least 1 item after validation", which says nothing to a user
        raise ValueError('--item is empty: say what to ask about, e.g. --item "cast iron skillet"')
    return plain_text(value, flag="--item", max_length=ITEM_MAX)


# What to ask about: the user's words, carried as data (calld.domain.words), never as instructions.
Item = Annotated[str, BeforeValidator(_item), StringConstraints(strip_whitespace=True, min_length=1, max_length=ITEM_MAX)]
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}")


def _request_id(value: object) -> object:
    if isinstance(value, str) and not _REQUEST_ID.fullmatch(value):
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise ValueError(f"--request-id: {shown!r} is not a request id: give 1 to 80 letters, digits, '.', '_', ':' or '-', "
                         "starting with a letter or digit")
    return value


RequestId = Annotated[str, BeforeValidator(_request_id), StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")]


def _to(value: object, info: ValidationInfo) -> object:
    # The region a number typed without + is read in: the caller's (calld-ctl's or the daemon's
    # CALLD_REGION), given as validation context; the default otherwise.
    return typed_number(value, (info.context or {}).get("region", DEFAULT_REGION))


# The number to call, as people type it ("555-555-0142", "+1 555 555 0142"); the E.164 form after validation.
To = Annotated[E164, BeforeValidator(_to)]


class AskRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    to: To
    ask: QuestionType
    name: FirstName
    item: Item | None = None
    user: UserId = UserId("default")
    request_id: RequestId | None = None

    @model_validator(mode="after")
    def _item_fits_question(self) -> Self:
        takes_item = QUESTIONS[self.ask].takes_item
        if takes_item and self.item is None:
            raise ValueError(f"--ask {self.ask} needs --item (say what to ask about)")
        if not takes_item and self.item is not None:
            raise ValueError(f"--item goes only with --ask stock or --ask aisle, not {self.ask}")
        return self


# -- booking a table ---------------------------------------------------------------------------------

MAX_PARTY = 20  # a bigger group is an event booking: a person should call
MAX_WINDOW_MINUTES = 180  # "any time this evening" is not a window calld can hold a business to
Notes = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]


def _whole_number(value: object, flag: str, what: str) -> int:
    """An int from CLI text or JSON, or a ValueError that names the flag and says what to give."""
    if isinstance(value, bool):
        raise ValueError(f"{flag} must be {what}, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        raise ValueError(f"{flag} must be {what}, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    raise ValueError(f"{flag} must be {what}, got {value!r}")


class BookRequest(BaseModel):
    """Book a table: for `party` people at `time` (as the user said it), within `window` minutes.

    `window` is how far from `time` the user will accept another time (0: that time only).
    `notes` are the user's constraints ("outdoor if possible"), said to the business as given.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    to: To
    name: FirstName
    party: int
    time: str
    notes: Notes | None = None
    window: int = 0
    user: UserId = UserId("default")
    request_id: RequestId | None = None

    @field_validator("party", mode="before")
    @classmethod
    def _party(cls, value: object) -> int:
        what = f"a whole number of people from 1 to {MAX_PARTY}"
        n = _whole_number(value, "--party", what)
        if n < 1:
            raise ValueError(f"--party must be {what}, got {n}: a table is for at least one person")
        if n > MAX_PARTY:
            raise ValueError(f"--party must be {what}, got {n}: for a group that size, call the business yourself")
        return n

    @field_validator("time", mode="before")
    @classmethod
    def _time(cls, value: object) -> str:
        example = 'say when, e.g. --time "Friday 7pm"'
        if not isinstance(value, str):
            raise ValueError(f"--time must be text ({example}), got {value!r}")
        if (problem := control_problem(value)) is not None:
            raise ValueError(f"--time: {problem}")
        text = " ".join(value.split()).replace('"', "'")
        if not text:
            raise ValueError(f"--time is empty: {example}")
        if len(text) > 80:
            raise ValueError(f"--time is {len(text)} characters; keep it under 80 ({example})")
        return text

    @field_validator("notes", mode="before")
    @classmethod
    def _notes(cls, value: object) -> object:
        if isinstance(value, str):
            text = plain_text(value, flag="--notes", max_length=200)
            return text or None  # an empty --notes is no notes
        return value

    @field_validator("window", mode="before")
    @classmethod
    def _window(cls, value: object) -> int:
        what = f"a whole number of minutes from 0 to {MAX_WINDOW_MINUTES}"
        n = _whole_number(value, "--window", what)
        if n < 0:
            raise ValueError(f"--window must be {what}, got {n}: it is how far from --time another time may be")
        if n > MAX_WINDOW_MINUTES:
            raise ValueError(f"--window must be {what}, got {n}")
        return n




def explain_book_errors(exc: ValidationError) -> str:
    """One line per problem, led by the flag to fix (the validators' own messages name it too)."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"]]
        flag = FLAGS.get(loc[0], loc[0]) if loc else "input"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msg = "is required"
        elif err["type"] == "extra_forbidden":
            msg = "is not an option of book"
        parts.append(msg if msg.startswith(flag) else f"{flag}: {msg}")
    return "; ".join(parts)
