"""A booking in the past is refused as past, whatever words name it, and nothing is dialled.

The property: every phrasing of a past instant that the booking-time parser reads (ISO 8601,
a month and day with a year, "yesterday", "last Friday", "3 days ago", "today" earlier on, ...)
is refused with the reason "in the past", never booked and never refused for another reason
("names no day"). Then the same through the daemon's control socket, calld-ctl and a text.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from calld.cli import ctl
from calld.cli.client import ControlClient, ControlError
from calld.daemon.service import Daemon
from calld.ledger import Ledger
from calld.policy.clock import trio_clock
from calld.policy.gate import Gate
from calld.policy.when import resolve
from calld.policy.window import zones_for
from calld.settings import load_settings
from daemons import daemon_settings, stop

NY = "+12125550142"  # a New York number in the fiction exchange 555-01xx: it rings no one
ZONE = ZoneInfo("America/New_York")
NOW = datetime(2026, 6, 10, 16, 0, tzinfo=UTC)  # Wednesday 12:00 in New York
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


@st.composite
def clock_words(draw, at: datetime) -> str:
    """The time of day of `at`, as people write it (never one that could be morning or evening)."""
    hour12 = at.hour % 12 or 12
    meridiem = draw(st.sampled_from(("am", "AM", "a.m.", " am")) if at.hour < 12 else st.sampled_from(("pm", "PM", "p.m.", " pm")))
    forms = [f"{hour12}:{at.minute:02d}{meridiem}"]
    if at.minute == 0:
        forms.append(f"{hour12}{meridiem}")
        forms.append(f"at {hour12}{meridiem}")
        if at.hour == 12:
            forms.append("noon")
        if at.hour == 0:
            forms.append("midnight")
    if at.hour == 0 or at.hour > 12:
        forms.append(f"{at.hour}:{at.minute:02d}")  # a 24-hour clock that only reads one way
    return draw(st.sampled_from(forms))


@st.composite
def past_phrasings(draw) -> tuple[str, datetime]:
    """A past local time in New York and words that name it; the words name a day only the way it can be."""
    now_local = NOW.astimezone(ZONE).replace(tzinfo=None)
    back = draw(st.one_of(st.integers(1, 24 * 60), st.integers(1, 60 * 24 * 14), st.integers(1, 60 * 24 * 366 * 40)))
    at = (now_local - timedelta(minutes=back)).replace(second=0, microsecond=0)
    days_back = (now_local.date() - at.date()).days
    clock = draw(clock_words(at))
    month, day, year = MONTHS[at.month - 1], at.day, at.year
    iso = f"{at:%Y-%m-%d}"
    forms = [
        f"{iso} {at:%H:%M}",
        f"{iso}T{at:%H:%M}",
        f"{iso} {clock}",
        f"{month} {day} {year} {clock}",
        f"{month[:3]} {day}, {year} {clock}",
        f"{month} {ordinal(day)} {year} at {clock}",
        f"{day} {month} {year} {clock}",
        f"the {ordinal(day)} of {month}, {year} {clock}",
        f"{clock} on {month} {day}, {year}",
    ]
    if days_back == 0:
        forms += [f"today {clock}", f"{clock} today", f"{month} {day} {clock}"]
    if days_back == 1:
        forms += [f"yesterday {clock}", f"{clock} yesterday", f"yesterday at {clock}"]
        if at.hour >= 17:
            forms.append(f"last night {clock}")
    if days_back == 2:
        forms += [f"the day before yesterday {clock}", f"day before yesterday at {clock}"]
    if 1 <= days_back <= 7:
        forms += [f"last {WEEKDAYS[at.weekday()]} {clock}", f"{clock} last {WEEKDAYS[at.weekday()][:3]}"]
    if 1 <= days_back <= 999:
        forms += [f"{days_back} days ago at {clock}", f"{clock} {days_back} day{'s' if days_back > 1 else ''} ago"]
        if days_back in NUMBER_WORDS:
            forms.append(f"{NUMBER_WORDS[days_back]} days ago {clock}")
    if days_back and days_back % 7 == 0 and days_back // 7 <= 999:  # the parser reads a count of up to three digits
        weeks = days_back // 7
        forms.append(f"{'a' if weeks == 1 else weeks} week{'s' if weeks > 1 else ''} ago {clock}")
    words = draw(st.sampled_from(forms))
    return words, at


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    settings = load_settings(calld_state_dir=tmp_path_factory.mktemp("past") / "state", _env_file=None)
    settings.calld_state_dir.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(settings.db_path)
    yield Gate(settings, ledger, lambda: NOW)
    ledger.close()


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(past_phrasings())
def test_every_past_instant_the_parser_reads_is_refused_as_in_the_past(gate, phrasing):
    words, at = phrasing
    note(f"{words!r} names {at:%a %Y-%m-%d %H:%M} in New York")
    # The words are read as the day they name, not the next one like it ahead ...
    assert resolve(words, zones_for(NY), NOW) == (at.replace(tzinfo=ZONE).astimezone(UTC),)
    # ... so the booking is refused as past, and for that reason only.
    refusal = gate.booking_time(NY, words, NOW)
    assert refusal is not None and refusal.rule == "booking_time"
    assert "in the past" in refusal.message and "in the past" in refusal.people, refusal


@pytest.mark.parametrize("words", ["yesterday 7pm", "January 1 1999 7pm", "Jan 1 2020 7pm", "last Friday 7pm"])
def test_the_issues_own_examples_say_in_the_past(gate, words):
    refusal = gate.booking_time(NY, words, NOW)
    assert refusal is not None and "in the past" in refusal.message, refusal
    assert "names no day" not in refusal.message


def test_a_year_ahead_is_still_read_as_that_year(gate):
    # A year with the date is taken as given both ways: a date ahead with its year still books.
    assert resolve("December 4, 2026 at 8pm", zones_for(NY), NOW) == (datetime(2026, 12, 5, 1, 0, tzinfo=UTC),)
    assert resolve("4 Dec 2026 8pm", zones_for(NY), NOW) == (datetime(2026, 12, 5, 1, 0, tzinfo=UTC),)
    assert gate.booking_time(NY, "June 12 2026 7pm", NOW) is None


# -- through the daemon: the control socket, calld-ctl and a text --------------------------------------

PAST = ("yesterday 7pm", "January 1 1999 7pm", "Jan 1 2020 7pm", "last Friday 7pm", "3 days ago at 7pm")
TEXTER = "+15555550177"


def nothing_written(daemon: Daemon) -> None:
    assert daemon._ledger.sync.requests(10) == [] and daemon._ledger.sync.schedule_rows(status=None) == []
    artifacts = daemon.settings.artifacts_dir
    assert not artifacts.exists() or not any(artifacts.iterdir())


async def test_a_past_booking_is_refused_by_socket_ctl_and_text_and_nothing_is_dialled(tmp_path, nursery, dials, autojump_clock, capsys):
    settings = daemon_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings, clock=trio_clock(NOW)).serve)
    book = {"to": NY, "name": "Nathan", "party": 2, "user": "alice"}
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
        await client.messaging_link(TEXTER, "alice", "Nathan")
        for words in PAST:
            with pytest.raises(ControlError) as exc:
                async for _ in client.book({**book, "time": words}):
                    pass
            assert exc.value.status == 403 and "in the past" in exc.value.message, exc.value.message
    for words in PAST:
        args = ctl.build_parser().parse_args(["--socket", str(settings.calld_socket), "book", "--to", NY, "--name", "Nathan",
                                              "--party", "2", "--user", "alice", "--time", words])
        with pytest.raises(ControlError) as exc:  # main() prints it as one line and exits 2
            await ctl._book(args)
        assert "in the past" in exc.value.message and "\n" not in exc.value.message
    for words in PAST:
        before = len(daemon.messaging.fake.replies_to(TEXTER))
        await daemon.messaging.fake.text(TEXTER, f"book a table for 2 {words} at +1 212 555 0142")
        await daemon.messaging.wait_idle()
        said = daemon.messaging.fake.replies_to(TEXTER)[before:]
        assert len(said) == 1 and "in the past" in said[0], (words, said)
    assert dials == []
    nothing_written(daemon)
    await stop(daemon)
