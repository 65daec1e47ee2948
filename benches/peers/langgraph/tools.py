"""Four of our query tools as LangChain tools, with our tools' names, descriptions,
arguments and statements (crates/kg-graph-tools: statistics.rs, ontology.rs, by_class.rs):
`get_node_statistics` — the one the benchmark's script calls — in full, the others on their
main path. Each answers compact JSON (`data` and a one-line `summary`), as ours do. The
turn's `Schema` (labels looked up at most once per turn) comes in the run's config; as in
ours, a tool whose statement matches one class looks its label up only when it found nothing
(rows prove the label exists). Each result is also written to the event stream."""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langgraph.config import get_stream_writer
from pydantic import BaseModel, ConfigDict, Field

from graph_client import Schema, quote_name

MAX_LABELS = 100
MAX_ITEMS = 100
META_LABELS = ("OntologyClass", "OntologyRelationship")


class ToolError(ToolException):
    """The arguments do not fit the graph (e.g. a label it does not have)."""


def schema_of(config: RunnableConfig) -> Schema:
    return config["configurable"]["schema"]


def answer(name: str, data: Any, summary: str, truncated: bool = False) -> str:
    """A tool's answer for the LLM; its summary also goes out as a `tool_result` event."""
    get_stream_writer()({"event": "tool_result", "data": {"tool": name, "summary": summary, "truncated": truncated}})
    return json.dumps({"data": data, "summary": summary, "truncated": truncated}, ensure_ascii=False)


def require_label(label: str, known: list[str]) -> None:
    if label not in known:
        raise ToolError(f"the graph has no label `{label}`; known: {', '.join(known)}")


class StatisticsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str | None = Field(None, description='Only this label (class), e.g. "PurchaseOrder"; omit for all labels.')
    sample_size: int = Field(3, ge=0, le=10, description="Sample nodes per label.")


async def get_node_statistics(config: RunnableConfig, label: str | None = None, sample_size: int = 3) -> str:
    schema = schema_of(config)
    graph = schema.graph
    if label is not None:
        rows = await graph.run(f"MATCH (n:{quote_name(label)}) RETURN count(n) AS count LIMIT 1")
        counts = [(label, rows[0][0] if rows else 0)]
        if counts[0][1] == 0:
            require_label(label, await schema.labels([label]))
        truncated = False
        total = counts[0][1]
    else:
        rows = await graph.run(
            "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS count ORDER BY label LIMIT 1000"
        )
        counts = [(r[0], r[1]) for r in rows]
        truncated = len(counts) > MAX_LABELS
        counts = counts[:MAX_LABELS]
        rows = await graph.run("MATCH (n) RETURN count(n) AS count LIMIT 1")
        total = rows[0][0] if rows else 0
    entries = []
    for name, count in counts:
        samples = []
        if sample_size > 0 and count > 0:
            rows = await graph.run(
                f"MATCH (n:{quote_name(name)}) RETURN n LIMIT $limit", {"limit": sample_size}
            )
            samples = [
                {"element_id": r[0]["element_id"], "properties": r[0]["properties"]}
                if isinstance(r[0], dict) and "properties" in r[0]
                else r[0]
                for r in rows
            ]
        entries.append({"label": name, "count": count, "samples": samples})
    if label is not None:
        summary = f"{label}: {total} nodes"
    elif counts:
        largest, n = max(counts, key=lambda c: c[1])
        summary = f"{len(counts)} labels, {total} nodes; largest: {largest} ({n})"
    else:
        summary = "the graph is empty"
    return answer("get_node_statistics", {"total_nodes": total, "labels": entries}, summary, truncated)


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def get_ontology_classes(config: RunnableConfig) -> str:
    schema = schema_of(config)
    known = await schema.labels([])
    if "OntologyClass" in known:
        rows = await schema.graph.run(
            "MATCH (c:OntologyClass) RETURN c.name AS name, c.description AS description, "
            "c.properties AS properties ORDER BY name LIMIT 500"
        )
        classes = [
            {
                "name": r[0],
                "description": r[1],
                "properties": [
                    {"name": p.split(":", 1)[0], "type": p.split(":", 1)[1] if ":" in p else None}
                    for p in (r[2] or [])
                    if isinstance(p, str)
                ],
            }
            for r in rows
        ]
        source = "ontology"
    else:
        classes = []
        for label in [l for l in known if l not in META_LABELS][:MAX_ITEMS]:
            rows = await schema.graph.run(
                f"MATCH (n:{quote_name(label)}) WITH n LIMIT 100 UNWIND keys(n) AS key "
                "RETURN DISTINCT key ORDER BY key LIMIT 200"
            )
            classes.append({"name": label, "description": None, "properties": [{"name": r[0], "type": None} for r in rows]})
        source = "schema"
    names = ", ".join(c["name"] or "?" for c in classes)
    return answer(
        "get_ontology_classes",
        {"source": source, "classes": classes},
        f"{len(classes)} classes (from the {source}): {names}",
        source == "schema" and len(known) > MAX_ITEMS,
    )


