"""Drives kg-agent's /mcp with the official MCP Python SDK (mcp.Client), step by step.

Usage: client.py URL BEARER_TOKEN STEPS_JSON [MODE]. MODE is the SDK's connect mode:
"auto" (default: `server/discover`, the 2026-07-28 per-request envelope, falling back to the
handshake) or "legacy" (the `initialize` handshake). STEPS_JSON is a list of steps:
  {"op": "list_tools"}
  {"op": "call", "name": TOOL, "arguments": {...}, "progress": true?}
  {"op": "ping"}
  {"op": "list_resources"} / {"op": "list_resource_templates"} / {"op": "read_resource", "uri": URI}
  {"op": "list_prompts"} / {"op": "get_prompt", "name": NAME, "arguments": {...}}
Prints one JSON object: the negotiated protocol version, the server's name, and one result
per step (a protocol error as {"error": {"code", "message"}}). The Rust end-to-end tests
(tests/tests/mcp.rs) choose the steps and check the results; nothing here asserts.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


async def run(url, token, steps, mode):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    results = []
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            out = {
                "protocol_version": client.protocol_version,
                "server_name": client.server_info.name if client.server_info else None,
            }
            for step in steps:
                try:
                    results.append(await run_step(client, step))
                except MCPError as e:
                    results.append({"error": {"code": e.error.code, "message": e.error.message}})
    out["results"] = results
    return out


async def run_step(client, step):
    op = step["op"]
    if op == "list_tools":
        listed = await client.list_tools()
        return {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]}
    if op == "call":
        seen = []

        async def on_progress(progress, total, message):
            seen.append({"progress": progress, "total": total, "message": message})

        callback = on_progress if step.get("progress") else None
        result = await client.call_tool(step["name"], step.get("arguments", {}), progress_callback=callback)
        report = {
            "isError": bool(result.is_error),
            "structured": result.structured_content,
            "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
        }
        if step.get("progress"):
            report["progress"] = {
                "count": len(seen),
                "values": [p["progress"] for p in seen],
                "total": seen[-1]["total"] if seen else None,
                "first_message": seen[0]["message"] if seen else None,
            }
        return report
    if op == "list_resources":
        listed = await client.list_resources()
        return {"resources": [r.model_dump(by_alias=True, exclude_none=True, mode="json") for r in listed.resources]}
    if op == "list_resource_templates":
        listed = await client.list_resource_templates()
        return {"templates": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.resource_templates]}
    if op == "read_resource":
        read = await client.read_resource(step["uri"])
        return {"contents": [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in read.contents]}
    if op == "list_prompts":
        listed = await client.list_prompts()
        return {"prompts": [p.model_dump(by_alias=True, exclude_none=True, mode="json") for p in listed.prompts]}
    if op == "get_prompt":
        got = await client.get_prompt(step["name"], step.get("arguments", {}))
        return got.model_dump(by_alias=True, exclude_none=True, mode="json")
    if op == "ping":
        await client.send_ping()
        return {"pong": True}
    raise ValueError(f"unknown op {op!r}")


def main():
    url, token, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "auto"
    print(json.dumps(asyncio.run(run(url, token, steps, mode))))


if __name__ == "__main__":
    main()
