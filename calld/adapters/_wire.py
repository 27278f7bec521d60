"""Shared by the adapters: what they say about a pydantic error on a wire frame (one short
'where: what'), and the cheap first read of the frames that come 50 times a second."""

from __future__ import annotations

from typing import Any

import orjson


def problem(err: dict[str, Any], where: str) -> str:
    match err["type"]:
        case "json_invalid":
            what = f"not valid JSON ({err['ctx']['error']})"
        case "missing":
            what = "missing"
        case "model_type" | "model_attributes_type" | "dict_type":
            what = "not a JSON object"
        case _:
            what = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {what}"


def plain_object(text: str, marker: str) -> dict[str, Any] | None:
    """The frame as a dict if its text holds `marker` and it is plainly a JSON object, else None.

    For the hot paths (audio frames, words), which read a few fields without building models.
    None sends the frame to the validating parser, which accepts or explains it.
    """
    if marker not in text:
        return None
    try:
        frame = orjson.loads(text)  # 50 a second each way per call: the C parser
    except (ValueError, RecursionError):
        return None
    return frame if isinstance(frame, dict) else None
