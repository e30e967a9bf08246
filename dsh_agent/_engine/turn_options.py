"""The per-run options a turn carries: they belong to the turn, not to the call of
``run()`` that asked for them.

A run's model settings, instructions and structured-output tool hold for every
request of the turns it opens, until each turn ends, across an approval wait (the
run has returned by then) and a restart: ``turn/start`` records them as
``runOptions`` (:class:`~dsh_session.events.TurnRunOptions`), and a loop resuming the
turn in another process restores them from there. What each request was sent with is
still the ``request/header`` logged before it, so reconstruction reads the headers
only (docs/decisions/2026-12-06-turn-run-options.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_agent._config import NO_SETTINGS
from dsh_agent._engine.branching import is_prompt, shadow_answer
from dsh_agent._engine.run_header import overridden, with_instructions
from dsh_agent._instructions import InstructionsContext, InstructionsFunction, evaluate
from dsh_agent._model_settings import ModelSettings
from dsh_agent._structured_output import (
    OutputCollector,
    collector_of,
    correction_span,
    failed_attempt_count,
)
from dsh_agent.inbox import Inbox
from dsh_agent.tools import Tool
from dsh_session._session import Session
from dsh_session._surface_view import message_of
from dsh_session.events import RequestHeader, TurnRunOptions, TurnStartEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOptions:
    """What one run asks of its turns' requests, besides the loop's own header."""

    settings: ModelSettings = NO_SETTINGS
    """Over the loop's model settings."""
    instructions: str | None = None
    """The last section of the system prompt."""
    tools: tuple[Tool, ...] = ()
    """Offered besides the loop's tools (a run's ``final_result``)."""

    @property
    def output(self) -> OutputCollector[Any] | None:
        """The structured-output collector among ``tools``, if any."""
        for offered in self.tools:
            collector = collector_of(offered)
            if collector is not None:
                return collector
        return None

    def record(self) -> TurnRunOptions | None:
        """What ``turn/start`` records of these options (None: nothing to record).
        Only the structured-output tool of the extra tools can be restored, so it is
        the only one recorded."""
        output = self.output
        fields: dict[str, Any] = dict(self.settings.given())
        if self.instructions:
            fields["instructions"] = self.instructions
        if output is not None:
            fields["output_tool"] = output.tool.schema()
            fields["output_corrections"] = output.corrections
        return TurnRunOptions.model_validate(fields) if fields else None


NO_OPTIONS = TurnOptions()


def restored(session: Session, turn: int) -> TurnOptions:
    """The options the log records for ``turn`` (open, in a process that did not open
    it), with its structured-output tool rebuilt and the attempts it failed counted."""
    start = _turn_start(session, turn)
    record = None if start is None else start.data.run_options
    if start is None or record is None:
        return NO_OPTIONS
    settings = ModelSettings(
        temperature=record.temperature,
        top_p=record.top_p,
        stop=record.stop,
        reasoning_effort=record.reasoning_effort,
        max_tokens=record.max_tokens,
        prompt_cache=record.prompt_cache,
    )
    tools: tuple[Tool, ...] = ()
    if record.output_tool is not None:
        failed = failed_attempt_count(session.surface, start.seq)
        corrections = record.output_corrections or 0
        tools = (OutputCollector.restored(record.output_tool, corrections, failed).tool,)
    return TurnOptions(settings=settings, instructions=record.instructions, tools=tools)


def _turn_start(session: Session, turn: int) -> TurnStartEvent | None:
    events = session.events
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if isinstance(event, TurnStartEvent) and event.data.turn == turn:
            return event
    return None


def prompt_turn(session: Session) -> int | None:
    """The turn the last human prompt on the surface entered in (what a regenerate
    answers again), or None."""
    events = session.events
    for seq in reversed(session.surface_seqs()):
        if is_prompt(message_of(events[seq])):
            for index in range(seq, -1, -1):
                event = events[index]
                if isinstance(event, TurnStartEvent):
                    return event.data.turn
            return None
    return None


