"""The model of a replay: each request today's code sends is compared with the
recorded one, then answered with what the recorded model streamed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from dsh_agent.testing._diff import RequestComparer, RequestDifference
from dsh_agent.testing._recording import Recording
from dsh_llm._content import TextBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._messages import UserMessage
from dsh_llm._request import GenerateRequest
from dsh_llm._sources import PluginSource
from dsh_llm._stream import (
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
    StopFinish,
    StreamChunk,
    TextDeltaChunk,
)
from dsh_llm.failure_codes import INVALID_REQUEST

_SUMMARY_PLUGIN = "dsh-compaction"
"""The source of the instruction that ends a summary request (``ModelSummarizer``)."""


class ReplayAdapter:
    """Serves a recording. ``before_answer(k)`` runs before the ``k``-th answer (from
    0) is streamed: the replay delivers there what was delivered while it streamed.
    After the first difference every request fails (``INVALID_REQUEST``, which no
    retry policy retries), so the agent stops."""

    def __init__(
        self,
        recording: Recording,
        before_answer: Callable[[int], None],
        generation: Callable[[], int],
    ) -> None:
        header = recording.attempts[0].header.config if recording.attempts else None
        self.provider = header.provider if header else "replay"
        self.model = header.model if header else "replay"
        self.requests = 0
        """Conversation requests received so far (summary requests not counted)."""
        self.summaries = 0
        self.difference: RequestDifference | None = None
        self._recording = recording
        self._before_answer = before_answer
        self._comparer = RequestComparer()
        self._generation = generation
        """The replayed session's surface generation (a replace bumps it)."""
        self._compared_at: int | None = None

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        for chunk in self._answer(request):
            yield chunk

    def _answer(self, request: GenerateRequest) -> tuple[StreamChunk, ...]:
        if self.difference is not None:
            return _refusal("the replay already found a difference")
        if _is_summary_request(request):
            return self._summary()
        number = self.requests
        self.requests += 1
        attempts = self._recording.attempts
        if number >= len(attempts):
            self.difference = RequestDifference(
                number + 1,
                None,
                problem=f"the recording has {len(attempts)} request(s); today's code makes more",
            )
            return _refusal(str(self.difference))
        attempt = attempts[number]
        generation = self._generation()
        self.difference = self._comparer.compare(
            number + 1,
            attempt.seq,
            attempt.request(),
            request,
            recorded_grew=number > 0 and not attempt.rewritten,
            live_grew=generation == self._compared_at,
        )
        self._compared_at = generation
        if self.difference is not None:
            return _refusal(str(self.difference))
        self._before_answer(number)
        return self._recording.responses[number]

    def _summary(self) -> tuple[StreamChunk, ...]:
        summaries = self._recording.summaries
        if self.summaries >= len(summaries):
            self.difference = RequestDifference(
                self.requests + 1,
                None,
                problem=(
                    f"today's code asks for summary {self.summaries + 1}; the recording "
                    f"has {len(summaries)} (its compaction ran differently)"
                ),
            )
            return _refusal(str(self.difference))
        blocks = summaries[self.summaries]
        self.summaries += 1
        chunks: list[StreamChunk] = []
        for index, block in enumerate(blocks):
            assert isinstance(block, TextBlock)
            chunks += [
                BlockStartChunk(index=index, block_type="text"),
                TextDeltaChunk(index=index, text=block.text),
                BlockEndChunk(index=index, block=block),
            ]
        return (*chunks, FinishChunk(reason=StopFinish()))


def _is_summary_request(request: GenerateRequest) -> bool:
    last = request.messages[-1] if request.messages else None
    return (
        isinstance(last, UserMessage)
        and isinstance(last.source, PluginSource)
        and last.source.plugin == _SUMMARY_PLUGIN
    )


def _refusal(why: str) -> tuple[StreamChunk, ...]:
    failure = LlmFailure(message=f"replay: {why}", code=INVALID_REQUEST)
    return (FinishChunk(reason=ErrorFinish(failure=failure)),)


__all__ = [
    "ReplayAdapter",
]
