"""Neo4j's Query API v2 over HTTP, the way our query tools talk to it (crates/neo4j-client):
one pooled HTTP client, `POST {origin}/db/neo4j/query/v2` with the statement, its parameters,
the access mode and (for a write only) `includeCounters`, the typed JSON format asked for,
Basic auth; the typed values decoded into plain Python values. A `Schema` caches
`db.labels()` and `db.relationshipTypes()` for one turn, like kg-graph-tools' `Session`; a
tool that found instances of its class does not look its label up, so the benchmark's 4-tool
turn sends 4 statements, as ours does."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import httpx

ACCEPT = "application/vnd.neo4j.query, application/json;q=0.9"
LABELS = "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 1000"
RELATIONSHIP_TYPES = (
    "CALL db.relationshipTypes() YIELD relationshipType "
    "RETURN relationshipType ORDER BY relationshipType LIMIT 1000"
)


class GraphError(Exception):
    """The graph answered with an error (its Neo4j code and message)."""


def plain(value: Any) -> Any:
    """A typed Query API value (`{"$type": …, "_value": …}`) as a plain Python value."""
    if not isinstance(value, dict) or "$type" not in value:
        return value
    kind, inner = value["$type"], value.get("_value")
    if kind == "Null":
        return None
    if kind == "Integer":
        return int(inner)
    if kind == "Float":
        return float(inner)
    if kind == "List":
        return [plain(v) for v in inner]
    if kind == "Map":
        return {k: plain(v) for k, v in inner.items()}
    if kind == "Node":
        return {
            "element_id": inner.get("_element_id"),
            "labels": inner.get("_labels", []),
            "properties": {k: plain(v) for k, v in inner.get("_properties", {}).items()},
        }
    if kind == "Relationship":
        return {
            "element_id": inner.get("_element_id"),
            "type": inner.get("_type"),
            "properties": {k: plain(v) for k, v in inner.get("_properties", {}).items()},
        }
    return inner


class GraphClient:
    """Statements against one graph through one pooled `httpx.AsyncClient`."""

    def __init__(self, origin: str, user: str, password: str, transport: httpx.AsyncBaseTransport):
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self.url = f"{origin.rstrip('/')}/db/neo4j/query/v2"
        self.headers = {
            "accept": ACCEPT,
            "content-type": "application/json",
            "authorization": f"Basic {token}",
        }
        self.http = httpx.AsyncClient(transport=transport, timeout=30.0)

    async def run(self, statement: str, parameters: dict | None = None, mode: str = "READ") -> list[list[Any]]:
        """The rows of one auto-commit statement, values decoded."""
        body = {
            "statement": statement,
            "parameters": parameters or {},
            "accessMode": mode,
        }
        if mode == "WRITE":
            body["includeCounters"] = True
        response = await self.http.post(self.url, json=body, headers=self.headers)
        answer = response.json()
        errors = answer.get("errors") or []
        if errors:
            raise GraphError(f"{errors[0].get('code')}: {errors[0].get('message')}")
        if response.status_code >= 400:
            raise GraphError(f"HTTP {response.status_code}")
        return [[plain(v) for v in row] for row in answer.get("data", {}).get("values", [])]

    async def aclose(self) -> None:
        await self.http.aclose()


@dataclass
class Schema:
    """One turn's label and relationship-type lists, each read from the graph at most once
    (plus one refresh when a tool asks for a name the list lacks)."""

    graph: GraphClient
    labels_list: list[str] | None = None
    types_list: list[str] | None = None
    refreshed: set[str] = field(default_factory=set)

    async def labels(self, needed: list[str]) -> list[str]:
        if self.labels_list is None or (
            "labels" not in self.refreshed and any(n not in self.labels_list for n in needed)
        ):
            if self.labels_list is not None:
                self.refreshed.add("labels")
            self.labels_list = [r[0] for r in await self.graph.run(LABELS)]
        return self.labels_list

    async def relationship_types(self, needed: list[str]) -> list[str]:
        if self.types_list is None or (
            "types" not in self.refreshed and any(n not in self.types_list for n in needed)
        ):
            if self.types_list is not None:
                self.refreshed.add("types")
            self.types_list = [r[0] for r in await self.graph.run(RELATIONSHIP_TYPES)]
        return self.types_list


def quote_name(name: str) -> str:
    """A label or property name as a Cypher identifier (backticks doubled inside)."""
    return "`" + name.replace("`", "``") + "`"
