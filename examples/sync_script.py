"""Driving an agent from plain sync code (a script, or a notebook cell): run_sync for
one question, SyncAgent for a chat. Run: python examples/sync_script.py (a scripted
model, so no key or network is needed)."""

from dsh_agent import AgentLoop, SyncAgent, TextDelta, run_sync
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session


def make_agent() -> AgentLoop:
    """Called on the private loop, so the agent (and a store, if any) live there."""
    answers = ["Paris.", "About 2.1 million people.", "You're welcome."]
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(answers),
        provider="test",
        model="scripted",
    )


# One question: build the agent, run one turn, close it.
print(run_sync(make_agent, "Capital of France?").final_response)

# A chat: one agent across turns; leaving the `with` closes it and its thread.
with SyncAgent(make_agent) as chat:
    print(chat.run("Capital of France?").final_response)
    for update in chat.stream("How many people live there?"):
        if isinstance(update, TextDelta):
            print(update.text, end="", flush=True)
    print()
