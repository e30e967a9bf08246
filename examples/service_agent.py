"""The agent a `dsh worker` serves: `dsh worker --store sqlite:///service.db --agent
examples.service_agent:build`. Offline (a scripted model); put a real model string here."""

from dsh_agent import AgentLoop
from dsh_llm import GenerateRequest, UserMessage
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session
from dsh_session.stores import SessionStore


def answer(request: GenerateRequest) -> str:
    prompts = [m for m in request.messages if isinstance(m, UserMessage)]
    return f"you said {prompts[-1].content[0].text!r}"  # type: ignore[union-attr]


def build(session: Session, store: SessionStore) -> AgentLoop:
    """Called by the worker for each session it takes: model, tools, settings."""
    adapter = FunctionAdapter(answer)
    return AgentLoop(session=session, adapter=adapter, provider="demo", model="echo", store=store)
