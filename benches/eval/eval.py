"""The evaluation: benches/eval/questions.json through an agent, each answer scored against
the graph's own answer (the question's Cypher, run at run time through kg-agent's read-only
tool), and a table per category: accuracy, "could not find" answers, answers that showed a
tool call as text, median and p90 seconds per turn, prompt and completion tokens per turn.

    python3 benches/eval/eval.py --agent kg-agent --base http://127.0.0.1:3000 --key KEY
    python3 benches/eval/eval.py --agent langgraph --llm http://127.0.0.1:8012/v1 --model M ...
    python3 benches/eval/eval.py --smoke ...    the CI pass's turns (wire format, no 5xx)

Standard library only for kg-agent (the CI pass runs it with the machine's Python);
`--agent langgraph` needs benches/peers/.venv (langgraph, langchain-openai). benches/eval/run.sh
starts everything and runs both agents. Exit status: 1 when a turn broke the wire format,
crashed or answered 5xx (never for a wrong answer)."""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVENT_TYPES = {
    "conversation_id", "thinking", "route", "tool_call", "tool_result", "trace", "graph_data",
    "action_plan", "approval_required", "action_progress", "action_error", "action_complete",
    "content_start", "content", "error", "completed", "done",
}
NOT_FOUND = re.compile(
    r"could not find|couldn't find|cannot find|can't find|no (?:such|matching|information|data|results?)|"
    r"not found|does not (?:exist|contain|have)|unable to|I don't have|没有找到|未找到|找不到|无法|没有相关",
    re.I,
)
CALL_AS_TEXT = re.compile(
    r"<tool_call|</?tools>|<function[=\s]|\"arguments\"\s*:|\"parameters\"\s*:\s*\{|\[TOOL_CALLS\]", re.I
)
# What a model may write for a stored code: countries and statuses, in English and Chinese.
ALIASES = {
    "de": ["germany", "德国"], "se": ["sweden", "瑞典"], "pl": ["poland", "波兰"],
    "nl": ["netherlands", "荷兰"], "cn": ["china", "中国"], "no": ["norway", "挪威"],
    "gb": ["united kingdom", "britain", "uk", "英国"], "it": ["italy", "意大利"],
    "jp": ["japan", "日本"], "fr": ["france", "法国"],
    "approved": ["批准", "已审批", "已核准"], "paid": ["付款", "已支付", "已付"],
    "draft": ["草稿"], "cancelled": ["canceled", "取消"], "open": ["未结", "未付", "打开", "开放"],
    "settled": ["结清", "已结"],
}


class Broken(Exception):
    """A turn broke the contract: bad wire format, a crash, a 5xx."""


def http(method: str, url: str, key: str | None, body: dict | None = None, timeout: float = 600):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("content-type", "application/json")
    if key:
        request.add_header("authorization", f"Bearer {key}")
    return urllib.request.urlopen(request, timeout=timeout)


def cypher_rows(base: str, key: str, query: str) -> list[list]:
    with http("POST", f"{base}/tools/run_read_cypher", key, {"query": query, "limit": 100}) as r:
        answer = json.load(r)
    data = answer.get("data", answer)
    if isinstance(data, str):
        data = json.loads(data)
    return data.get("rows", [])


def flatten(rows: list[list]) -> list:
    return [v for row in rows for v in (row if isinstance(row, list) else [row]) if v is not None]


def numbers_in(text: str) -> list[float]:
    # 60,000 / 60 000 / 60000.00 as one number; 2026-01-05 as three.
    compact = re.sub(r"(?<=\d)[,\u00a0 ](?=\d{3}\b)", "", text)
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", compact)]


def value_in(value, answer: str, numbers: list[float]) -> bool:
    if isinstance(value, bool):
        return str(value).lower() in answer.lower()
    if isinstance(value, (int, float)):
        return any(abs(n - float(value)) < 0.006 for n in numbers)
    text = str(value).lower()
    low = answer.lower()
    if text in low:
        return True
    return any(alias in low for alias in ALIASES.get(text, []))


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


# ---------------------------------------------------------------- kg-agent over /chat/stream


