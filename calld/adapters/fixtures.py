"""Raw wire fixtures (repo-root `fixtures/`) for tests and the stub transports.

The stubs replay these through the production parsers, so a fixture is returned as a
fresh object that a caller may change before serializing it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures"


@functools.lru_cache(maxsize=256)
def _fixture_text(group: str, filename: str) -> str:
    # The stubs load a fixture per audio frame: read each file once, parse it every time.
    return (FIXTURES_DIR / group / filename).read_text(encoding="utf-8")


def load_fixture(group: str, name: str) -> dict[str, Any]:
    """`fixtures/<group>/<name>.json` as a new dict (the `.json` suffix is optional)."""
    filename = name if name.endswith(".json") else f"{name}.json"
    path = FIXTURES_DIR / group / filename
    try:
        text = _fixture_text(group, filename)
    except FileNotFoundError:
        known = sorted(p.stem for p in (FIXTURES_DIR / group).glob("*.json"))
        have = f"{group}/ has: {', '.join(known)}" if known else f"there is no group {group!r}"
        raise FileNotFoundError(f"no fixture {group}/{path.name} in {FIXTURES_DIR}; {have}") from None
    value = json.loads(text)  # parsed anew each call: callers may mutate it freely
    if not isinstance(value, dict):
        raise ValueError(f"fixture {group}/{path.name} is not a JSON object")
    return value
