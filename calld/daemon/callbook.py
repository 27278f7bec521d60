"""CallBook: which CallHandle owns a webhook, a media socket or an id. Owners only, never call fields."""

from __future__ import annotations

import hmac

from calld.adapters.telnyx_webhook import Webhook
from calld.runtime.handle import CallHandle


class CallBook:
    def __init__(self) -> None:
        self._handles: dict[str, CallHandle] = {}  # by run id

    def add(self, handle: CallHandle) -> None:
        self._handles[handle.plan.run_id] = handle

    def remove(self, handle: CallHandle) -> None:
        self._handles.pop(handle.plan.run_id, None)

    def __len__(self) -> int:
        return len(self._handles)

    def handles(self) -> list[CallHandle]:
        return list(self._handles.values())

    def find(self, ident: str) -> CallHandle | None:
        """By run id or call_control_id."""
        if (h := self._handles.get(ident)) is not None:
            return h
        return next((h for h in self._handles.values() if h.call.call_control_id == ident), None)

    def for_webhook(self, webhook: Webhook) -> CallHandle | None:
        # client_state carries our run id from the first webhook on, even before the dial returns.
        if webhook.run_id is not None and (h := self._handles.get(webhook.run_id)) is not None:
            return h
        if webhook.call_control_id is not None:
            return self.find(webhook.call_control_id)
        return None

    def for_media_token(self, token: str) -> CallHandle | None:
        """Compared in constant time: how long a refusal takes says nothing of the tokens in use."""
        return next((h for h in self._handles.values() if hmac.compare_digest(h.media_token.encode(), token.encode())), None)
