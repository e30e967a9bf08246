"""One agent loop per Session object: the claim a loop holds while it drives one.

Two loops over one session would interleave their turns and inbox splices in one log.
A loop claims its session when it is built and gives the claim back when it is closed
or garbage-collected, whichever comes first. A loop sits in reference cycles (its
inbox and step runner call back into it), so an unreachable loop may not be collected
yet: before refusing, a claim runs the cycle collector once, so that only a loop the
program can still reach (or that is still running a turn) holds its session.

Claims are keyed by the session object's ``id()``: an entry lives only as long as its
owner (a weak reference whose callback removes it), and the owner keeps the session
alive, so the key is never reused while the entry exists.
"""

from __future__ import annotations

import gc
import weakref

from dsh_agent.errors import SessionInUseError
from dsh_session._session import Session

_owners: dict[int, weakref.ref[object]] = {}


def claim(session: Session, owner: object) -> None:
    """Make ``owner`` the only claimant of ``session``; raise
    :class:`SessionInUseError` when another live owner holds it."""
    key = id(session)
    held = _owners.get(key)
    if held is not None and held() is not None:
        gc.collect()  # an unreachable owner gives the session back now
    if held is not None and held() is not None:
        raise SessionInUseError(
            f"session {session.id!r} is already driven by another agent loop; close "
            "that loop (await loop.aclose()) before building a new one over it",
            session_id=session.id,
        )

    def forget(reference: weakref.ref[object]) -> None:
        if _owners.get(key) is reference:
            del _owners[key]

    _owners[key] = weakref.ref(owner, forget)


def release(session: Session, owner: object) -> None:
    """Give back ``owner``'s claim on ``session`` (nothing when it holds none)."""
    key = id(session)
    held = _owners.get(key)
    if held is not None and held() is owner:
        del _owners[key]


__all__ = [
    "claim",
    "release",
]
