"""Prints ours (request_profile's table) next to LangGraph (langgraph/bench.py's JSON lines,
behind FastAPI and in-process): per agent step, (4-step turn − 0-step turn) / 4 minus the
graph and LLM round trips in that difference, and the 0-step turn; medians, ms.

  python compare.py OURS_TABLE LANGGRAPH_HTTP_JSON LANGGRAPH_IN_PROCESS_JSON [HOSTS_OUTPUT]
  python compare.py --zero-step-llm-calls OURS_TABLE   (LLM calls of ours' 0-step turn)

HOSTS_OUTPUT: the `hosts` bench's output, whose `steps-json:` lines give ours on real Spin
(a step and the 0-step turn at the client, round trips included), printed as a second table.
"""

from __future__ import annotations

import json
import sys

STEPS = 4


def row(table: str, name: str) -> dict[str, float]:
    """A request's medians from request_profile's markdown table (first number of a cell;
    `n=` the calls)."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == name:
            number = lambda i: float(cells[i].split()[0])  # noqa: E731
            count = lambda i: round(float(cells[i].split("n=")[1].rstrip(")")))  # noqa: E731
            return {
                "client": number(1), "wasm": number(5), "graph": number(8), "llm": number(9),
                "graph_n": count(8), "llm_n": count(9),
            }
    raise SystemExit(f"compare: no row {name!r} in request_profile's output:\n{table}")


def ours_figures(table: str) -> dict:
    zero, four = row(table, "POST /chat, no tool step"), row(table, "POST /chat, 4 tool steps")
    step = (four["client"] - zero["client"]) / STEPS
    round_trips = ((four["graph"] + four["llm"]) - (zero["graph"] + zero["llm"])) / STEPS
    return {
        "orchestration": step - round_trips,
        "step": step,
        "round_trips": round_trips,
        "zero": zero["client"],
        "zero_own": zero["client"] - zero["graph"] - zero["llm"],
        "wasm_step": (four["wasm"] - zero["wasm"]) / STEPS,
        "calls": {"0-step": zero, "4-step": four},
    }


def peer_figures(peer: dict) -> dict:
    return {
        "orchestration": peer["per_step_orchestration_ms"],
        "step": peer["per_step_ms"],
        "round_trips": peer["per_step_round_trips_ms"],
        "zero": peer["zero_step_turn_ms"],
        "zero_own": peer["zero_step_turn_ms"] - peer["zero_step_round_trips_ms"],
        "calls": {"0-step": peer["zero"], "4-step": peer["four"]},
    }


def main() -> None:
    if sys.argv[1] == "--zero-step-llm-calls":
        # What run.sh tells the LangGraph side, so both are scripted alike.
        print(row(open(sys.argv[2], encoding="utf-8").read(), "POST /chat, no tool step")["llm_n"])
        return
    ours = ours_figures(open(sys.argv[1], encoding="utf-8").read())
    peers = [json.loads(open(p, encoding="utf-8").read().strip().splitlines()[-1]) for p in sys.argv[2:4]]
    http, local = (peer_figures(p) for p in peers)

    print(f"\nours (kg-agent on devhost) vs LangGraph (seed 000's graph in Python), medians of {peers[0]['runs']} turns, ms:")
    print("| | ours | LangGraph behind FastAPI | LangGraph / ours | LangGraph in-process | LangGraph / ours |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = (
        ("per agent step: orchestration ((4-step − 0-step turn) / 4 minus graph and LLM round trips)", "orchestration"),
        ("per agent step: all of it", "step"),
        ("per agent step: graph and LLM round trips", "round_trips"),
        ("0-step turn", "zero"),
        ("0-step turn minus its LLM round trips", "zero_own"),
    )
    for what, key in rows:
        ratio = lambda p: "" if key == "round_trips" else f"{p[key] / ours[key]:.1f}×"  # noqa: E731
        print(f"| {what} | {ours[key]:.3f} | {http[key]:.3f} | {ratio(http)} | {local[key]:.3f} | {ratio(local)} |")
    print(
        f"\nOurs per step inside the components (Wasm): {ours['wasm_step']:.3f} ms; the rest of ours is devhost "
        "(HTTP, KV, scheduling). Ours and 'behind FastAPI' are timed at an HTTP client (server and conversation\n"
        "state included; ours also authenticates); 'in-process' is graph.astream alone (with its checkpointer)."
    )
    alike = True
    for kind in ("0-step", "4-step"):
        for what in ("llm_n", "graph_n"):
            mine = ours["calls"][kind][what]
            for name, peer in (("behind FastAPI", http), ("in-process", local)):
                if mine != round(peer["calls"][kind][what]):
                    alike = False
                    print(f"NOT COMPARABLE: the {kind} turn made {mine} {'LLM' if what == 'llm_n' else 'graph'} calls in ours, "
                          f"{peer['calls'][kind][what]:.0f} in LangGraph {name} (is request_profile's script what ours consumes?)")
    if alike:
        zero, four = ours["calls"]["0-step"], ours["calls"]["4-step"]
        print(f"Both made the same calls: 0-step turn {zero['llm_n']} LLM, {zero['graph_n']} graph; "
              f"4-step turn {four['llm_n']} LLM, {four['graph_n']} graph.")
    worst = min(http["orchestration"], local["orchestration"]) / ours["orchestration"]
    met = alike and 0 < ours["orchestration"] <= 0.3 and worst >= 20
    print(f"Target (issue #18): ours ≤ 0.3 ms per step and ≥ 20× below LangGraph: {ours['orchestration']:.3f} ms, "
          f"{worst:.1f}× the faster LangGraph — " + ("met" if met else "not met"))
    if len(sys.argv) > 4:
        on_spin(open(sys.argv[4], encoding="utf-8").read(), http, local)
    if not alike:
        sys.exit(1)


def on_spin(hosts: str, http: dict, local: dict) -> None:
    """Ours on real Spin (the `hosts` bench, same scripts) next to LangGraph: what a user
    of `spin up` gets. At the client, round trips included on both sides."""
    figures = {}
    for line in hosts.splitlines():
        if line.startswith("steps-json: "):
            entry = json.loads(line[len("steps-json: "):])
            figures[entry["host"]] = entry
    spin = figures.get("spin")
    if spin is None:
        print("\nours on real Spin: not measured (the hosts bench found no Spin CLI)")
        return
    print("\nours on real Spin 4.0.2 (`hosts` bench, same scripts, default SQLite store, the request counter on; "
          "at the client, graph and LLM round trips included) vs LangGraph, ms:")
    print("| | ours on Spin | ours on devhost (same run) | LangGraph behind FastAPI | LangGraph / ours on Spin | LangGraph in-process | LangGraph / ours on Spin |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    devhost = figures.get("devhost", {})
    for what, key, peer_key in (("per agent step: all of it", "step_ms", "step"), ("0-step turn", "zero_ms", "zero")):
        mine = spin[key]
        print(f"| {what} | {mine:.3f} | {devhost.get(key, float('nan')):.3f} | {http[peer_key]:.3f} | "
              f"{http[peer_key] / mine:.1f}× | {local[peer_key]:.3f} | {local[peer_key] / mine:.1f}× |")


if __name__ == "__main__":
    main()
