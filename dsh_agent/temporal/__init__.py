"""dsh_agent.temporal: durable dsh agents on Temporal (the ``temporal`` extra).

Every model step and every tool call is an activity whose input is the session id, the
seq the step starts from and the ids it needs, and whose output is positions in the log
(never messages): ``TemporalAgent`` for a user's own workflow, ``SessionWorkflow`` as a
ready workflow per session. The session's log in the dsh store is the state; see
docs/decisions/2026-12-06-temporal.md.
"""

from dsh_agent.temporal._agent import TemporalAgent
from dsh_agent.temporal._payloads import (
    DecisionInput,
    DeliverInput,
    ModelStepInput,
    SessionInput,
    StepReport,
    ToolStepInput,
    TurnOutcome,
)
from dsh_agent.temporal._scheduler import (
    AgentRef,
    Decide,
    Decision,
    TurnControl,
    session_workflow_id,
)
from dsh_agent.temporal._session_workflow import (
    Denial,
    SessionState,
    SessionStatus,
    SessionWorkflow,
    SessionWorkflowInput,
)

__all__ = [
    "AgentRef",
    "Decide",
    "Decision",
    "DecisionInput",
    "DeliverInput",
    "Denial",
    "ModelStepInput",
    "SessionInput",
    "SessionState",
    "SessionStatus",
    "SessionWorkflow",
    "SessionWorkflowInput",
    "StepReport",
    "TemporalAgent",
    "ToolStepInput",
    "TurnControl",
    "TurnOutcome",
    "session_workflow_id",
]
