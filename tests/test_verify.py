"""The lever, as a test: a stub quick-ask in a fresh workspace passes every check."""

from __future__ import annotations

from calld.verify import verify_quick_ask


def test_verify_quick_ask_passes_every_check(tmp_path):
    report = verify_quick_ask(workspace=tmp_path)
    assert [c.name for c in report.checks] == [
        "did_in_ledger",
        "dial_payload",
        "disclosure_first",
        "clean_hangup",
        "result_artifact",
        "session_delegation",
        "tool_loop",
        "app_owned_hangup",
        "pickup_held",
    ]
    failed = [c.line() for c in report.checks if not c.passed]
    assert not failed
    assert report.lines()[-1] == "9/9 passed"
