"""The request-header fold: which header the next model request goes out with."""

from __future__ import annotations

from collections.abc import Sequence

from dsh_session.events import RequestHeader, RequestHeaderEvent, SessionEvent


def fold_request_header(events: Sequence[SessionEvent]) -> RequestHeader | None:
    """The latest ``request/header`` snapshot in ``events``, or ``None`` if there is
    none. Headers are full snapshots (not deltas), so the latest one wins; the scan
    runs backwards and stops there. A live session keeps this fold as
    ``Session.request_header``."""
    for event in reversed(events):
        if isinstance(event, RequestHeaderEvent):
            return event.data.header
    return None


__all__ = [
    "fold_request_header",
]
