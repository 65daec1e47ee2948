#!/usr/bin/env python3
"""Brings into docs/openapi.json what the code and docs/events.schema.json define, keeping
the document's key order:
- components.schemas.ChatEvent: docs/events.schema.json (the chat event stream's
  contract), its `#/$defs/...` references rebased onto the copy
  (crates/kg-http/tests/openapi.rs checks it);
- one `POST /tools/<name>` operation per graph tool, from target/openapi/tools.json, which
  crates/kg-graph-tools/tests/openapi.rs writes when the document drifts from the tools'
  argument schemas (`cargo test -p kg-graph-tools --test openapi` first).
"""
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
docs = root / "docs"


def rebased(value):
    if isinstance(value, str) and value.startswith("#/$defs/"):
        return value.replace("#/$defs/", "#/components/schemas/ChatEvent/$defs/", 1)
    if isinstance(value, list):
        return [rebased(v) for v in value]
    if isinstance(value, dict):
        return {k: rebased(v) for k, v in value.items() if k not in ("$schema", "$id")}
    return value


path = docs / "openapi.json"
document = json.loads(path.read_text())
events = json.loads((docs / "events.schema.json").read_text())
document["components"]["schemas"]["ChatEvent"] = rebased(events)

tools = root / "target" / "openapi" / "tools.json"
if tools.exists():
    paths = {}
    for key, item in document["paths"].items():
        # Each tool's operation right after the generic one, in the tools' order.
        if key.startswith("/tools/") and key != "/tools/{name}":
            continue
        paths[key] = item
        if key == "/tools/{name}":
            paths.update(json.loads(tools.read_text()))
    document["paths"] = paths
    tools.unlink()

path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
