"""The agent the service bench's `dsh worker` processes serve: an instant scripted
model (so the figures are the service's own cost)."""

from dsh_agent import AgentLoop
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session
from dsh_session.stores import SessionStore


def echo(session: Session, store: SessionStore) -> AgentLoop:
    adapter = FunctionAdapter(lambda request: "ok")
    return AgentLoop(session=session, adapter=adapter, provider="bench", model="echo", store=store)
