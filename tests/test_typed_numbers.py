"""Numbers as people type them: "555-555-0142" is read as dialled in the user's region (CALLD_REGION,
by libphonenumber), one way for calld-ctl's --to, the control API's "to" and a text, and calld-ctl
echoes the E.164 number it will dial. A number that is not one is refused, and nothing is dialled.
Fiction numbers only (555-01xx)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calld.cli import ctl
from calld.cli.client import ControlClient, ControlError
from calld.daemon.service import Daemon
from calld.domain.ids import typed_number
from calld.domain.requests import AskRequest, BookRequest
from calld.messaging.parse import AskIntent, parse_text
from daemons import daemon_settings, stop

E164 = "+15555550142"
TYPED = ["555-555-0142", "(555) 555-0142", "555.555.0142", "555 555 0142", "5555550142", "1-555-555-0142",
         "1 (555) 555-0142", "+1 555 555 0142", "+1 (555) 555-0142", "+15555550142"]


@st.composite
def typings(draw) -> str:
    """The digits of 555-555-0142, grouped and separated as people type them, with or without the 1."""
    groups = draw(st.sampled_from([("555", "555", "0142"), ("555", "5550142"), ("5555550142",), ("555", "555", "01", "42")]))
    seps = st.sampled_from(["-", " ", ".", "", " - "])
    head = f"({groups[0]})" if len(groups) > 1 and draw(st.booleans()) else groups[0]
    text = head + "".join(draw(seps) + g for g in groups[1:])
    prefix = draw(st.sampled_from(["", "1 ", "1-", "+1 ", "+1"]))
    return prefix + text


@settings(max_examples=300, deadline=None, database=None)
@given(typings())
def test_every_way_of_typing_the_number_is_the_same_e164_everywhere(typed):
    assert typed_number(typed) == E164
    assert AskRequest.model_validate({"to": typed, "ask": "hours", "name": "Nathan"}).to == E164
    assert BookRequest.model_validate({"to": typed, "name": "Nathan", "party": 2, "time": "Friday 7pm"}).to == E164
    assert parse_text(f"hours {typed}") == AskIntent(E164, "hours")


def test_the_region_decides_how_a_national_number_is_read():
    assert typed_number("020 7946 0958", "GB") == "+442079460958"
    assert AskRequest.model_validate({"to": "020 7946 0958", "ask": "hours", "name": "Nathan"},
                                     context={"region": "GB"}).to == "+442079460958"
    assert parse_text("hours 020 7946 0958", "GB") == AskIntent("+442079460958", "hours")
    with pytest.raises(ValueError, match="too long for a phone number in US"):
        typed_number("020 7946 0958")


@pytest.mark.parametrize(("typed", "why"), [("555-0142", "has no area code"), ("55-5014", "too short"),
                                            ("555-555-01429", "too long"), ("555-555-014\u0664", "not an E.164"),
                                            # letters are named, whatever else the text holds: an O for a 0,
                                            # a vanity number, an extension, a + number
                                            ("555-555-O142", "has a letter (O), and calld dials digits only"),
                                            ("1-800-FLOWERS", "has letters (F, L, O, W, E, R, S), and calld dials digits only"),
                                            ("555-555-0142 ext 12", "has letters (e, x, t)"),
                                            ("+1555555014x", "has a letter (x)")])
def test_what_is_not_a_whole_number_says_what_to_give(typed, why):
    with pytest.raises(ValueError, match=re.escape(why)) as exc:
        typed_number(typed)
    assert "+14155550123" in str(exc.value)


@pytest.mark.parametrize(("typed", "region", "why"), [("911", "US", "is an emergency number in US"),
                                                      ("9-1-1", "CA", "is an emergency number in CA"),
                                                      ("999", "GB", "is an emergency number in GB"),
                                                      ("411", "US", "is an N11 service code")])
def test_a_short_code_says_what_it_is_not_that_it_is_too_short(typed, region, why):
    with pytest.raises(ValueError, match=re.escape(why)) as exc:
        typed_number(typed, region)
    assert "too short" not in str(exc.value)


def test_ctl_to_911_is_refused_as_an_emergency_number(capsys):
    args = ctl.build_parser().parse_args(["ask", "--to", "911", "--ask", "hours", "--name", "Nathan"])
    with pytest.raises(ctl.UsageError, match=r"--to: '911' is an emergency number"):
        ctl.ask_body(args)


async def test_ctl_socket_and_text_dial_the_same_e164_and_ctl_echoes_it(tmp_path, nursery, dials, autojump_clock, capsys):
    settings = daemon_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    texter = "+15555550177"
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
        await client.messaging_link(texter, "alice", "Nathan")
        # The control API, as a script sends it.
        items = [item async for item in client.ask({"to": "(555) 555-0142", "ask": "hours", "name": "Nathan", "user": "alice"})]
        assert items[-1]["result"]["status"] == "answered"
        # A refusal for a number that is not whole says what to give; nothing is dialled for it.
        with pytest.raises(ControlError) as exc:
            async for _ in client.ask({"to": "555-0142", "ask": "hours", "name": "Nathan", "user": "alice"}):
                pass
        assert exc.value.status == 400 and "no area code" in exc.value.message
    # calld-ctl, as a person types it: the E.164 number it dials is echoed.
    args = ctl.build_parser().parse_args(["--socket", str(settings.calld_socket), "ask", "--to", "555-555-0142",
                                          "--ask", "hours", "--name", "Nathan", "--user", "alice"])
    capsys.readouterr()
    assert await ctl._ask(args) == ctl.EXIT_OK
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "answered"
    assert f"--to 555-555-0142 is {E164}, read as dialled in US (CALLD_REGION); that is the number calld dials" in err, err
    # A text.
    await daemon.messaging.fake.text(texter, "hours 555-555-0142")
    await daemon.messaging.wait_idle()
    assert [d["to"] for d in dials] == [E164, E164, E164]
    await stop(daemon)


async def test_the_daemons_region_reads_the_control_apis_numbers(tmp_path, nursery, dials, autojump_clock):
    settings = daemon_settings(tmp_path, calld_region="GB")
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
        with pytest.raises(ControlError) as exc:  # read as the London number it is, then refused as abroad
            async for _ in client.ask({"to": "020 7946 0958", "ask": "hours", "name": "Nathan", "user": "alice"}):
                pass
        assert exc.value.status == 403 and "+442079460958" in exc.value.message and "CALLD_ALLOW_NON_NANP" in exc.value.message
    assert dials == []
    await stop(daemon)


def test_ctl_refuses_a_number_that_is_not_whole_before_the_socket_is_opened(tmp_path, capsys):
    code = ctl.main(["--socket", str(tmp_path / "nobody.sock"), "ask", "--to", "555-0142", "--ask", "hours", "--name", "Nathan"])
    err = capsys.readouterr().err
    assert code == ctl.EXIT_USAGE and err.startswith("calld-ctl: --to: '555-0142' has no area code"), err
    assert "\n" not in err.strip()  # one line
