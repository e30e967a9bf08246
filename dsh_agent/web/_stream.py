"""A session's live stream as Server-Sent Events in the AG-UI form, resumable.

The stream is made from the durable log (``store.follow``), so it is the same in every
process and after every reconnect. Each log event becomes zero or more AG-UI events
(the mapping of :class:`~dsh_agent.streaming.AgUiEncoder`, so every wire id is dsh's:
``messageId`` is the ``MessageId``); the *last* SSE event of each group carries the
event's seq as its ``id``. A client that reconnects with ``Last-Event-ID: <seq>`` gets
the groups after that seq: a group is never split across the id, so nothing is lost
and nothing repeated. Each turn is an AG-UI run (``RUN_STARTED`` at its
``turn/start``, ``RUN_FINISHED`` or ``RUN_ERROR`` at its ``turn/end``).

The log holds committed messages, not model deltas, so a reply arrives whole, when
its step commits (docs/decisions/2026-12-06-dsh-serve.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from dsh_agent._service._log_updates import LogTranslator
from dsh_agent.streaming._ag_ui import AgUiEncoder, AgUiEvent, sse_line
from dsh_agent.streaming._updates import TurnEnded, TurnStarted
from dsh_session._header import SessionId
from dsh_session.stores import SessionStore


def run_id(session_id: SessionId, turn: int) -> str:
    """The AG-UI run id of turn ``turn``: stable, so a reconnect names the same run."""
    return f"{session_id}.turn-{turn}"


def sse_group(events: list[AgUiEvent], seq: int) -> str:
    """The SSE text of one log event's AG-UI events, the last one carrying ``seq``."""
    lines = [sse_line(event) for event in events]
    lines[-1] = f"id: {seq}\n{lines[-1]}"
    return "".join(lines)


async def ag_ui_session_stream(
    store: SessionStore, session_id: SessionId, *, after: int | None, poll_interval: float
) -> AsyncIterator[str]:
    """The SSE text of session ``session_id``'s log events after seq ``after`` (all of
    them when ``None``), then of each new one, until the client goes away."""
    translator = LogTranslator()  # reads from seq 0 to know the turn and step
    encoder: AgUiEncoder | None = None
    async for event in store.follow(session_id, poll_interval=poll_interval):
        update = translator.translate(event)
        if update is None:
            continue
        replay = after is not None and event.seq <= after  # sent before the reconnect
        events: list[AgUiEvent] = []
        if isinstance(update, TurnStarted):
            encoder = AgUiEncoder(thread_id=session_id, run_id=run_id(session_id, update.turn))
            events += encoder.start()
        current = encoder or AgUiEncoder(thread_id=session_id, run_id=session_id)
        events += current.encode(update)
        if isinstance(update, TurnEnded):
            events += current.finish()
            encoder = None
        if events and not replay:
            yield sse_group(events, event.seq)


__all__ = ["ag_ui_session_stream", "run_id", "sse_group"]
