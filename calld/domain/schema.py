"""The published JSON schema of a call's result (docs/result.schema.json), from the result types themselves.

`python -m calld.domain.schema > docs/result.schema.json` writes it; a test keeps the file current.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from calld.domain.results import Answered, BookDeclined, Booked, Declined, Failed, NoAnswer, Refused, Voicemail

AnyResult = Annotated[
    Answered | Declined | Booked | BookDeclined | Voicemail | NoAnswer | Failed | Refused, Field(union_mode="left_to_right")
]


def result_schema() -> dict[str, Any]:
    schema = TypeAdapter(AnyResult).json_schema(mode="serialization")
    schema["title"] = "calld call result"
    schema["description"] = (
        "result.json and the control API's result: one status (answered, booked, declined, no_answer, voicemail, "
        "failed, refused) with its reason code; answered and booked carry the business's own words as evidence."
    )
    return schema


def render() -> str:
    return json.dumps(result_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
