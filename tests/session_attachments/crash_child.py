"""Child process of the attachment crash tests.

``python -m session_attachments.crash_child BACKEND LOCATION SESSION_ID REPORT MODE`` from the
``tests`` directory. It creates the session, then, prompt after prompt, saves a new
image (``saved <hex>`` in REPORT once ``save_attachment`` returned), appends a user
message holding it and flushes (``flushed <message id>`` once the flush returned).
MODE ``loop`` goes on until it is killed; ``kill-before-flush`` kills itself with
SIGKILL after its first save and append, before that flush.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from dsh_session import Attachment, Session, create_user_message_with_attachments
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

from .images import png


def open_store(backend: str, location: str) -> SessionStore:
    if backend == "sqlite":
        return SqliteSessionStore(location)
    if backend == "jsonl":
        return JsonlSessionStore(location)
    from dsh_session.stores import PostgresSessionStore

    return PostgresSessionStore(location)


async def main(backend: str, location: str, session_id: str, report_path: str, mode: str) -> None:
    store = open_store(backend, location)
    session = Session.create(session_id)
    store.attach(session)
    await store.flush(session)
    with open(report_path, "a") as report:
        report.write("ready\n")
        report.flush()
        while True:
            image = png(96, 96, noise=True)
            message = await create_user_message_with_attachments(
                store, "look", attachments=[Attachment(image, "image/png", "shot.png")]
            )
            report.write(f"saved {message.content[1].attachment.sha256}\n")  # type: ignore[union-attr]
            report.flush()
            session.append("user/message", message)
            if mode == "kill-before-flush":
                os.kill(os.getpid(), signal.SIGKILL)
            await store.flush(session)
            report.write(f"flushed {message.id}\n")
            report.flush()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
