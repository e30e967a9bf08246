"""Structured output: the model answers by calling a final-result tool whose
arguments are the output model's JSON Schema.

The tool belongs to the turn of the run that asks for an output type (recorded in
its ``turn/start``, offered in the request headers, so ``reconstruct_requests``
reproduces the requests and a process resuming the turn offers it again). Its handler
validates the arguments with the output model: a valid answer is kept and concludes
the turn; an invalid one goes back to the model as an error result naming each
problem, so it can call again. A step that answers without a call gets a reminder in
the next step of the same turn. After ``corrections`` failed attempts the turn ends and
the run fails with :class:`OutputValidationError`. Once the run is decided, the
correction attempts leave the surface (:func:`correction_span`; see
docs/decisions/2026-12-03-structured-output.md and
docs/decisions/2026-12-06-turn-run-options.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from dsh_agent.errors import OutputValidationError
from dsh_agent.tools import Tool, ToolOutput
from dsh_llm._content import ToolCallBlock
from dsh_llm._create import create_user_message
from dsh_llm._messages import UserMessage
from dsh_llm._request import ToolSchema
from dsh_session._surface_view import SurfaceNode, SurfaceView
from dsh_session.events import AssistantMessageEvent, ToolResultEvent

FINAL_RESULT_TOOL = "final_result"
DEFAULT_OUTPUT_CORRECTIONS = 2
OUTPUT_PLUGIN = "dsh.structured-output"
"""The plugin name on the reminders this module sends (``source.plugin``)."""

OutputT = TypeVar("OutputT", bound=BaseModel)


class OutputCollector(Generic[OutputT]):
    """The final-result tool of one run's turns, and what it received."""

    def __init__(
        self, output_type: type[OutputT], *, corrections: int = DEFAULT_OUTPUT_CORRECTIONS
    ):
        if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)):
            raise TypeError(f"output_type must be a Pydantic model class, not {output_type!r}")
        schema = output_type.model_json_schema()
        schema.pop("title", None)
        description = (
            f"Give your final answer as a {output_type.__name__}: call this tool once, "
            "with the answer as its arguments, instead of answering in text."
            + (f"\n\n{output_type.__doc__.strip()}" if output_type.__doc__ else "")
        )
        self._setup(output_type, output_type.__name__, corrections, description, schema)

    @classmethod
    def restored(cls, schema: ToolSchema, corrections: int, failed: int) -> OutputCollector[Any]:
        """The collector of a turn resumed by a process that does not hold the run's
        output type (after a restart): the recorded tool, the attempts already failed
        in the turn counted, and an answer accepted as the JSON object the model gave
        (the schema was offered to the model; no Python model is here to validate it)."""
        parameters = schema.parameters
        assert isinstance(parameters, Mapping)  # a tool schema's parameters are an object
        collector: OutputCollector[Any] = cls.__new__(cls)
        collector._setup(None, "answer", corrections, schema.description, parameters)
        collector.problems.extend(["an earlier attempt of this turn failed"] * failed)
        return collector

    def _setup(
        self,
        output_type: type[OutputT] | None,
        label: str,
        corrections: int,
        description: str,
        parameters: Mapping[str, Any],
    ) -> None:
        if corrections < 0:
            raise ValueError(f"corrections must be 0 or more, not {corrections}")
        self.output_type = output_type
        self._label = label
        self.corrections = corrections
        self.output: OutputT | None = None
        self.problems: list[str] = []
        self.settled = False
        """The run was decided and its corrections left the surface: nothing more to do."""
        self.tool: Tool = _FinalResultTool(
            name=FINAL_RESULT_TOOL,
            description=description,
            parameters=parameters,
            handler=self._receive,
        )

    @property
    def may_correct(self) -> bool:
        """Another attempt is allowed after the failures so far."""
        return len(self.problems) <= self.corrections

    @property
    def decided(self) -> bool:
        """The answer came, or no attempt is left."""
        return self.output is not None or not self.may_correct

    async def _receive(self, arguments: dict[str, Any]) -> ToolOutput:
        if self.output_type is None:
            self.output = arguments  # type: ignore[assignment]  # restored: the JSON object
            return ToolOutput("Final answer received.", concludes_turn=True)
        try:
            self.output = self.output_type.model_validate(arguments)
        except ValidationError as error:
            return self.refuse(_describe(error))
        return ToolOutput("Final answer received.", concludes_turn=True)

    def refuse(self, problem: str) -> ToolOutput:
        """Record a failed attempt; the error result that asks for another, or that
        concludes the turn when none is left."""
        self.problems.append(problem)
        again = self.may_correct
        advice = " Call final_result again with corrected arguments." if again else ""
        return ToolOutput(
            f"Error: the answer is not a valid {self._label}: {problem}.{advice}",
            is_error=True,
            concludes_turn=not again,
        )

    def missing(self) -> UserMessage | None:
        """Record a model answer without a call; the message asking for one, or None
        when no attempt is left."""
        if not self.may_correct:  # the last attempt was a failed call: already recorded
            return None
        self.problems.append(f"the model answered without calling {FINAL_RESULT_TOOL}")
        if not self.may_correct:
            return None
        return create_user_message(
            f"Give your final answer by calling the {FINAL_RESULT_TOOL} tool.",
            source={"kind": "plugin", "plugin": OUTPUT_PLUGIN},
        )

    def result(self) -> OutputT:
        """The validated answer, or :class:`OutputValidationError`."""
        assert self.output_type is not None, "a restored turn's answer is read from its log"
        if self.output is None:
            raise OutputValidationError(self.output_type, self.problems)
        return self.output


