"""The agent as a service (private; the public names are exported from ``dsh_agent``):
``connect`` delivers to a session another process owns through the store's mailbox,
the owner drains it (``_drain``), and ``Worker`` owns and runs sessions that have input.
"""

__all__: list[str] = []
