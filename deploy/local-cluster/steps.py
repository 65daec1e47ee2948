"""A full run's numbers, step by step (full-run.sh): requests per second, p50 and p99 per
route family, failures, and where the CPU went, for each step of the ramp.

    python3 deploy/local-cluster/steps.py RUN_DIR STEPS [--warm-up-s 10] [--p99-ms 1000]

RUN_DIR holds requests.csv (locustfile.py's KG_REQUEST_LOG), journal.jsonl (its reports:
entities applied and refused) and cpu.txt (full-run.sh's
sampler: `epoch-seconds comm=cpu-seconds ...` every few seconds); STEPS is the ramp as
locustfile.py's KG_RAMP_STEPS ("8:100,16:100,..."). Each step's first --warm-up-s seconds
(users starting, streams of the step before ending) are left out. Prints a Markdown table per
step and a JSON summary line (`summary: {...}`) to stdout.

A step is *served* when the interactive routes (a graph tool over HTTP or MCP, a streamed
turn's first event) have a p99 within --p99-ms and at most 1% of all requests failed.
"""

import argparse
import collections
import csv
import json
import os
import sys

# Locust's request names (locustfile.py) by route family, in the tables' order. Stream
# completions ("to done") are not HTTP requests: they are timed, not counted in req/s.
FAMILIES = [
    ("POST /tools/{name}", lambda n: n == "tools/{name}"),
    ("POST /mcp tools/call", lambda n: n == "mcp tools/call"),
    ("POST /chat (JSON)", lambda n: n == "chat (JSON)"),
    ("POST /chat/stream, first event", lambda n: n == "chat/stream (first event)"),
    ("POST /chat/stream, to done", lambda n: n == "chat/stream (to done)"),
    ("resume with Last-Event-ID, to done", lambda n: n == "chat/stream resume (to done)"),
    ("plan (100, 150 payments; cancel)", lambda n: n.startswith("actions plan")),
    ("execute 40 payments, to done", lambda n: n == "actions execute 40 (SSE) (to done)"),
    ("approved 100/150 payments, to done", lambda n: n.startswith("actions execute approved 1") and n.endswith("(to done)") and "approved 1 " not in n),
    ("undo", lambda n: n == "actions undo"),
    ("action log", lambda n: n == "actions log"),
]
# The commands whose CPU is shown; the rest (kernel threads, the sampler) is `other`.
COMMANDS = ("spin", "java", "redis-server", "haproxy", "locust", "node")
INTERACTIVE = ("POST /tools/{name}", "POST /mcp tools/call", "POST /chat/stream, first event")
HTTP_TYPES = ("GET", "POST")


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def read_cpu(path):
    samples = []
    if not os.path.exists(path):
        return samples
    for line in open(path):
        words = line.split()
        if not words:
            continue
        samples.append((float(words[0]), {k: int(v) for k, v in (w.split("=", 1) for w in words[1:])}))
    return samples


def cpu_between(samples, begin, end):
    """Per command, the share of one core used between begin and end (nearest samples);
    a process that exited (a killed instance) is counted up to its last sample."""
    inside = [s for s in samples if begin <= s[0] <= end]
    if len(inside) < 2:
        return {}
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return {k: max(0, c1.get(k, 0) - c0.get(k, 0)) / (t1 - t0) for k in set(c0) | set(c1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("steps")
    parser.add_argument("--warm-up-s", type=float, default=10.0)
    parser.add_argument("--p99-ms", type=float, default=1000.0)
    args = parser.parse_args()
    steps = [tuple(int(x) for x in s.split(":")) for s in args.steps.split(",") if s]
    rows = list(csv.reader(open(os.path.join(args.run_dir, "requests.csv"))))
    starts = [float(r[0]) for r in rows if r[1] == "start"]
    if not starts:
        sys.exit("steps: no start line in requests.csv")
    start = starts[0]
    requests = [(float(r[0]), r[1], r[2], float(r[3]), r[4] == "1") for r in rows if r[1] != "start"]
    cpu = read_cpu(os.path.join(args.run_dir, "cpu.txt"))
    journal_path = os.path.join(args.run_dir, "journal.jsonl")
    reports = [j for j in map(json.loads, open(journal_path)) if j["kind"] == "report"] if os.path.exists(journal_path) else []
    summary = []
    offset = 0.0
    for users, seconds in steps:
        begin, end = start + offset + args.warm_up_s, start + offset + seconds
        offset += seconds
        window = [r for r in requests if begin <= r[0] < end and r[1] != "CHECK"]
        span = end - begin
        http = [r for r in window if r[1] in HTTP_TYPES]
        failed = sum(1 for r in http if not r[4])
        print(f"\n### {users} users ({seconds} s, the first {args.warm_up_s:.0f} s left out)\n")
        print("| route family | req/s | p50 ms | p99 ms | failed |")
        print("|---|---:|---:|---:|---:|")
        p99s = {}
        for family, match in FAMILIES:
            mine = [r for r in window if match(r[2])]
            if not mine:
                continue
            ok = [r[3] for r in mine if r[4]]
            p50, p99 = percentile(ok, 50), percentile(ok, 99)
            p99s[family] = p99
            print(f"| {family} | {len(mine) / span:.2f} | {p50 or 0:,.0f} | {p99 or 0:,.0f} | {sum(1 for r in mine if not r[4])} |")
        all_ok = [r[3] for r in http if r[4]]
        print(f"| all HTTP requests | {len(http) / span:.1f} | {percentile(all_ok, 50) or 0:,.0f} | "
              f"{percentile(all_ok, 99) or 0:,.0f} | {failed} ({100 * failed / max(1, len(http)):.1f}%) |")
        mine = [j for j in reports if begin <= j["t"] < end]
        paid = sum(len(j["succeeded"]) for j in mine) / span
        refused = sum(len(j["failed"]) for j in mine) / span
        print(f"\nPayments and cancellations in the step's reports: {paid:.1f} applied/s, {refused:.1f} refused/s "
              "(already paid, or cancelled: preconditions)")
        shares = cpu_between(cpu, begin, end)
        machine = shares.pop("machine", 0.0)
        top = {k: shares.get(k, 0.0) for k in COMMANDS}
        top["other"] = max(0.0, machine - sum(top.values()))
        top["machine"] = machine
        print(f"\nCPU (100% = one core; the machine has {os.cpu_count()}): "
              + ", ".join(f"{k} {v * 100:.0f}%" for k, v in top.items()))
        worst = max((p99s.get(f) or 0) for f in INTERACTIVE)
        served = bool(http) and worst <= args.p99_ms and failed <= 0.01 * len(http)
        summary.append({
            "users": users, "req_s": round(len(http) / span, 1), "p50_ms": percentile(all_ok, 50),
            "p99_ms": percentile(all_ok, 99), "interactive_p99_ms": worst, "failed": failed,
            "failed_pct": round(100 * failed / max(1, len(http)), 2), "served": served,
            "applied_s": round(paid, 1), "refused_s": round(refused, 1),
            "cpu": {k: round(v * 100) for k, v in top.items()},
        })
    print("\nsummary: " + json.dumps(summary))


if __name__ == "__main__":
    main()