def sse_turn(base: str, key: str, message: str, conversation: str | None = None) -> dict:
    """One streamed turn: its events, checked against the contract (docs/agent.md#events)."""
    body = {"message": message}
    if conversation:
        body["conversation_id"] = conversation
    started = time.monotonic()
    try:
        response = http("POST", f"{base}/chat/stream", key, body)
    except urllib.error.HTTPError as e:
        raise Broken(f"/chat/stream answered {e.code}: {e.read()[:300]!r}") from e
    events, event_type = [], None
    first_content = None
    with response:
        if response.status != 200:
            raise Broken(f"/chat/stream answered {response.status}")
        for raw in response:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("event: "):
                event_type = line[7:]
            elif line.startswith("data: "):
                try:
                    data = json.loads(line[6:])
                except json.JSONDecodeError as e:
                    raise Broken(f"an event's data is not JSON: {line[:200]}") from e
                if data.get("type") != event_type or event_type not in EVENT_TYPES:
                    raise Broken(f"event {event_type!r} carries type {data.get('type')!r}")
                if event_type == "content" and first_content is None:
                    first_content = time.monotonic() - started
                events.append(data)
    seconds = time.monotonic() - started
    kinds = [e["type"] for e in events]
    if kinds[-2:] != ["completed", "done"]:
        raise Broken(f"the stream did not end with completed, done: {kinds[-5:]}")
    for e in events:
        if e["type"] == "error" and int(e.get("status") or 0) >= 500 and e.get("code") not in (
            "turn_deadline_exceeded", "llm_timeout"):
            raise Broken(f"error event {e.get('code')}: {e.get('message')}")
    calls = [e for e in events if e["type"] == "tool_call"]
    results = {e["id"] for e in events if e["type"] == "tool_result"}
    if any(c["id"] not in results for c in calls):
        raise Broken("a tool_call without its tool_result")
    completed = events[-2]
    streamed = "".join(e["content"] for e in events if e["type"] == "content")
    usage = completed.get("usage") or {}
    errors = [e for e in events if e["type"] == "error"]
    return {
        "answer": completed.get("answer") or "",
        "status": completed.get("status"),
        "error": errors[0].get("code") if errors else None,
        "seconds": seconds,
        "first_content_s": first_content,
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
        "steps": completed.get("steps", 0),
        "tools": [c["tool"] for c in calls],
        "plan": next((e["plan"] for e in events if e["type"] in ("action_plan", "approval_required")), None),
        "streamed": streamed,
        "step_prompt_tokens": [e["usage"]["prompt_tokens"] for e in events
                               if e["type"] == "trace" and e.get("kind") == "step"],
    }


def json_turn(base: str, key: str, message: str) -> dict:
    started = time.monotonic()
    try:
        with http("POST", f"{base}/chat", key, {"message": message}) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:
        if e.code >= 500 and e.code != 504:
            raise Broken(f"/chat answered {e.code}: {e.read()[:300]!r}") from e
        return {"answer": "", "error": f"http {e.code}", "seconds": time.monotonic() - started}
    for field in ("conversation_id", "answer", "route", "usage"):
        if field not in answer:
            raise Broken(f"/chat's answer has no `{field}`")
    return {"answer": answer["answer"], "error": None, "seconds": time.monotonic() - started,
            "usage": answer["usage"]}


# ---------------------------------------------------------------- LangGraph's prebuilt agent


def langgraph_runner(base: str, key: str, llm: str, model: str, max_tokens: int):
    """LangGraph's prebuilt ReAct agent (create_react_agent) with kg-agent's own graph tools
    over its HTTP API (GET /tools, POST /tools/{name}) and a propose_action_plan that records
    the plan, as ours does; the same prompt as ours."""
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    react = (Path(__file__).resolve().parents[2] / "prompts/en/react.txt").read_text().strip()
    action = (Path(__file__).resolve().parents[2] / "prompts/en/react_action.txt").read_text().strip()
    with http("GET", f"{base}/tools", key) as r:
        listed = json.load(r)["tools"]
    plans: list[dict] = []

    def make(spec):
        name = spec["name"]

        def run(**kwargs):
            try:
                with http("POST", f"{base}/tools/{name}", key, kwargs) as r:
                    answer = json.load(r)
                return json.dumps(answer.get("data"), ensure_ascii=False)[:6000]
            except urllib.error.HTTPError as e:
                return json.dumps({"error": e.read().decode()[:500]})

        return StructuredTool.from_function(func=run, name=name, description=spec["description"],
                                            args_schema=spec["parameters"])

    def propose(entity_type: str, action_name: str, entity_ids: list[str], parameters: dict | None = None):
        plans.append({"entity_type": entity_type, "action_name": action_name,
                      "targets": [{"entity_id": i} for i in entity_ids]})
        return "recorded; it will be shown to the user and executed after any approval."

    tools = [make(s) for s in listed]
    plan_tool = StructuredTool.from_function(
        func=propose, name="propose_action_plan",
        description="Propose the action to run: the entity type, the action, the ids of every target entity and the parameters.")
    chat = ChatOpenAI(model=model, base_url=llm, api_key="none", temperature=0, max_retries=0,
                      max_tokens=max_tokens, timeout=300)
    agents = {
        False: create_react_agent(chat, tools, prompt=react),
        True: create_react_agent(chat, tools + [plan_tool], prompt=f"{react} {action}"),
    }

    def turn(message: str, acting: bool) -> dict:
        plans.clear()
        started = time.monotonic()
        try:
            result = agents[acting].invoke({"messages": [("user", message)]}, {"recursion_limit": 21})
        except Exception as e:  # the agent's own failure is a failed turn, not a broken run
            return {"answer": "", "error": type(e).__name__, "seconds": time.monotonic() - started,
                    "prompt_tokens": 0, "completion_tokens": 0, "tools": [], "plan": None}
        messages = result["messages"]
        prompt = sum((getattr(m, "usage_metadata", None) or {}).get("input_tokens", 0) for m in messages)
        completion = sum((getattr(m, "usage_metadata", None) or {}).get("output_tokens", 0) for m in messages)
        calls = [c["name"] for m in messages for c in (getattr(m, "tool_calls", None) or [])]
        return {"answer": messages[-1].content if messages else "", "error": None,
                "seconds": time.monotonic() - started, "prompt_tokens": prompt,
                "completion_tokens": completion, "tools": calls,
                "plan": dict(plans[-1]) if plans else None}

    return turn


