"""A scripted agent session under examples/chatbot.yaml: one call runs, one is refused.

    python examples/agent_demo.py

The "model" is a ScriptedProvider replaying two turns: it asks to read a file and to run a
shell command from a Slack group session. The policy lets the read through and refuses exec,
which its messaging profile never had (layer 1). At the default refusal detail (`layer`) the
refusal that goes back to the model says only that: the layer and its label. The entry, the
file and line it is written at, and what to change go to the log and to observers; pass
`Runtime(..., refusal_detail="full")` to send them to the model too.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from policyctl import RunContext, Sender, load_policy
from policyctl.runtime import (
    ProviderResponse,
    Runtime,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
    tool,
)

HERE = Path(__file__).resolve().parent


def build_registry(workspace: Path) -> ToolRegistry:
    @tool(read_only=True)
    async def read(path: str) -> str:
        """Read a file of the workspace."""
        return (workspace / Path(path).name).read_text(encoding="utf-8")

    @tool(exclusive=True)
    async def exec(command: str) -> str:
        """Run a shell command."""
        raise AssertionError("the policy never lets this run")

    return ToolRegistry([read, exec])


async def main() -> int:
    policy = load_policy(HERE / "chatbot.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "faq.md").write_text("Opening hours: 9 to 5.", encoding="utf-8")
        provider = ScriptedProvider(
            [
                ProviderResponse(
                    tool_calls=(
                        ToolCall("call_1", "read", {"path": "faq.md"}),
                        ToolCall("call_2", "exec", {"command": "cat /etc/passwd"}),
                    )
                ),
                ProviderResponse(content="We are open from 9 to 5."),
            ]
        )
        runtime = Runtime(policy, build_registry(workspace), provider)
        ctx = RunContext(
            agent="support",
            session_key="agent:support:slack:group:C0ENGINEERING",
            sender=Sender(id="U777"),
        )
        result = await runtime.run_turn(ctx, "When are you open?")
    print("tools offered to the model:", [t["function"]["name"] for t in provider.requests[0][1]])
    for message in result.messages:
        if message["role"] == "tool":
            print(f"\n{message['name']} ->")
            try:
                print(json.dumps(json.loads(message["content"]), indent=2))
            except ValueError:
                print(message["content"])
    print("\nmodel:", result.final_text)
    refused = [o for o in result.outcomes if o.veto is not None]
    return 0 if [o.tool for o in refused] == ["exec"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
