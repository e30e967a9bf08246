"""The event vocabulary's implementation, by concept; import it from
:mod:`dsh_session.events` (or :mod:`dsh_session`).

- :mod:`.envelope`: the envelope every event shares, and its surface operations;
- :mod:`.reasons`: why a turn was cancelled or ended;
- :mod:`.payloads`: the payloads of the event types dsh defines (the harness-only
  payloads are in :mod:`dsh_session._events_harness`);
- :mod:`.classes`: one event class per typed event type, and ``ForeignEvent``;
- :mod:`.table`: the one table of event types every type set derives from;
- :mod:`.log_event`: ``UnknownEvent``, the unions and the adapter.
"""

__all__: list[str] = []
