"""One cancellation scope per turn, reaching pre-step, the model stream and tools.

Pre-step handlers and the model stream are *interruptible*: cancelling the scope
cancels the driver task while it waits inside them, and the scope turns that into
:class:`_TurnAborted`. Tools are never interrupted: they only see ``cancelled`` set and
drain. The first cause wins.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeAlias

from pydantic import TypeAdapter

from dsh_session.events import CancelCause, DisposedCause, ParentCause, UserCause

CancelCauseInput: TypeAlias = CancelCause | Literal["user", "parent", "disposed"]
"""A cause as :meth:`AgentLoop.cancel` accepts it: a cause model (``HookCause(reason=...)``
needs one) or the name of a cause without fields."""

_NAMED_CAUSES: dict[str, CancelCause] = {
    "user": UserCause(),
    "parent": ParentCause(),
    "disposed": DisposedCause(),
}
_CAUSE_ADAPTER: TypeAdapter[CancelCause] = TypeAdapter(CancelCause)


def as_cancel_cause(cause: CancelCauseInput) -> CancelCause:
    """Normalize ``cause`` to a cause model; an unknown name raises ``ValueError``."""
    if isinstance(cause, str):
        try:
            return _NAMED_CAUSES[cause]
        except KeyError:
            raise ValueError(
                f"unknown cancel cause {cause!r}: use 'user', 'parent', 'disposed' "
                "or HookCause(reason=...)"
            ) from None
    return _CAUSE_ADAPTER.validate_python(cause)


class _TurnAborted(Exception):
    """The turn's scope was cancelled; raised where the driver notices it."""


class CancelScope:
    """The cancellation state of one turn."""

    __slots__ = ("_interrupted", "_waiting_task", "cancelled", "cause", "external")

    def __init__(self) -> None:
        self.cause: CancelCause | None = None
        """The first cause, once cancelled."""
        self.cancelled = asyncio.Event()
        """Set on cancellation; tools receive it through ``ToolContext.cancelled``."""
        self.external = False
        """True when the driver task itself was cancelled from outside (e.g. at event
        loop shutdown); the driver re-raises ``CancelledError`` once the turn is closed."""
        self._waiting_task: asyncio.Task[Any] | None = None
        self._interrupted = False

    def cancel(self, cause: CancelCause) -> bool:
        """Cancel with ``cause`` unless already cancelled; returns whether this call won."""
        if self.cause is not None:
            return False
        self.cause = cause
        self.cancelled.set()
        task = self._waiting_task
        if task is not None and task is not asyncio.current_task():
            self._interrupted = True
            task.cancel()
        return True

    def cancel_from_outside(self) -> None:
        """Record that the driver task was cancelled by someone other than the scope."""
        self.external = True
        self.cancel(DisposedCause())

    def check(self) -> None:
        """Raise :class:`_TurnAborted` if the scope is cancelled."""
        if self.cause is not None:
            raise _TurnAborted

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """Let :meth:`cancel` interrupt the awaits in this block. Raises
        :class:`_TurnAborted` on entry or exit when the scope is cancelled, even if the
        code inside swallowed the interruption."""
        self.check()
        task = asyncio.current_task()
        self._waiting_task = task
        try:
            yield
        except asyncio.CancelledError:
            if not self._interrupted:
                self.cancel_from_outside()
            raise _TurnAborted from None
        finally:
            self._waiting_task = None
            if self._interrupted and task is not None:
                self._interrupted = False
                task.uncancel()
        self.check()


__all__ = [
    "CancelCauseInput",
    "CancelScope",
    "as_cancel_cause",
]
