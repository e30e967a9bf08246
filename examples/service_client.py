"""A client of `dsh worker`: create a session, send a message, stream the answer.
Run `dsh worker --store sqlite:///service.db --agent examples.service_agent:build` in
another terminal first (both from the repository root)."""

import asyncio
import sys

from dsh_agent import AssistantCommitted, TurnEnded, connect
from dsh_llm import create_user_message
from dsh_session import Session, open_store


async def main(url: str) -> None:
    async with open_store(url) as store:
        session = Session.create()  # a web app would do this once per conversation
        store.attach(session)
        await store.flush(session)
        store.detach(session)

        async with connect(store, session.id) as agent:
            message = create_user_message("hello, worker")
            receipt = await agent.followup(message)
            again = await agent.followup(message)  # a retried POST: the same receipt
            same = again == receipt
            print(f"delivered {receipt.delivery_id}; the retry got the same receipt: {same}")
            async for update in agent.updates():
                if isinstance(update, AssistantCommitted):
                    print("assistant:", update.message.content[0].text)  # type: ignore[union-attr]
                if isinstance(update, TurnEnded):
                    print("turn ended:", update.kind)
                    break


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///service.db"))
