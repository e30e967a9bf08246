"""An MCP tool server's tools in an agent, every call and result in the log. Run:
python examples/mcp_tools.py (pip install 'dsh-sdk[mcp]'). The example starts itself
as the stdio MCP server (`serve`), and a scripted model calls its tool, so no key or
network is needed."""

import asyncio
import sys

from dsh_agent import AgentLoop, reconstruct_requests, run
from dsh_agent.mcp import McpToolset, StdioServerParameters
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


def serve() -> None:
    """The MCP server: one tool, written with the official SDK."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("unit-converter")

    @server.tool()
    def km_to_miles(km: float) -> str:
        """Convert kilometres to miles."""
        return f"{km * 0.621371:.1f} miles"

    server.run("stdio")


async def main() -> None:
    command = StdioServerParameters(command=sys.executable, args=[__file__, "serve"])
    async with McpToolset(command, name_prefix="units_") as units:
        print("tools:", [offered.name for offered in units.tools])
        model = ScriptedAdapter(
            [
                reply(tool_calls=[{"name": "units_km_to_miles", "arguments": {"km": 42.195}}]),
                "A marathon is about 26.2 miles.",
            ]
        )
        session = Session.create()
        async with AgentLoop(
            session=session, adapter=model, provider="test", model="scripted", tools=units.tools
        ) as agent:
            question = create_user_message(content="A marathon in miles?", source={"kind": "user"})
            result = await run(agent, question)
    print("answer:", result.final_response)
    (result_block,) = session.derive_messages()[2].model_dump(mode="json")["content"]
    print("tool result:", result_block["content"][0]["text"])
    # The log alone rebuilds both requests, with the MCP tool's schema in each.
    rebuilt = reconstruct_requests(session.events)
    print("requests rebuilt:", rebuilt == list(model.requests))


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        asyncio.run(main())