# ---------------------------------------------------------------- scoring and the table


def score(q: dict, turn: dict, truth: list, after: list | None) -> str:
    """correct | wrong | not_found | call_shown | failed."""
    answer = turn.get("answer") or ""
    kind = q.get("kind", "answer")
    if turn.get("error") and not answer and kind != "plan":
        return "failed"
    if CALL_AS_TEXT.search(answer):
        return "call_shown"
    if kind == "smalltalk":
        ok = bool(answer.strip()) and (has_cjk(answer) if q["lang"] == "zh" else True)
        return "correct" if ok and not turn.get("tools") else "wrong"
    if kind == "refuse":
        return "correct" if after == truth else "wrong"
    if kind == "plan":
        plan = turn.get("plan")
        if not plan:
            return "wrong"
        ids = sorted(t["entity_id"] for t in plan.get("targets", []))
        return "correct" if ids == sorted(str(v) for v in truth) else "wrong"
    numbers = numbers_in(answer)
    if truth and all(value_in(v, answer, numbers) for v in truth):
        return "correct"
    return "not_found" if NOT_FOUND.search(answer) else "wrong"


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def table(results: list[dict], title: str) -> str:
    categories = list(dict.fromkeys(r["category"] for r in results)) + ["overall"]
    lines = [f"### {title}", "",
             "| category | n | correct | accuracy | could not find | call shown | failed | median s/turn | p90 s/turn | prompt tok/turn | completion tok/turn |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in categories:
        rs = [r for r in results if c == "overall" or r["category"] == c]
        n = len(rs)
        count = lambda s: sum(1 for r in rs if r["score"] == s)  # noqa: E731
        secs = [r["seconds"] for r in rs]
        lines.append(
            f"| {c} | {n} | {count('correct')} | {100 * count('correct') / max(n, 1):.0f}% | {count('not_found')} | "
            f"{count('call_shown')} | {count('failed')} | {statistics.median(secs) if secs else 0:.1f} | "
            f"{percentile(secs, 0.9):.1f} | {statistics.mean([r['prompt_tokens'] for r in rs]) if rs else 0:.0f} | "
            f"{statistics.mean([r['completion_tokens'] for r in rs]) if rs else 0:.0f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", choices=["kg-agent", "langgraph"], default="kg-agent")
    parser.add_argument("--base", default="http://127.0.0.1:3000", help="kg-agent (its tools serve the truth)")
    parser.add_argument("--key", required=True)
    parser.add_argument("--llm", help="the model server's /v1 (langgraph)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--smoke", action="store_true", help="the CI pass: the smoke turns, checks only the contract")
    parser.add_argument("--only", help="comma-separated question ids")
    parser.add_argument("--out", help="write every turn's record here (JSON lines)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    questions = json.loads((HERE / "questions.json").read_text())["questions"]
    if args.smoke:
        questions = [q for q in questions if q.get("smoke")]
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    runner = None
    if args.agent == "langgraph":
        runner = langgraph_runner(args.base, args.key, args.llm, args.model, 768)

    broken, results = [], []
    out = open(args.out, "a", encoding="utf-8") if args.out else None
    for q in questions:
        truth = flatten(cypher_rows(args.base, args.key, q["truth"])) if q.get("truth") else []
        try:
            if runner:
                turn = runner(q["question"], q.get("kind") == "plan")
            else:
                turn = sse_turn(args.base, args.key, q["question"])
        except Broken as e:
            broken.append(f"{q['id']}: {e}")
            turn = {"answer": "", "error": "broken", "seconds": 0, "prompt_tokens": 0, "completion_tokens": 0}
        after = flatten(cypher_rows(args.base, args.key, q["truth"])) if q.get("kind") == "refuse" else None
        result = {"id": q["id"], "category": q["category"], "lang": q["lang"], "agent": args.agent,
                  "model": args.model, "score": score(q, turn, truth, after), "truth": truth, **turn}
        result.setdefault("prompt_tokens", 0)
        result.setdefault("completion_tokens", 0)
        results.append(result)
        if out:
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            out.flush()
        print(f"eval: {q['id']}: {result['score']} in {result['seconds']:.1f} s, "
              f"{result['prompt_tokens']} prompt tokens, tools {result.get('tools')}: "
              f"{(result['answer'] or '')[:160]!r}", file=sys.stderr)
    if args.smoke and not runner:
        # And one /chat (JSON) turn: the other wire format.
        try:
            turn = json_turn(args.base, args.key, "How many suppliers are there?")
            print(f"eval: /chat: {turn['seconds']:.1f} s: {turn['answer'][:160]!r}", file=sys.stderr)
        except Broken as e:
            broken.append(f"/chat: {e}")
    print(table(results, args.title or f"{args.agent}, {args.model}"))
    for b in broken:
        print(f"eval: BROKEN {b}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
