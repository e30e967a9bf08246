"""The per-session mailbox beside the log (private): delivery requests from processes
that do not own a session. ``_open.open_mailbox(store)`` picks the backend's form."""

__all__: list[str] = []
