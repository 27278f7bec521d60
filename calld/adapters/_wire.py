"""What every adapter says about a pydantic error on a wire frame: one short 'where: what'."""

from __future__ import annotations

from typing import Any


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
