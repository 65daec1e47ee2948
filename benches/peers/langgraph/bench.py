"""The LangGraph implementation of seed 000's graph (agent.py) against the stack our
benches use — devgraph with the demo graph and our scripted, instant LLM stub, started by
`cargo run -p kg-e2e --example peer_stack -- …` — scripted like `request_profile`: a
turn with no tool step (the agent answers; with --zero-step-llm-calls 2 it drafts and the
summariser answers) and one with four `get_node_statistics` calls, a draft and the
summariser's answer.

Per turn it measures the whole turn (`graph.astream` to its end, every event collected) and,
at the HTTP transport, each graph and LLM round trip (request sent to answer body read), so
what is left is LangGraph's, LangChain's and this code's own compute. Prints one JSON
line with the medians (ms) and, with --table, a readable table.

  python bench.py [--runs 200] [--warmup 20] [--zero-step-llm-calls 1|2] [--table]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time

import httpx

from agent import build_graph, run_turn
from graph_client import GraphClient

STEPS = 4
QUESTION = "How many suppliers are there?"
ANSWER = "There are 10 suppliers."


class TimedTransport(httpx.AsyncHTTPTransport):
    """An HTTP transport that adds up the time of each round trip through it: from the
    request going out to the answer's body read, what our devhost counts per outbound
    request."""

    def __init__(self) -> None:
        super().__init__(http2=False)
        self.seconds = 0.0
        self.calls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        response = await super().handle_async_request(request)
        await response.aread()
        self.seconds += time.perf_counter() - started
        self.calls += 1
        return response

    def take(self) -> tuple[float, int]:
        taken = (self.seconds * 1000.0, self.calls)
        self.seconds, self.calls = 0.0, 0
        return taken


def script(steps: int, summarise_always: bool) -> list[dict]:
    """request_profile's script: `steps` tool calls, then the agent's draft and the
    summariser's answer; a turn without tools answers at once unless `summarise_always`."""
    calls = [{"call": {"name": "get_node_statistics", "arguments": {"label": "Supplier", "sample_size": 0}}}] * steps
    if steps == 0 and not summarise_always:
        return [{"text": ANSWER}]
    return calls + [{"text": "draft"}, {"text": ANSWER}]


async def measure(graph, graph_client, control, graph_io, llm_io, steps: int, runs: int, warmup: int,
                  summarise_always: bool) -> dict:
    samples = {"turn": [], "graph": [], "llm": [], "graph_n": [], "llm_n": [], "events": []}
    for i in range(warmup + runs):
        (await control.post(os.environ["KG_PEER_SCRIPT_URL"], json=script(steps, summarise_always))).raise_for_status()
        graph_io.take()
        llm_io.take()
        started = time.perf_counter()
        events, answer = await run_turn(graph, graph_client, QUESTION)
        turn = (time.perf_counter() - started) * 1000.0
        if answer != ANSWER:
            raise SystemExit(f"turn with {steps} steps answered {answer!r}; events: {events}")
        (graph_ms, graph_n), (llm_ms, llm_n) = graph_io.take(), llm_io.take()
        expected = len(script(steps, summarise_always))
        if llm_n != expected:
            raise SystemExit(f"turn with {steps} steps made {llm_n} LLM calls, expected {expected}")
        if i >= warmup:
            for key, value in (("turn", turn), ("graph", graph_ms), ("llm", llm_ms), ("graph_n", graph_n),
                               ("llm_n", llm_n), ("events", len(events))):
                samples[key].append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--table", action="store_true")
    parser.add_argument(
        "--zero-step-llm-calls", type=int, choices=(1, 2), default=1,
        help="LLM calls of a turn without tools: 1, the agent's reply is the answer (ours since issue #18); "
        "2, the summariser writes it (seed 000's drawing). run.sh passes what ours made.",
    )
    args = parser.parse_args()

    graph_io, llm_io = TimedTransport(), TimedTransport()
    graph_client = GraphClient(
        os.environ["KG_PEER_GRAPH_URL"], os.environ["KG_PEER_GRAPH_USER"], os.environ["KG_PEER_GRAPH_PASSWORD"], graph_io
    )
    llm_http = httpx.AsyncClient(transport=llm_io, timeout=30.0)
    summarise_always = args.zero_step_llm_calls == 2
    graph = build_graph(os.environ["KG_PEER_LLM_URL"], llm_http, summarise_always)
    async with httpx.AsyncClient(timeout=30.0) as control:
        zero = await measure(graph, graph_client, control, graph_io, llm_io, 0, args.runs, args.warmup, summarise_always)
        four = await measure(graph, graph_client, control, graph_io, llm_io, STEPS, args.runs, args.warmup, summarise_always)
    await graph_client.aclose()
    await llm_http.aclose()

    per_step = (four["turn"] - zero["turn"]) / STEPS
    round_trips = ((four["graph"] + four["llm"]) - (zero["graph"] + zero["llm"])) / STEPS
    result = {
        "runs": args.runs,
        "zero_step_turn_ms": zero["turn"],
        "zero_step_round_trips_ms": zero["graph"] + zero["llm"],
        "four_step_turn_ms": four["turn"],
        "per_step_ms": per_step,
        "per_step_round_trips_ms": round_trips,
        "per_step_orchestration_ms": per_step - round_trips,
        "zero": zero,
        "four": four,
    }
    print(json.dumps(result))
    if args.table:
        print(f"LangGraph {sys.modules['langgraph'].__dict__.get('__version__', '')} — medians of {args.runs} turns (ms):", file=sys.stderr)
        for name, m in (("0-step turn", zero), (f"{STEPS}-step turn", four)):
            print(
                f"  {name:13} {m['turn']:8.3f}   graph {m['graph']:7.3f} (n={m['graph_n']:.0f})"
                f"   LLM {m['llm']:7.3f} (n={m['llm_n']:.0f})   events {m['events']:.0f}",
                file=sys.stderr,
            )
        print(
            f"  per step {per_step:.3f}, of which round trips {round_trips:.3f}: "
            f"orchestration {per_step - round_trips:.3f} ms",
            file=sys.stderr,
        )


if __name__ == "__main__":
    asyncio.run(main())
