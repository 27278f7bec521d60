"""Good citizen of the phone network, and bad input that must be refused plainly: the cases a
careful operator expects that the policy and the parsers got wrong (found by probing every surface).

Numbers that must be refused appear here only to be refused; everything dialled is NXX-555-01xx."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from calld.policy.destination import check_destination
from calld.policy.window import CallWindow, check_window, zones_for
from calld.settings import SettingsError, load_settings

WINDOW = CallWindow(time(8), time(21))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def dest(number: str, *, allow_non_nanp: bool = False):
    return check_destination(number, own_numbers=("+15555550100",), allow_non_nanp=allow_non_nanp)


# -- the calling window setting --------------------------------------------------------------------


def test_a_window_with_an_offset_is_refused_when_read_not_when_a_call_is_asked():
    # The window is in the target's local time: an offset has no meaning there. Accepted, it made
    # every check against a real zone compare aware and naive times (TypeError: a 500 for each ask).
    with pytest.raises(ValueError, match="local time"):
        CallWindow.parse("08:00+05:00-21:00+05:00")
    with pytest.raises(SettingsError, match="CALLD_CALL_WINDOW: .*local time"):
        load_settings(calld_call_window="08:00+05:00-21:00+05:00", _env_file=None)
    # The plain form still reads, and still answers for a zoned number.
    window = CallWindow.parse("08:00-21:00")
    check_window(zones_for("+12125550142"), utc(2026, 6, 10, 16, 0), window)


# -- destinations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "words"),
    [
        ("+12125551212", "directory assistance"),  # NPA-555-1212: a charged operator service, not a business
        ("+18005551212", "directory assistance"),  # its toll-free twin
        ("+12129762345", "976"),  # the 976 exchange: pay-per-call information lines, like 1-900
        ("+13129760142", "976"),
    ],
)
def test_charged_information_services_are_refused(number, words):
    refusal = dest(number)
    assert refusal is not None and refusal.rule == "destination"
    assert words in refusal.message and "\n" not in refusal.message


@pytest.mark.parametrize("number", ["+12125550142", "+18005550199", "+12125550199", "+12129880142"])
def test_fiction_toll_free_and_988_as_an_exchange_still_pass(number):
    # 988 as an exchange is an ordinary 10-digit line (the crisis line is the 3-digit 988 alone,
    # which is not an E.164 number at all); toll-free numbers are fine to ring.
    assert dest(number) is None


# -- a number whose local time calld cannot tell ---------------------------------------------------


def gate_at(tmp_path, now: datetime, **over):
    from calld.ledger import Ledger
    from calld.policy.gate import Gate

    settings = load_settings(calld_state_dir=tmp_path / "state", _env_file=None, **over)
    settings.calld_state_dir.mkdir(parents=True, exist_ok=True)
    return Gate(settings, Ledger(settings.db_path), lambda: now)


@pytest.mark.parametrize("number", ["+881612345678", "+80012345678"])  # Iridium satellite, international freephone
def test_a_number_with_no_known_local_time_is_not_rung_at_any_hour(tmp_path, number):
    from calld.policy.gate import Timing
    from calld.policy.refusal import Refused

    # With international calls allowed, libphonenumber knows no zone for these: the window had
    # nothing to hold them to, and calld would ring them at 3 in the morning their time.
    gate = gate_at(tmp_path, utc(2026, 6, 10, 7, 0), calld_allow_non_nanp=True)
    assert zones_for(number) == ()
    with pytest.raises(Refused) as exc:
        gate.admit("ask", number, "alice", None, Timing())
    refusal = exc.value.refusal
    assert refusal.rule == "calling_window" and "time zone" in refusal.message and "\n" not in refusal.message
    assert refusal.people is not None and "time zone" in refusal.people
    with pytest.raises(Refused):  # nor queued for an opening that cannot be known
        gate.admit("ask", number, "alice", None, Timing(when_open=True))


def test_the_fiction_range_still_has_no_window(tmp_path):
    from calld.policy.gate import DialNow, Timing

    gate = gate_at(tmp_path, utc(2026, 6, 10, 7, 0))
    assert isinstance(gate.admit("ask", "+15555550142", "alice", None, Timing()), DialNow)


# -- text messages: STOP and HELP as people's phones type them ------------------------------------


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("STOP\u200b", "stop"),  # a zero-width space pasted along with it
        ("\ufeffStop", "stop"),
        ("ＳＴＯＰ", "stop"),  # full-width letters, as some keyboards type them
        ("Stop please", "stop"),
        ("please stop", "stop"),
        ("stop texting me", "stop"),
        ("help?", "help"),
        ("HELP ?", "help"),
    ],
)
def test_stop_and_help_as_people_type_them(text, word):
    from calld.messaging.parse import Keyword, parse_text

    # Anything else gets "Sorry, I didn't catch that": one more text to someone who asked for none.
    assert parse_text(text) == Keyword(word)


def test_stop_in_a_request_is_still_not_stop():
    from calld.messaging.parse import Keyword, parse_text

    assert not isinstance(parse_text("please stop at the hours for +14155550142"), Keyword)
    assert not isinstance(parse_text("stop by and ask their hours +14155550142"), Keyword)
    assert parse_text("?") == Keyword("help") and parse_text("STOP") == Keyword("stop")


# -- one business, one call at a time (through the daemon; autojump clock) --------------------------


async def _first_call_on_the_line(daemon, client, body, results):
    from test_policy_daemon import ask

    results.append(await ask(client, body))


async def test_a_business_is_not_rung_twice_at_once(tmp_path, nursery, dials, autojump_clock):
    import trio

    from calld.cli.client import ControlClient
    from calld.cli.ctl import EXIT_OK
    from test_policy_daemon import ASK, NOON, ask, refused, start

    daemon = await start(nursery, tmp_path, NOON)  # the default limits: 2 calls a day to one number
    sock = daemon.settings.calld_socket
    async with ControlClient(sock) as client, ControlClient(sock) as other:
        await client.provision("alice")
        await client.provision("bob")
        results: list = []
        async with trio.open_nursery() as calls:
            calls.start_soon(_first_call_on_the_line, daemon, client, ASK, results)
            while not daemon.lookup.calls():
                await trio.sleep(0.05)
            # Another user asks the same business while calld is still on the line with it.
            err = await refused(other, {**ASK, "user": "bob"})
            assert "right now" in err.message
            assert len(dials) == 1
        assert results[0][0] == EXIT_OK
        # Once that call is over, the second one (within the day's limit of 2) is placed.
        assert (await ask(other, {**ASK, "user": "bob"}))[0] == EXIT_OK
    assert len(dials) == 2
    await daemon.shutdown(drain_s=0)


async def _try(client, body, outcomes):
    from calld.cli.client import ControlError
    from test_policy_daemon import ask

    try:
        outcomes.append(await ask(client, body))
    except ControlError as exc:
        outcomes.append(exc)


async def test_the_daily_limit_holds_for_requests_that_arrive_together(tmp_path, nursery, dials, autojump_clock, monkeypatch):
    import trio

    from calld.cli.client import ControlClient, ControlError
    from calld.daemon.ingress import Ingress
    from test_policy_daemon import ASK, NOON, start

    async def probing(self):  # live mode checks its public URL before a dial: a wait, as here
        await trio.sleep(0.5)

    monkeypatch.setattr(Ingress, "check", probing)
    # CALLD_CALLS_PER_NUMBER_PER_DAY=2; three at once allowed, so that the day's limit is what holds
    daemon = await start(nursery, tmp_path, NOON, calld_calls_per_number_at_once=3)
    sock = daemon.settings.calld_socket
    users = ("alice", "bob", "carol")
    outcomes: list = []
    async with ControlClient(sock) as client:
        for user in users:
            await client.provision(user)
        async with trio.open_nursery() as together:
            for user in users:
                together.start_soon(_try, client, {**ASK, "user": user}, outcomes)
    refusals = [o for o in outcomes if isinstance(o, ControlError)]
    assert len(dials) <= 2, f"{len(dials)} dials to one number, the limit is 2 a day"
    assert refusals and "CALLD_CALLS_PER_NUMBER_PER_DAY" in refusals[0].message
    await daemon.shutdown(drain_s=0)


# -- words that are not data -----------------------------------------------------------------------


@pytest.mark.parametrize("at", ["tomorrow\x00 9am", "tomorrow\n9am", "tomorrow 9am\u202e"])
def test_an_at_time_with_control_characters_is_refused_on_both_sides(at):
    import argparse

    from pydantic import ValidationError

    from calld.cli.ctl import UsageError, ask_body
    from calld.daemon.control import _AskBody

    body = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "at": at}
    with pytest.raises(ValidationError, match="control character"):
        _AskBody.model_validate(body)
    args = argparse.Namespace(to=body["to"], ask="hours", name="Nathan", item=None, user="alice", request_id=None,
                              scenario=None, when_open=False, at=at)
    with pytest.raises(UsageError, match="--at: .*control character"):
        ask_body(args)


def test_a_bad_request_id_says_what_an_id_may_hold():
    from pydantic import ValidationError

    from calld.domain.requests import AskRequest

    with pytest.raises(ValidationError) as exc:
        AskRequest(to="+15555550142", ask="hours", name="Nathan", request_id="has space")
    said = str(exc.value)
    assert "letters" in said and "80" in said and "pattern" not in said


# -- the opt-out list, as the operator writes a number ---------------------------------------------


class _OptOutsOnly:
    """What the control route asks of the daemon here: the opt-out list (held as E.164), and the
    region a number typed without + is read in."""

    region = "US"

    def __init__(self, *numbers: str) -> None:
        self.listed = set(numbers)

    async def remove_opt_out(self, number: str) -> bool:
        if number in self.listed:
            self.listed.remove(number)
            return True
        return False


async def test_an_opt_out_is_lifted_whatever_way_the_number_is_written():
    from urllib.parse import quote

    from calld.daemon.control import create_control_app

    daemon = _OptOutsOnly("+12125550142")
    client = create_control_app(daemon).test_client()  # type: ignore[arg-type]
    resp = await client.delete("/v1/optouts/" + quote("+1 (212) 555-0142", safe=""))
    assert resp.status_code == 200 and daemon.listed == set()
    resp = await client.delete("/v1/optouts/" + quote("212-555-0142x9", safe=""))
    assert resp.status_code == 400 and "E.164" in (await resp.get_json())["error"]


# -- webhook signatures ----------------------------------------------------------------------------


def test_a_timestamp_too_long_to_be_unix_seconds_is_refused_as_such():
    import base64

    from calld.adapters.webhook_auth import WebhookAuthError, generate_keypair, verify_webhook

    _, public = generate_keypair()
    headers = {"telnyx-signature-ed25519": base64.b64encode(b"x" * 64).decode(), "telnyx-timestamp": "9" * 5000}
    with pytest.raises(WebhookAuthError, match="not Unix seconds") as exc:
        verify_webhook(b"{}", headers, public, now=1_780_000_000.0)
    assert "set_int_max_str_digits" not in str(exc.value) and len(str(exc.value)) < 200


# -- a request left unfinished does not keep a business unreachable -----------------------------


def test_a_request_never_finished_stops_holding_the_number_once_no_call_could_still_be_on(tmp_path):
    from datetime import timedelta

    from calld.domain.ids import RunId, UserId
    from calld.policy.gate import LONGEST_ON_THE_LINE

    placed = utc(2026, 6, 10, 16, 0)
    gate = gate_at(tmp_path, placed)
    gate.ledger.claim_request("req-1", user_id=UserId("alice"), kind="ask", params={"to": "+12125550142"}, run_id=RunId.new())
    gate.ledger.log_dial("req-1", number="+12125550142", user_id="alice", at=placed)
    # Its recovery was cut short: the request is never marked done.
    assert gate.on_the_line("+12125550142") is not None
    # Longer than any call can ring and talk (Telnyx's time limit ends it), and it still holds...
    gate.clock = lambda: placed + timedelta(minutes=10, seconds=30)
    assert gate.on_the_line("+12125550142") is not None
    # ...until no call placed then can still be on the line.
    gate.clock = lambda: placed + LONGEST_ON_THE_LINE + timedelta(seconds=1)
    assert gate.on_the_line("+12125550142") is None
    assert gate.on_the_line("+12125550143") is None  # another number was never held


def test_a_call_holds_its_number_while_the_dial_s_own_ring_and_time_limit_could_keep_it_on(tmp_path):
    # The bound follows what the dial asks Telnyx for: a call may ring for timeout_secs, talk for
    # time_limit_secs, and its hangup's webhook may take a few minutes more; until all three have
    # run out the number stays held.
    from datetime import timedelta

    from calld.core.plan import DialPlan
    from calld.domain.ids import E164, RunId, UserId
    from calld.policy.gate import LONGEST_ON_THE_LINE

    dial = DialPlan(E164("+12125550142"), E164("+15555550100"), RunId.new(), command_id="cmd-dial-1")
    placed = utc(2026, 6, 10, 16, 0)
    gate = gate_at(tmp_path, placed)
    gate.ledger.claim_request("req-1", user_id=UserId("alice"), kind="ask", params={"to": "+12125550142"}, run_id=RunId.new())
    gate.ledger.log_dial("req-1", number="+12125550142", user_id="alice", at=placed)
    could_still_be_on = timedelta(seconds=dial.timeout_secs + dial.time_limit_secs) + timedelta(minutes=4, seconds=59)
    gate.clock = lambda: placed + could_still_be_on
    assert gate.on_the_line("+12125550142") is not None
    assert LONGEST_ON_THE_LINE <= could_still_be_on + timedelta(minutes=1)  # and not held much past it



def test_a_request_dialled_again_after_its_id_was_given_back_holds_the_number_from_the_new_dial(tmp_path):
    # Nothing was dialled the first time (a local failure): the id is given back, and the retry an
    # hour later dials. That call is on the line; the number must be held from its dial, not the first.
    from datetime import timedelta

    from calld.domain.ids import RunId, UserId

    first = utc(2026, 6, 10, 16, 0)
    gate = gate_at(tmp_path, first)
    gate.ledger.claim_request("req-1", user_id=UserId("alice"), kind="ask", params={"to": "+12125550142"}, run_id=RunId.new())
    gate.ledger.log_dial("req-1", number="+12125550142", user_id="alice", at=first)
    assert gate.ledger.forget_request("req-1")
    retried = first + timedelta(hours=1)
    gate.ledger.claim_request("req-1", user_id=UserId("alice"), kind="ask", params={"to": "+12125550142"}, run_id=RunId.new())
    gate.ledger.log_dial("req-1", number="+12125550142", user_id="alice", at=retried)
    gate.clock = lambda: retried + timedelta(minutes=2)
    assert gate.on_the_line("+12125550142") is not None