def turn_start_seq(session: Session, turn: int) -> int:
    """The seq of ``turn``'s ``turn/start`` (the turn is in the log)."""
    start = _turn_start(session, turn)
    assert start is not None
    return start.seq


class TurnRequests:
    """What the requests of the turn being run go out with: the loop's header and
    tools, the options of the run that opened the turn, and the loop's dynamic
    instructions evaluated per request."""

    def __init__(
        self,
        *,
        session: Session,
        header: RequestHeader,
        tools: Mapping[str, Tool],
        instructions: InstructionsFunction[Any] | None,
        deps: object,
    ) -> None:
        self._session = session
        self._base_header, self._base_tools = header, dict(tools)
        self._instructions, self._deps = instructions, deps
        self.pending: TurnOptions | None = None
        """The options of the turns opened next (set while a run opens its turns)."""
        self._turn: int | None = None
        self._options = NO_OPTIONS
        self._header, self._tools = header, self._base_tools

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools the turn's calls may use."""
        return self._tools

    @property
    def output(self) -> OutputCollector[Any] | None:
        """The turn's structured-output collector, if its run asked for one."""
        return self._options.output

    def check(self, options: TurnOptions) -> None:
        """Refuse options no turn could use (a bad setting, a clashing tool name)
        before anything is written."""
        overridden(self._base_header, self._base_tools, options.settings, options.tools)

    def opening(self, again: int | None) -> TurnOptions:
        """The options of the turn about to open: the pending ones, else, for a turn
        that runs turn ``again`` once more (``retry()``, ``regenerate()``), the ones
        that turn had."""
        if self.pending is not None:
            return self.pending
        return NO_OPTIONS if again is None else restored(self._session, again)

    def begin(self, turn: int, options: TurnOptions) -> None:
        """Run ``turn`` with ``options``."""
        self._use(turn, options)

    def resume(self, turn: int) -> None:
        """Go on with ``turn`` (left open waiting for approval): its options are the
        ones this process opened it with, else the ones its ``turn/start`` records."""
        if self._turn != turn:
            self._use(turn, restored(self._session, turn))

    def end(self) -> None:
        """The turn ended: the loop's own header and tools again."""
        self._turn, self._options = None, NO_OPTIONS
        self._header, self._tools = self._base_header, self._base_tools

    def _use(self, turn: int, options: TurnOptions) -> None:
        header, tools = self._base_header, self._base_tools  # the same values: no header logged
        if options.tools or options.settings.given():
            header, tools = overridden(header, tools, options.settings, options.tools)
        self._turn, self._options, self._header, self._tools = turn, options, header, tools

    async def header(self, turn: int, step: int) -> RequestHeader:
        """The header of the request of ``turn``/``step``: the system prompt is the
        loop's, then the dynamic instructions', then the run's."""
        dynamic = None
        if self._instructions is not None:
            context = InstructionsContext(
                session=self._session, turn=turn, step=step, deps=self._deps
            )
            dynamic = await evaluate(self._instructions, context)
        return with_instructions(self._header, dynamic, self._options.instructions)

    def settle_output(self, inbox: Inbox, turn: int, step: int, answered: bool) -> None:
        """After the model's answer of a structured-output turn's step: a step that
        called no tool gets a reminder in the next step while attempts are left; once
        the run is decided, its correction attempts leave the surface (one empty
        ``assistant/message`` replace, inside this step; the log keeps them).
        ``answered``: the step's calls concluded the turn."""
        output = self.output
        if output is None or output.settled:  # e.g. a later turn opened during the run
            return
        if not answered:
            reminder = output.missing()
            if reminder is not None:
                inbox.append("next-step", reminder)
                return
        if not output.decided:
            return
        output.settled = True
        session = self._session
        span = correction_span(
            session.surface, turn_start_seq(session, turn), output.output is not None
        )
        if span:
            config = self._header.config
            shadow_answer(session, turn, step, span, config.provider, config.model)


__all__ = [
    "NO_OPTIONS",
    "TurnOptions",
    "TurnRequests",
    "prompt_turn",
    "restored",
    "turn_start_seq",
]
