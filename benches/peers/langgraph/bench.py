"""The LangGraph implementation of seed 000's graph (agent.py) against the stack our
benches use — devgraph with the demo graph and our scripted, instant LLM stub, started by
`cargo run -p kg-e2e --example peer_stack -- …` — scripted like `request_profile`: a turn
with no tool step (the agent answers; with --zero-step-llm-calls 2 it drafts and the
summariser answers) and one with four `get_node_statistics` calls, a draft and the
summariser's answer.

Two ways, each medians of --runs turns after --warmup:
- in-process: `graph.astream` to its end, every event collected: the framework alone;
- --http: the graph behind FastAPI (server.py, seed 000's backend) in its own process, the
  turn timed at an HTTP client, as request_profile times ours.
Each graph and LLM round trip is timed at the HTTP transport of the process running the
graph (timing.py), so what is left is LangGraph's, LangChain's, FastAPI's and this code's
own compute. Prints one JSON line with the medians (ms); --table also a readable summary.

  python bench.py [--http] [--runs 200] [--warmup 20] [--zero-step-llm-calls 1|2] [--table]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

STEPS = 4
QUESTION = "How many suppliers are there?"
ANSWER = "There are 10 suppliers."
HERE = Path(__file__).resolve().parent


def script(steps: int, summarise_always: bool) -> list[dict]:
    """request_profile's script: `steps` tool calls, then the agent's draft and the
    summariser's answer; a turn without tools answers at once unless `summarise_always`."""
    calls = [{"call": {"name": "get_node_statistics", "arguments": {"label": "Supplier", "sample_size": 0}}}] * steps
    if steps == 0 and not summarise_always:
        return [{"text": ANSWER}]
    return calls + [{"text": "draft"}, {"text": ANSWER}]


class InProcess:
    """Turns run in this process; the round trips timed at its transports."""

    def __init__(self, summarise_always: bool) -> None:
        from agent import build_graph
        from graph_client import GraphClient
        from timing import TimedTransport

        self.graph_io, self.llm_io = TimedTransport(), TimedTransport()
        self.graph_client = GraphClient(
            os.environ["KG_PEER_GRAPH_URL"], os.environ["KG_PEER_GRAPH_USER"],
            os.environ["KG_PEER_GRAPH_PASSWORD"], self.graph_io,
        )
        self.llm_http = httpx.AsyncClient(transport=self.llm_io, timeout=30.0)
        self.graph = build_graph(os.environ["KG_PEER_LLM_URL"], self.llm_http, summarise_always)

    async def turn(self) -> dict:
        from agent import run_turn

        self.graph_io.take()
        self.llm_io.take()
        started = time.perf_counter()
        events, answer = await run_turn(self.graph, self.graph_client, QUESTION)
        turn = (time.perf_counter() - started) * 1000.0
        (graph_ms, graph_n), (llm_ms, llm_n) = self.graph_io.take(), self.llm_io.take()
        return {"turn": turn, "answer": answer, "events": len(events),
                "graph": graph_ms, "graph_n": graph_n, "llm": llm_ms, "llm_n": llm_n}

    async def close(self) -> None:
        await self.graph_client.aclose()
        await self.llm_http.aclose()


class OverHttp:
    """Turns sent to server.py (uvicorn, its own process); the round trips as it reports."""

    def __init__(self, summarise_always: bool) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, KG_PEER_ZERO_STEP_LLM_CALLS="2" if summarise_always else "1")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "server:app", "--host", "127.0.0.1", "--port", str(port),
             "--log-level", "warning", "--no-access-log"],
            cwd=HERE, env=env,
        )
        self.url = f"http://127.0.0.1:{port}"
        self.client = httpx.AsyncClient(timeout=30.0)

    async def ready(self) -> None:
        for _ in range(300):
            if self.server.poll() is not None:
                raise SystemExit(f"server.py exited with {self.server.returncode}")
            try:
                if (await self.client.get(f"{self.url}/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        raise SystemExit("server.py did not answer /health within 30 s")

    async def turn(self) -> dict:
        started = time.perf_counter()
        response = await self.client.post(f"{self.url}/chat", json={"message": QUESTION})
        body = response.json()
        turn = (time.perf_counter() - started) * 1000.0
        response.raise_for_status()
        t = body["timing"]
        return {"turn": turn, "answer": body["answer"], "events": len(body["events"]),
                "graph": t["graph_ms"], "graph_n": t["graph_n"], "llm": t["llm_ms"], "llm_n": t["llm_n"]}

    async def close(self) -> None:
        await self.client.aclose()
        self.server.terminate()
        self.server.wait(timeout=10)


async def measure(runner, control: httpx.AsyncClient, steps: int, runs: int, warmup: int, summarise_always: bool) -> dict:
    samples: dict[str, list[float]] = {}
    replies = script(steps, summarise_always)
    for i in range(warmup + runs):
        (await control.post(os.environ["KG_PEER_SCRIPT_URL"], json=replies)).raise_for_status()
        sample = await runner.turn()
        if sample["answer"] != ANSWER:
            raise SystemExit(f"turn with {steps} steps answered {sample['answer']!r}")
        if sample["llm_n"] != len(replies):
            raise SystemExit(f"turn with {steps} steps made {sample['llm_n']} LLM calls, expected {len(replies)}")
        if i >= warmup:
            for key, value in sample.items():
                if key != "answer":
                    samples.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http", action="store_true", help="the graph behind FastAPI, timed at an HTTP client")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--table", action="store_true")
    parser.add_argument(
        "--zero-step-llm-calls", type=int, choices=(1, 2), default=1,
        help="LLM calls of a turn without tools: 1, the agent's reply is the answer (ours since issue #18); "
        "2, the summariser writes it (seed 000's drawing). run.sh passes what ours made.",
    )
    args = parser.parse_args()
    summarise_always = args.zero_step_llm_calls == 2

    runner = OverHttp(summarise_always) if args.http else InProcess(summarise_always)
    try:
        if args.http:
            await runner.ready()
        async with httpx.AsyncClient(timeout=30.0) as control:
            zero = await measure(runner, control, 0, args.runs, args.warmup, summarise_always)
            four = await measure(runner, control, STEPS, args.runs, args.warmup, summarise_always)
    finally:
        await runner.close()

    per_step = (four["turn"] - zero["turn"]) / STEPS
    round_trips = ((four["graph"] + four["llm"]) - (zero["graph"] + zero["llm"])) / STEPS
    result = {
        "mode": "http" if args.http else "in-process",
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
        print(f"LangGraph ({result['mode']}), medians of {args.runs} turns (ms):", file=sys.stderr)
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
    sys.path.insert(0, str(HERE))
    asyncio.run(main())
