"""What a user asks for, validated at the boundary (CLI flags, control API bodies)."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator

from calld.domain.ids import E164, FirstName, UserId
from calld.domain.questions import QUESTIONS, QuestionType

Item = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
RequestId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")]


class AskRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    to: E164
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
