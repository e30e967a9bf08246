"""Structured output: the model answers by calling a final-result tool whose
arguments are the output model's JSON Schema.

The tool is offered only during the run that asks for an output type (added to the
request header, so the log names it and ``reconstruct_requests`` reproduces the
requests). Its handler validates the arguments with the output model: a valid answer
is kept and concludes the turn; an invalid one goes back to the model as an error
result naming each problem, so it can call again. A turn that ends without a call is
answered with a reminder. After ``corrections`` failed attempts the run fails with
:class:`OutputValidationError` (see docs/decisions/2026-12-03-structured-output.md).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from dsh_agent.errors import OutputValidationError
from dsh_agent.tools import Tool, ToolOutput
from dsh_llm._create import create_user_message
from dsh_llm._messages import UserMessage

FINAL_RESULT_TOOL = "final_result"
DEFAULT_OUTPUT_CORRECTIONS = 2
OUTPUT_PLUGIN = "dsh.structured-output"
"""The plugin name on the reminders this module sends (``source.plugin``)."""

OutputT = TypeVar("OutputT", bound=BaseModel)


class OutputCollector(Generic[OutputT]):
    """The final-result tool of one run, and what it received."""

    def __init__(
        self, output_type: type[OutputT], *, corrections: int = DEFAULT_OUTPUT_CORRECTIONS
    ):
        if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)):
            raise TypeError(f"output_type must be a Pydantic model class, not {output_type!r}")
        if corrections < 0:
            raise ValueError(f"corrections must be 0 or more, not {corrections}")
        self.output_type = output_type
        self._corrections = corrections
        self.output: OutputT | None = None
        self.problems: list[str] = []
        schema = output_type.model_json_schema()
        schema.pop("title", None)
        self.tool: Tool = _FinalResultTool(
            name=FINAL_RESULT_TOOL,
            description=(
                f"Give your final answer as a {output_type.__name__}: call this tool once, "
                "with the answer as its arguments, instead of answering in text."
                + (f"\n\n{output_type.__doc__.strip()}" if output_type.__doc__ else "")
            ),
            parameters=schema,
            handler=self._receive,
        )

    @property
    def may_correct(self) -> bool:
        """Another attempt is allowed after the failures so far."""
        return len(self.problems) <= self._corrections

    async def _receive(self, arguments: dict[str, Any]) -> ToolOutput:
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
            f"Error: the answer is not a valid {self.output_type.__name__}: {problem}.{advice}",
            is_error=True,
            concludes_turn=not again,
        )

    def missing(self) -> UserMessage | None:
        """Record a turn that ended without an answer; the message asking for one, or
        None when no attempt is left."""
        if not self.may_correct:  # the last attempt was a failed call: already recorded
            return None
        self.problems.append(f"the model answered without calling {FINAL_RESULT_TOOL}")
        if not self.may_correct:
            return None
        return create_user_message(
            content=f"Give your final answer by calling the {FINAL_RESULT_TOOL} tool.",
            source={"kind": "plugin", "plugin": OUTPUT_PLUGIN},
        )

    def result(self) -> OutputT:
        """The validated answer, or :class:`OutputValidationError`."""
        if self.output is None:
            raise OutputValidationError(self.output_type, self.problems)
        return self.output


class _FinalResultTool(Tool):
    """The final-result tool: arguments that do not parse into an object are a failed
    attempt of the collector's, counted like an answer that does not validate."""

    __slots__ = ()

    def _arguments_refused(self, problem: str) -> ToolOutput | None:
        collector = getattr(self.handler, "__self__", None)
        assert isinstance(collector, OutputCollector)
        return collector.refuse(problem)


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
]
