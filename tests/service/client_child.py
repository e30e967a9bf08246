"""A client process: ``python client_child.py URL SESSION VERB ARG`` delivers one request
and prints its receipt as JSON (``followup`` takes a message's JSON, ``approve`` a call
id)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys

from dsh_agent import connect
from dsh_llm import UserMessage
from dsh_session import open_store


async def main(url: str, session_id: str, verb: str, arg: str) -> None:
    async with open_store(url) as store, connect(store, session_id) as agent:
        if verb == "followup":
            receipt = await agent.followup(UserMessage.model_validate_json(arg))
        else:
            receipt = await agent.approve(arg)
    print(json.dumps(dataclasses.asdict(receipt)), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
