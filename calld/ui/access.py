"""Who may read the web view: a short-lived link token, traded once for a session cookie.

`calld-ctl ui` asks the daemon for a link (`issue`); the token in it is good for `link_s`
seconds and for one use. Opening the link trades the token for a session (`open_session`):
a random id kept here and sent as an HttpOnly, SameSite=Strict cookie, good for `session_s`.
Nothing is written to disk: a restarted daemon forgets every session, and `calld-ctl ui` again
gives a new link. The clock is a parameter so the expiry is tested without waiting.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable

COOKIE = "calld_ui"
LINK_S = 300.0  # a printed link is for opening now, not for pasting tomorrow
SESSION_S = 8 * 3600.0  # a working day in one tab
MAX_SESSIONS = 1000  # a link opened in a loop cannot grow this without bound: the oldest go first


class Access:
    def __init__(self, *, link_s: float = LINK_S, session_s: float = SESSION_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link_s = link_s
        self.session_s = session_s
        self._clock = clock
        self._links: dict[str, float] = {}
        self._sessions: dict[str, float] = {}

    def issue(self) -> str:
        """A new link token, good for one use within `link_s`."""
        self._drop_expired()
        token = secrets.token_urlsafe(24)
        self._links[token] = self._clock() + self.link_s
        return token

    def open_session(self, token: str) -> str | None:
        """The link's token traded for a new session id; None when unknown, used or expired."""
        self._drop_expired()
        found = next((t for t in self._links if hmac.compare_digest(t.encode(), token.encode())), None)
        if found is None:
            return None
        del self._links[found]
        if len(self._sessions) >= MAX_SESSIONS:
            del self._sessions[min(self._sessions, key=self._sessions.__getitem__)]
        session = secrets.token_urlsafe(32)
        self._sessions[session] = self._clock() + self.session_s
        return session

    def allows(self, session: str | None) -> bool:
        if not session:
            return False
        until = self._sessions.get(session)
        if until is None:
            return False
        if self._clock() >= until:
            del self._sessions[session]
            return False
        return True

    def _drop_expired(self) -> None:
        now = self._clock()
        for table in (self._links, self._sessions):
            for key in [k for k, until in table.items() if until <= now]:
                del table[key]