def collector_of(offered: Tool) -> OutputCollector[Any] | None:
    """The collector whose final-result tool ``offered`` is, else None."""
    if not isinstance(offered, _FinalResultTool):
        return None
    collector = getattr(offered.handler, "__self__", None)
    assert isinstance(collector, OutputCollector)
    return collector


class _FinalResultTool(Tool):
    """The final-result tool: arguments that do not parse into an object are a failed
    attempt of the collector's, counted like an answer that does not validate."""

    __slots__ = ()

    def _arguments_refused(self, problem: str) -> ToolOutput | None:
        collector = collector_of(self)
        assert collector is not None
        return collector.refuse(problem)


# --- the attempts of a turn on the surface ----------------------------------------------


def _failed_attempts(surface: SurfaceView, since: int) -> list[int]:
    """The surface positions of the model answers after seq ``since`` that were failed
    attempts: an answer with no tool call, or whose ``final_result`` call got an error
    result. An answer calling only other tools is no attempt."""
    failed_calls = {
        node.event.data.message.source.call_id
        for node in surface
        if node.seq > since
        and isinstance(node.event, ToolResultEvent)
        and node.event.data.message.content[0].is_error
    }
    failed: list[int] = []
    for node in surface:
        if node.seq <= since or not _is_answer(node):
            continue
        assert isinstance(node.event, AssistantMessageEvent)
        calls = [b for b in node.event.data.message.content if isinstance(b, ToolCallBlock)]
        finals = [call for call in calls if call.name == FINAL_RESULT_TOOL]
        if not calls or any(c.call_id in failed_calls for c in finals):
            failed.append(node.position)
    return failed


def _is_answer(node: SurfaceNode) -> bool:
    event = node.event
    return isinstance(event, AssistantMessageEvent) and event.surface_op == "append"


def failed_attempt_count(surface: SurfaceView, since: int) -> int:
    """How many failed attempts the surface holds after seq ``since`` (a turn's start)."""
    return len(_failed_attempts(surface, since))


def correction_span(surface: SurfaceView, since: int, answered: bool) -> tuple[int, ...]:
    """The consecutive surface seqs a decided structured run after seq ``since`` takes
    off the surface, so later requests see no correction (empty when none happened).

    ``answered``: everything from the first failed attempt up to the answering message,
    which stays with its results (the model's answer as if given at once). Failed: the
    corrections after the first failed attempt and its results (the model's first
    answer stays, as if no reminder had been sent). Either way a model message that
    called another tool stays with everything before it: what the tools did stays in
    the history."""
    failed = _failed_attempts(surface, since)
    if not failed:
        return ()
    end = len(surface)
    if answered:
        end = max(node.position for node in surface if _is_answer(node))
        start = failed[0]
    else:
        start = _after_results(surface, failed[0])
    for node in surface[start:end]:
        if _is_answer(node) and _calls_other_tools(node):
            start = _after_results(surface, node.position)
    return tuple(node.seq for node in surface[start:end])


def _after_results(surface: SurfaceView, position: int) -> int:
    """The position after the model message at ``position`` and its tool results."""
    after = position + 1
    while after < len(surface) and isinstance(surface[after].event, ToolResultEvent):
        after += 1
    return after


def _calls_other_tools(node: SurfaceNode) -> bool:
    return any(
        isinstance(block, ToolCallBlock) and block.name != FINAL_RESULT_TOOL
        for block in node.message.content
    )


def _describe(error: ValidationError) -> str:
    problems = []
    for detail in error.errors(include_url=False):
        location = ".".join(str(part) for part in detail["loc"]) or "(answer)"
        problems.append(f"'{location}': {detail['msg']}")
    return "; ".join(problems)


__all__ = [
    "DEFAULT_OUTPUT_CORRECTIONS",
    "FINAL_RESULT_TOOL",
    "OUTPUT_PLUGIN",
    "OutputCollector",
    "collector_of",
    "correction_span",
    "failed_attempt_count",
]