async def get_ontology_relationships(config: RunnableConfig) -> str:
    schema = schema_of(config)
    known = await schema.labels([])
    truncated = False
    if "OntologyRelationship" in known:
        rows = await schema.graph.run(
            "MATCH (r:OntologyRelationship) RETURN r.name AS name, r.source AS source, "
            "r.target AS target, r.description AS description ORDER BY name LIMIT 500"
        )
        items = [{"name": r[0], "source": r[1], "target": r[2], "description": r[3]} for r in rows]
        source = "ontology"
    else:
        types = await schema.relationship_types([])
        items = []
        for rel_type in types[:MAX_ITEMS]:
            rows = await schema.graph.run(
                f"MATCH (a)-[:{quote_name(rel_type)}]->(b) WITH labels(a) AS s, labels(b) AS t LIMIT 1000 "
                "UNWIND s AS source UNWIND t AS target RETURN DISTINCT source, target ORDER BY source, target LIMIT 20"
            )
            items.extend({"name": rel_type, "source": r[0], "target": r[1], "description": None} for r in rows)
        source = "schema"
        truncated = len(types) > MAX_ITEMS
    shown = ", ".join(f"({r['source'] or '?'})-[:{r['name'] or '?'}]->({r['target'] or '?'})" for r in items)
    return answer(
        "get_ontology_relationships",
        {"source": source, "relationships": items},
        f"{len(items)} relationship types (from the {source}): {shown}",
        truncated,
    )


class Filter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    property: str
    op: Literal["eq", "ne", "lt", "lte", "gt", "gte", "contains", "starts_with"] = "eq"
    value: str | float | int | bool = Field(description="A string, number or boolean.")


class ByClassArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    class_name: str = Field(description='The class (label), e.g. "PurchaseOrder".')
    filters: list[Filter] = Field(
        default_factory=list,
        max_length=10,
        description='All must hold, e.g. [{"property": "status", "value": "approved"}, '
        '{"property": "amount", "op": "gt", "value": 5000}].',
    )
    limit: int = Field(25, ge=1, le=100)
    offset: int = Field(0, ge=0, le=100000)


OPERATORS = {"eq": "=", "ne": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


async def get_instances_by_class(
    config: RunnableConfig,
    class_name: str,
    filters: list[Filter] | None = None,
    limit: int = 25,
    offset: int = 0,
) -> str:
    schema = schema_of(config)
    conditions, params = [], {}
    for i, f in enumerate(filters or []):
        f = f if isinstance(f, Filter) else Filter.model_validate(f)
        lhs, rhs = f"n.{quote_name(f.property)}", f"$v{i}"
        if f.op in OPERATORS:
            conditions.append(f"{lhs} {OPERATORS[f.op]} {rhs}")
        elif f.op == "contains":
            conditions.append(f"toLower(toString({lhs})) CONTAINS toLower({rhs})")
        else:
            conditions.append(f"toLower(toString({lhs})) STARTS WITH toLower({rhs})")
        params[f"v{i}"] = f.value
    where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
    params.update(offset=offset, limit=limit + 1)
    rows = await schema.graph.run(
        f"MATCH (n:{quote_name(class_name)}) {where}RETURN n ORDER BY n.id, n.name SKIP $offset LIMIT $limit", params
    )
    if not rows:
        require_label(class_name, await schema.labels([class_name]))
    truncated = len(rows) > limit
    instances = [
        {"element_id": r[0]["element_id"], "properties": r[0]["properties"]} for r in rows[:limit] if isinstance(r[0], dict)
    ]
    summary = (
        f"{len(instances)} {class_name} instance{'' if len(instances) == 1 else 's'}"
        + (f" matching {len(conditions)} filter(s)" if conditions else "")
        + (f"; more after offset {offset + limit}" if truncated else "")
    )
    return answer("get_instances_by_class", {"instances": instances}, summary, truncated)


def query_tools() -> list[StructuredTool]:
    """The tools the agent node binds; a tool's error goes back to the LLM as its result."""
    specs = [
        (get_instances_by_class, ByClassArgs,
         "List instances of one class (label), optionally filtered by property conditions, with paging."),
        (get_ontology_classes, NoArgs,
         "List the classes (node labels) of the knowledge graph with their descriptions and properties."),
        (get_ontology_relationships, NoArgs,
         "List the relationship types of the knowledge graph with their source and target classes and descriptions."),
        (get_node_statistics, StatisticsArgs,
         "Count the graph's nodes per label (class), or for one label, with a few sample nodes of each."),
    ]
    return [
        StructuredTool.from_function(
            coroutine=fn, name=fn.__name__, description=description, args_schema=args, handle_tool_error=True
        )
        for fn, args, description in specs
    ]
