"""Calling windows: dial only between the window's start and end in the target's local time.

The target's zones come from its number (libphonenumber's timezone data). A number that
spans zones (a toll-free number, an area code on a zone line) is open only when the
window is open in every one of them: the narrowest window inside all of them. The
daemon's and the user's zones play no part. Pure: `now` is given, never read.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from attrs import frozen
from phonenumbers import timezone as number_zones

from calld.policy.destination import parse_destination
from calld.policy.refusal import Refusal

UNKNOWN_ZONE = "Etc/Unknown"


@frozen
class CallWindow:
    start: time  # inclusive
    end: time  # exclusive: 21:00 means the last dial is at 20:59:59

    @classmethod
    def parse(cls, text: str) -> CallWindow:
        """'08:00-21:00' -> a window; ValueError that says how to write it."""
        try:
            a, b = (time.fromisoformat(part.strip()) for part in text.split("-"))
        except ValueError:
            raise ValueError(f"{text!r} is not a window; write it as HH:MM-HH:MM, e.g. 08:00-21:00") from None
        if a.tzinfo is not None or b.tzinfo is not None:  # compared with each target's naive local time
            raise ValueError(f"{text!r}: the window is in each target's own local time; write it without a UTC offset, "
                             "e.g. 08:00-21:00")
        if not a < b:
            raise ValueError(f"{text!r}: the window must start before it ends, within one day")
        return cls(a, b)

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"


@lru_cache(maxsize=4096)  # about 0.1 ms a lookup, asked at admission and again for the result
def zones_for(e164: str) -> tuple[str, ...]:
    """The IANA zones a number may ring in; () when libphonenumber does not know (the fiction range)."""
    dest = parse_destination(e164)
    if isinstance(dest, Refusal):
        return ()
    zones = tuple(z for z in number_zones.time_zones_for_number(dest.number) if z != UNKNOWN_ZONE)
    area = f"{dest.number.national_number:010d}"[:3] if dest.number.country_code == 1 else ""
    return zones + tuple(z for z in _SPLIT_AREA_CODES.get(area, ()) if zones and z not in zones)


# NANP area codes that ring in two zones where libphonenumber's prefixes name one: Pensacola (850)
# and western Kentucky (270/364) are Central, Chattanooga (423) Eastern, and so on. The window is
# read in both, so a business on the other side of the line is not rung an hour early or late.
_SPLIT_AREA_CODES: dict[str, tuple[str, ...]] = {
    "850": ("America/Chicago",), "270": ("America/Chicago",), "364": ("America/Chicago",),
    "606": ("America/Chicago",), "812": ("America/Chicago",), "930": ("America/Chicago",),
    "574": ("America/Chicago",), "906": ("America/Chicago",), "423": ("America/New_York",),
    "308": ("America/Denver",), "785": ("America/Denver",), "620": ("America/Denver",),
    "432": ("America/Denver",), "541": ("America/Boise",), "458": ("America/Boise",),
    "807": ("America/Winnipeg",), "250": ("America/Edmonton",), "418": ("America/Halifax",),
}


@frozen
class Open:
    local_times: tuple[tuple[str, datetime], ...]


@frozen
class Closed:
    local_times: tuple[tuple[str, datetime], ...]  # the target's time now, per zone; () when no zone is known
    opens_at: datetime | None  # UTC; None when no instant is inside the window in every zone

    def describe(self, window: CallWindow) -> str:
        if not self.local_times:
            return (f"no time zone is known for it, so calld cannot tell whether it is inside {window} there "
                    "and does not ring it at an hour it cannot check")
        times = sorted(self.local_times, key=lambda zt: zt[1].utcoffset() or timedelta())
        if len(times) > 3:  # a toll-free number rings some forty zones: name the two ends
            times = [times[0], times[-1]]
        now = " to ".join(f"{t:%a %H:%M} {zone}" for zone, t in times) if len(self.local_times) > 3 else \
            ", ".join(f"{t:%a %H:%M} {zone}" for zone, t in times)
        if self.opens_at is None:
            return (f"it is {now} there, and no hour is inside {window} in all of its zones at once; "
                    "calld cannot find a considerate time to ring it")
        first_zone = ZoneInfo(self.local_times[0][0])
        opens = self.opens_at.astimezone(first_zone)
        return f"it is {now} there; calls are placed {window} local time, next at {opens:%a %H:%M} {first_zone.key} ({self.opens_at:%Y-%m-%d %H:%M} UTC)"

    def for_people(self, window: CallWindow) -> str:
        """`describe` for someone who texted the request: their local time and the next opening, no zone ids."""
        if not self.local_times:
            return ("I can't tell what time it is where that number rings (no time zone is known for it), "
                    "so I won't call it.")
        times = sorted(t for _, t in self.local_times)
        now = f"{times[0]:%a %H:%M}" if len({f"{t:%a %H:%M}" for t in times}) == 1 else f"{times[0]:%a %H:%M} to {times[-1]:%a %H:%M}"
        if self.opens_at is None:
            return (f"It's {now} where that number rings, and no hour is inside my calling hours ({window}) "
                    "in all of its time zones at once, so I won't call it.")
        opens = self.opens_at.astimezone(ZoneInfo(self.local_times[0][0]))
        return (f"It's {now} where they are, outside the hours I call businesses ({window} their time). "
                f"Please try again after {opens:%a %H:%M} their time.")


def _open_in(zone: ZoneInfo, at: datetime, window: CallWindow) -> bool:
    local = at.astimezone(zone).time()
    return window.start <= local < window.end


def _starts_near(zone: ZoneInfo, at: datetime, window: CallWindow) -> list[datetime]:
    """The window's start instants in `zone` on the local days around `at` (UTC)."""
    today = at.astimezone(zone).date()
    return [
        datetime.combine(today + timedelta(days=d), window.start, tzinfo=zone).astimezone(UTC)
        for d in range(-1, 3)
    ]


def check_window(zones: Sequence[str], now: datetime, window: CallWindow) -> Open | Closed:
    """Open when `now` is inside the window in every zone; else Closed with the next opening."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    now = now.astimezone(UTC)
    tzs = [ZoneInfo(z) for z in zones]
    local_times = tuple((z.key, now.astimezone(z)) for z in tzs)
    if all(_open_in(z, now, window) for z in tzs):
        return Open(local_times)
    # The joint window opens when the last zone's window opens: one of the zones' start instants.
    candidates = sorted({s for z in tzs for s in _starts_near(z, now, window) if s > now})
    opens = next((c for c in candidates if all(_open_in(z, c, window) for z in tzs)), None)
    return Closed(local_times, opens)


