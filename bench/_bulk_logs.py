"""Many sessions' logs from one played session, fast: the scale suites need thousands
of sessions (or a million events) whose logs are what real runs write, but playing
every turn through the loop costs far more than the figures the suites measure.

A template session is played once for real. :class:`Reminter` then makes copies of
its log: the same events, each copy under a fresh session id and with every message id
replaced by a fresh one (an id that occurs twice in the template, as an inbox message
spliced and then appended does, maps to the same fresh id within the copy, so the
copy's references stay what the template's were). The copy is validated as any stored
log is (``parse_events``, ``Session.from_log``); the caller writes it through a store,
so its stored form is the store's own.
"""

from __future__ import annotations

import re

from dsh_llm import new_message_id
from dsh_session import Session, SessionHeader, parse_events

_MESSAGE_ID = re.compile(r'"id":"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')
"""A message's id in the wire form (a tool call's ``id`` is not a UUID)."""


class Reminter:
    """Copies of ``template``'s log, each with fresh session and message ids."""

    def __init__(self, template: Session) -> None:
        wire = "\n".join(event.model_dump_json() for event in template.events)
        self._ids = list(dict.fromkeys(_MESSAGE_ID.findall(wire)))
        # the wire text split at each message id: text, id, text, id, ..., text
        self._pieces = _MESSAGE_ID.split(wire)
        self._slots = [self._ids.index(piece) for piece in self._pieces[1::2]]

    @property
    def message_ids(self) -> int:
        """How many distinct message ids a copy mints."""
        return len(self._ids)

    def copy(self) -> Session:
        """A new session (fresh id, created now) over a re-minted copy of the log."""
        fresh = [new_message_id() for _ in self._ids]
        pieces = self._pieces.copy()
        pieces[1::2] = [f'"id":"{fresh[slot]}"' for slot in self._slots]
        lines = "".join(pieces).split("\n")
        header: SessionHeader = Session.create().header
        return Session.from_log(header, parse_events(lines))
