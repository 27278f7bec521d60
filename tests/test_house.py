"""The house's floors, read from the source: what each part may import.

The core (reduce, events, effects, state) decides every transition and does no IO, so it
imports no event loop, socket, HTTP client, clock or file API, and nothing from the floors
above it. The control API takes the daemon it serves as a protocol: it never imports the
service, which builds it (the cycle the two once had). The messaging port sits below the daemon
too: the service builds it, and it knows of the daemon only the errors the daemon refuses with."""

from __future__ import annotations

import ast
from pathlib import Path

import calld

PACKAGE = Path(calld.__file__).parent
IO_AND_UPPER_FLOORS = (
    "trio", "socket", "ssl", "httpx", "os", "pathlib", "sqlite3", "time", "io", "asyncio", "threading",
    "calld.adapters", "calld.runtime", "calld.daemon", "calld.cli", "calld.stub", "calld.sim", "calld.ledger",
    "calld.settings",
)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth, type-checking blocks included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_core_imports_no_io_and_nothing_from_the_floors_above():
    core = sorted((PACKAGE / "core").glob("*.py"))
    assert core, "the core is where it should be"
    wrong = {f"{path.name}: {m}" for path in core for m in imports(path) if _under(m, IO_AND_UPPER_FLOORS)}
    assert not wrong


def test_the_control_api_does_not_import_the_service_that_builds_it():
    assert "calld.daemon.service" not in imports(PACKAGE / "daemon" / "control.py")
    assert "calld.daemon.control" in imports(PACKAGE / "daemon" / "service.py")


def test_the_messaging_port_sits_below_the_daemon():
    # demo.py is `calld demo --text`: a tool above the daemon, which runs one of its own.
    messaging = sorted(p for p in (PACKAGE / "messaging").glob("*.py") if p.name != "demo.py")
    assert any(p.name == "port.py" for p in messaging)
    wrong = {f"{path.name}: {m}" for path in messaging for m in imports(path)
             if _under(m, ("calld.daemon",)) and m != "calld.daemon.errors"}
    assert not wrong
    assert "calld.messaging.port" in imports(PACKAGE / "daemon" / "service.py")
    assert "calld.daemon.errors" in imports(PACKAGE / "messaging" / "port.py")


def test_the_stub_model_is_a_script_not_a_second_reader():
    """The stub's records are written in its scenarios: nothing in calld/stub reads the business's words with the
    app's checker, so a stub call can show the model and the checker disagreeing (issue 52, item 5)."""
    stub = sorted((PACKAGE / "stub").glob("*.py"))
    assert any(p.name == "world.py" for p in stub) and any(p.name == "brain.py" for p in stub)
    wrong = {f"{path.name}: {m}" for path in stub for m in imports(path) if _under(m, ("calld.evidence",))}
    assert not wrong
