"""Load on the local cluster (deploy/local-cluster/cluster.sh up): virtual users with API
keys of every role, through HAProxy, so each request lands on whichever instance.

    target/locust-venv/bin/locust -f deploy/local-cluster/locustfile.py --headless \
        -u 24 -r 8 -t 60s --host http://127.0.0.1:18080 --csv target/local-cluster/run

Users (weights in brackets) and what they do:

- Reader [3] (viewer keys): graph tools (POST /tools/{name}), the same over MCP (POST /mcp
  tools/call), chat turns as JSON and as SSE; some streams are dropped after a few events
  and resumed with Last-Event-ID (GET /chat/stream/{turn_id}), checking that the resumed
  events continue the sequence with no gap and no repeat; a stream a fault cut is resumed
  the same way, on whichever instance, and must end with the turn's answer or an honest
  `stream_lost`.
- Operator [2] (operator keys): payment batches of 40 run directly with an idempotency
  key and SSE progress (re-sent with the same key when the stream is cut); plans of 100
  payments (above approval_batch_threshold, so they need an approver) and four-eyes
  cancellations, queued for an approver; chat turns.
- Approver [2] (approver keys): redeems queued plans with the token on POST
  /actions/{type}/{name}/execute, streamed; one in five is redeemed twice at once (two
  requests, any instances): exactly one may run it.
- Admin [1] (admin keys): plans of 150 payments redeemed by an approver, undo of a payment
  some report said succeeded, the action log, and cancellations the admin plans and then
  tries to approve, which four-eyes must refuse (403 `four_eyes`) before an approver
  redeems them.

Every answer is journalled (KG_JOURNAL, default target/local-cluster/journal.jsonl) for
check.py: acknowledged turns, reports with their idempotency keys, redemptions, undos, and
every non-2xx status with its Retry-After. Honesty is checked here as it happens: a 503 or
429 without Retry-After, a 500, a report whose counts do not add up, a resumed stream with a
gap, are failures (locust's) and `dishonest` lines in the journal.
"""

import hashlib
import json
import os
import random
import threading
import time
import uuid

import gevent
from gevent.queue import Queue
from locust import HttpUser, between, events, task

DIR = os.environ.get("KG_CLUSTER_DIR", os.path.join(os.path.dirname(__file__), "../../target/local-cluster"))
KEYS = json.load(open(os.environ.get("KG_CLUSTER_KEYS", os.path.join(DIR, "keys.json"))))
JOURNAL_PATH = os.environ.get("KG_JOURNAL", os.path.join(DIR, "journal.jsonl"))
LOAD_ORDERS = int(os.environ.get("KG_CLUSTER_LOAD_ORDERS", "200000"))

_journal_lock = threading.Lock()
_journal = open(JOURNAL_PATH, "a", buffering=1)


def journal(kind, **fields):
    fields["kind"] = kind
    fields["t"] = time.time()
    with _journal_lock:
        _journal.write(json.dumps(fields) + "\n")


def keys_of(role):
    return [k for k in KEYS if role in k["roles"]]


# Plans waiting for an approver: (requester subject, entity_type, action, body, token).
pending = Queue()
# Log ids of payments a report said succeeded, for the admin's undo.
paid_logs = []

MCP_HEADERS = {"MCP-Protocol-Version": "2025-06-18", "Accept": "application/json, text/event-stream"}
TOOL_CALLS = [
    ("search_instances", {"search_term": "acme"}),
    ("get_node_statistics", {"label": "Supplier", "sample_size": 2}),
    ("get_instance_neighbors", {"instance": "PRD-036", "hops": 1, "direction": "in"}),
    ("describe_class", {"class_name": "Supplier"}),
    ("run_read_cypher", {"query": "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS n ORDER BY n DESC", "limit": 5}),
]


# The next load order no batch has asked for yet: batches take consecutive ranges, so a
# payment meets an order that is still open (not one a batch before it paid) until all
# KG_CLUSTER_LOAD_ORDERS are taken; then the ranges start again from the first (those
# payments then fail, honestly, as already paid: steps.py shows orders paid per second).
_next_order = 1


def order_ids(n):
    global _next_order
    if _next_order + n - 1 > LOAD_ORDERS:
        _next_order = 1
    start, _next_order = _next_order, _next_order + n
    return [f"LPO-{i:06d}" for i in range(start, start + n)]


def sse_events(response):
    """(id, event, data) of each event of an SSE response, as it arrives."""
    ident, event, data = None, None, []
    for raw in response.iter_lines(decode_unicode=True):
        line = raw if raw is not None else ""
        if line == "":
            if data or event:
                yield ident, event, "\n".join(data)
            ident, event, data = None, None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("id:"):
            ident = line[3:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


def fire(name, started, length=0, exception=None):
    events.request.fire(
        request_type="SSE", name=name, response_time=(time.time() - started) * 1000,
        response_length=length, exception=exception, context={},
    )


class Base(HttpUser):
    abstract = True
    wait_time = between(0.2, 1.0)
    role = "viewer"

    def on_start(self):
        me = random.choice(keys_of(self.role))
        self.subject = me["subject"]
        self.headers = {"authorization": f"Bearer {me['key']}"}
        self.conversation = None
        self.turns = 0
        self.vu = uuid.uuid4().hex[:8]

    # ---- honesty ---------------------------------------------------------------------
    def judge(self, response, name, allowed=()):
        """Records a non-2xx status; returns True when the answer is acceptable."""
        status = response.status_code
        if 200 <= status < 300 or status in allowed:
            response.success()
            return True
        retry_after = response.headers.get("retry-after")
        body = response.text[:300] if not response.headers.get("content-type", "").startswith("text/event-stream") else ""
        journal("status", route=name, status=status, retry_after=retry_after, subject=self.subject, body=body)
        problem = None
        if status in (503, 429) and not retry_after:
            problem = f"{status} without Retry-After"
        elif status == 500 or (status >= 500 and status not in (502, 503, 504)):
            problem = f"{status}: {body[:120]!r}"
        elif status == 0:
            problem = None  # the connection failed: counted as a failure, not dishonest
        if problem:
            journal("dishonest", route=name, status=status, problem=problem, body=body)
        response.failure(f"{status} {problem or body[:80]}")
        return False

    def dishonest(self, name, problem):
        journal("dishonest", route=name, status=200, problem=problem)
        events.request.fire(request_type="CHECK", name=name, response_time=0, response_length=0,
                            exception=Exception(problem), context={})

    # ---- chat --------------------------------------------------------------------------
    def next_message(self):
        if self.conversation is None or self.turns >= 6:
            self.conversation, self.turns = None, 0
        self.turns += 1
        return f"How many orders does ACME have? ({self.vu} turn {self.turns} {uuid.uuid4().hex[:6]})"

    def chat_json(self):
        message = self.next_message()
        body = {"message": message}
        if self.conversation:
            body["conversation_id"] = self.conversation
        with self.client.post("/chat", json=body, headers=self.headers, name="chat (JSON)", catch_response=True) as r:
            if self.judge(r, "chat"):
                answer = r.json()
                self.conversation = answer["conversation_id"]
                journal("turn", conv=self.conversation, subject=self.subject, seq=self.turns, message=message, via="json")
            else:
                journal("unacked_turn", conv=self.conversation, message=message)

    def chat_stream(self, drop=False):
        message = self.next_message()
        body = {"message": message}
        if self.conversation:
            body["conversation_id"] = self.conversation
        started = time.time()
        seen = []  # seq numbers of the events received
        completed = None
        turn_id = None
        cut_after = random.randint(2, 8) if drop else None
        try:
            with self.client.post("/chat/stream", json=body, headers=self.headers, name="chat/stream (first event)",
                                  stream=True, catch_response=True) as r:
                if not self.judge(r, "chat/stream"):
                    journal("unacked_turn", conv=self.conversation, message=message)
                    return
                turn_id = r.headers.get("x-turn-id")
                for ident, event, data in sse_events(r):
                    seen.append(int(ident.rsplit(":", 1)[1]))
                    if event == "completed":
                        completed = json.loads(data)
                    if cut_after is not None and len(seen) >= cut_after and event != "done":
                        break  # the client goes away; the turn runs on for the grace
            if cut_after is not None and completed is None:
                fire("chat/stream (to the cut)", started)
                resumed = self.resume(turn_id, seen, "resume")
                if resumed is None:
                    journal("unacked_turn", conv=self.conversation, message=message)
                    return
                completed = resumed[0]
            else:
                fire("chat/stream (to done)", started)
        except Exception as e:  # a connection cut by a fault
            fire("chat/stream (cut)", started, exception=e)
            completed = self.resume_after_cut(turn_id, seen)
            if not (completed and completed.get("status") == "answered"):
                journal("unacked_turn", conv=self.conversation, message=message, error=str(e)[:200],
                        status=completed and completed.get("status"))
                return
            drop = True
        if seen != list(range(1, len(seen) + 1)):
            self.dishonest("chat/stream", f"event ids not 1..n: {seen[:5]}..{seen[-5:]}")
        if completed and completed.get("status") == "answered":
            self.conversation = completed["conversation_id"]
            journal("turn", conv=self.conversation, subject=self.subject, seq=self.turns, message=message,
                    via="stream-resumed" if drop else "stream")
        else:
            journal("unacked_turn", conv=self.conversation, message=message,
                    status=completed and completed.get("status"))

    def resume(self, turn_id, seen, what):
        """Resumes a turn's stream after the last event in `seen` (GET /chat/stream/{turn}
        with Last-Event-ID, through HAProxy, so on any instance), appending the events'
        numbers to `seen`; the first must follow the last seen. Returns (the `completed`
        event's data or None, the `error` event's code or None), or None when the resume
        itself was refused (an exception when its stream was cut)."""
        started = time.time()
        headers = dict(self.headers, **{"Last-Event-ID": f"{turn_id}:{seen[-1]}"})
        completed, error, first = None, None, None
        try:
            with self.client.get(f"/chat/stream/{turn_id}", headers=headers, name=f"chat/stream/{{turn_id}} ({what})",
                                 stream=True, catch_response=True) as r:
                if not self.judge(r, f"chat/stream {what}"):
                    return None
                for ident, event, data in sse_events(r):
                    seq = int(ident.rsplit(":", 1)[1]) if ident else None
                    if seq is not None:
                        if first is None and seq != seen[-1] + 1:
                            self.dishonest(f"chat/stream {what}", f"resumed after {seen[-1]} at {seq}")
                        first = first or seq
                        seen.append(seq)
                    if event == "error":
                        error = json.loads(data).get("code")
                    if event == "completed":
                        completed = json.loads(data)
        except Exception as e:  # cut again: the caller decides
            fire(f"chat/stream {what} (to done)", started, exception=e)
            raise
        fire(f"chat/stream {what} (to done)", started)
        return completed, error

    def resume_after_cut(self, turn_id, seen):
        """After a stream was cut (its instance killed, HAProxy's shutdown of a hung one),
        resumes it on whichever instance: it must end with the turn's own `completed` (it
        ran on elsewhere) or an honest error (`stream_lost`: it died with its instance).
        Returns the `completed` event's data, or None."""
        if not turn_id or not seen:
            return None
        try:
            resumed = self.resume(turn_id, seen, "resume after a cut")
        except Exception:
            return None
        if resumed is None:
            return None
        completed, error = resumed
        journal("resume_after_cut", turn=turn_id, status=completed and completed.get("status"), error=error)
        if completed is None:
            self.dishonest("chat/stream resume after a cut", "the resumed stream ended without `completed`")
        elif completed.get("status") != "answered" and error not in ("stream_lost", "stream_expired", "unavailable"):
            self.dishonest("chat/stream resume after a cut", f"ended {completed.get('status')} with error {error}")
        return completed

    # ---- actions -----------------------------------------------------------------------
    def run_report(self, response_events, name):
        """The report of a streamed execute, or None when the stream ended without one."""
        report = None
        for _, event, data in response_events:
            if event == "action_complete":
                report = json.loads(data)["results"]
        return report

    def check_report(self, report, name, key, token=None):
        total = report["total"]
        if report["succeeded"] + report["failed"] + report.get("unknown", 0) != total:
            self.dishonest(name, f"succeeded+failed+unknown != total: {report}")
        successes = [s["entity_id"] for s in report["successes"]]
        failed = [f["entity_id"] for f in report["failures"] if f.get("reason") != "unknown"]
        unknown = [f["entity_id"] for f in report["failures"] if f.get("reason") == "unknown"]
        for s in report["successes"]:
            if not s.get("replayed") and s.get("log_id"):
                paid_logs.append(s["log_id"])
        journal("report", route=name, key=key, token_sha256=token and hashlib.sha256(token.encode()).hexdigest(),
                action=report["action_name"], succeeded=successes, failed=failed, unknown=unknown,
                reasons=sorted({f.get("reason") for f in report["failures"]}))

    def execute_streamed(self, entity_type, action, body, name, key=None, allowed=()):
        started = time.time()
        headers = dict(self.headers, accept="text/event-stream")
        try:
            with self.client.post(f"/actions/{entity_type}/{action}/execute", json=body, headers=headers,
                                  name=f"{name} (first event)", stream=True, catch_response=True) as r:
                if not self.judge(r, name, allowed) or r.status_code >= 300:
                    try:
                        code = r.json().get("error", {}).get("code")
                    except Exception:
                        code = None
                    return r.status_code, None, code
                report = self.run_report(sse_events(r), name)
            fire(f"{name} (to done)", started, exception=None if report else Exception("no report"))
            return 200, report, None
        except Exception as e:
            fire(f"{name} (cut)", started, exception=e)
            return 0, None, None


class Reader(Base):
    weight = 3
    role = "viewer"

    @task(4)
    def graph_tool(self):
        name, args = random.choice(TOOL_CALLS)
        with self.client.post(f"/tools/{name}", json=args, headers=self.headers, name="tools/{name}", catch_response=True) as r:
            self.judge(r, "tools")

    @task(2)
    def mcp_tool(self):
        name, args = random.choice(TOOL_CALLS)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
        with self.client.post("/mcp", json=body, headers=dict(self.headers, **MCP_HEADERS), name="mcp tools/call",
                              catch_response=True) as r:
            if self.judge(r, "mcp") and r.json().get("result", {}).get("isError"):
                r.failure(f"isError: {r.text[:120]}")

    @task(1)
    def turn_json(self):
        self.chat_json()

    @task(2)
    def turn_stream(self):
        self.chat_stream(drop=random.random() < 0.3)


class Operator(Base):
    weight = 2
    role = "operator"

    @task(3)
    def pay_direct(self):
        """40 payments with a key of our own; a cut stream is re-sent with the same key."""
        ids = order_ids(40)
        key = f"load-{uuid.uuid4().hex}"
        body = {"entity_ids": ids, "idempotency_key": key, "parameters": {"reference": key[:20]}}
        for attempt in range(4):
            status, report, _ = self.execute_streamed("PurchaseOrder", "makePayment", body, "actions execute 40 (SSE)")
            if report is not None:
                self.check_report(report, "execute", key)
                if report.get("unknown", 0) == 0:
                    return
            elif status not in (0, 502, 503, 504):
                return
            journal("resend", key=key, attempt=attempt + 1, status=status)
            gevent.sleep(1 + attempt)

    @task(2)
    def plan_payments(self):
        ids = order_ids(100)
        body = {"entity_ids": ids, "parameters": {"reference": "plan"}}
        with self.client.post("/actions/PurchaseOrder/makePayment/plan", json=body, headers=self.headers,
                              name="actions plan 100", catch_response=True) as r:
            if self.judge(r, "plan"):
                plan = r.json()
                if not plan.get("approval_required"):
                    self.dishonest("plan", "100 payments planned without approval")
                    return
                pending.put((self.subject, "PurchaseOrder", "makePayment", body, plan["approval_token"]))

    @task(1)
    def plan_cancel(self):
        body = {"entity_ids": order_ids(1), "parameters": {"reason": "load test"}}
        with self.client.post("/actions/PurchaseOrder/cancel/plan", json=body, headers=self.headers,
                              name="actions plan cancel", catch_response=True) as r:
            if self.judge(r, "plan"):
                pending.put((self.subject, "PurchaseOrder", "cancel", body, r.json()["approval_token"]))

    @task(2)
    def turn_stream(self):
        self.chat_stream(drop=random.random() < 0.2)


class Approver(Base):
    weight = 2
    role = "approver"

    @task
    def redeem(self):
        try:
            requester, entity_type, action, body, token = pending.get(timeout=2)
        except gevent.queue.Empty:
            return
        if requester == self.subject:
            pending.put((requester, entity_type, action, body, token))
            return
        redeem = dict(body, approval_token=token)
        name = f"actions execute approved {len(body['entity_ids'])} (SSE)"
        if random.random() < 0.2:
            # Twice at once: HAProxy may send them to two instances; one runs it.
            results = gevent.joinall([
                gevent.spawn(self.execute_streamed, entity_type, action, redeem, name, None, (409,)),
                gevent.spawn(self.execute_streamed, entity_type, action, redeem, name, None, (409,)),
            ])
            outcomes = [g.value for g in results]
        else:
            outcomes = [self.execute_streamed(entity_type, action, redeem, name, None, (409,))]
        token_sha = hashlib.sha256(token.encode()).hexdigest()
        for status, report, response in outcomes:  # response: the error code
            journal("redeem", token_sha256=token_sha, status=status, twice=len(outcomes) == 2, code=response)
            if status == 409 and response != "approval_used":
                self.dishonest("execute approved", f"409 {response}")
            if report is not None:
                self.check_report(report, "execute approved", None, token)
        ran = sum(1 for s, rep, _ in outcomes if s == 200)
        if ran > 1:
            self.dishonest("execute approved", f"one approval ran {ran} times")


class Admin(Base):
    weight = 1
    role = "admin"

    @task(2)
    def plan_big(self):
        body = {"entity_ids": order_ids(150), "parameters": {"reference": "big"}}
        with self.client.post("/actions/PurchaseOrder/makePayment/plan", json=body, headers=self.headers,
                              name="actions plan 150", catch_response=True) as r:
            if self.judge(r, "plan"):
                pending.put((self.subject, "PurchaseOrder", "makePayment", body, r.json()["approval_token"]))

    @task(1)
    def plan_cancel_four_eyes(self):
        """A cancellation the admin plans and then tries to approve: an admin may approve,
        but not their own cancellation (four-eyes), so it must be refused with 403
        `four_eyes`; an approver redeems it afterwards."""
        body = {"entity_ids": order_ids(1), "parameters": {"reason": "load test, four eyes"}}
        with self.client.post("/actions/PurchaseOrder/cancel/plan", json=body, headers=self.headers,
                              name="actions plan cancel", catch_response=True) as r:
            if not self.judge(r, "plan"):
                return
            token = r.json()["approval_token"]
        status, _, code = self.execute_streamed("PurchaseOrder", "cancel", dict(body, approval_token=token),
                                                "actions execute own cancel", allowed=(403,))
        journal("self_redeem", token_sha256=hashlib.sha256(token.encode()).hexdigest(), status=status, code=code)
        if status == 200 or (status == 403 and code != "four_eyes"):
            self.dishonest("execute own cancel", f"the requester's own redemption answered {status} {code}")
        pending.put((self.subject, "PurchaseOrder", "cancel", body, token))

    @task(2)
    def undo(self):
        if not paid_logs:
            return
        log_id = paid_logs.pop(random.randrange(len(paid_logs)))
        with self.client.post(f"/actions/log/{log_id}/undo", json={}, headers=self.headers, name="actions undo",
                              catch_response=True) as r:
            ok = self.judge(r, "undo", allowed=(409,))
            journal("undo", log_id=log_id, status=r.status_code if ok else r.status_code)

    @task(1)
    def log(self):
        with self.client.get("/actions/log?limit=20", headers=self.headers, name="actions log", catch_response=True) as r:
            self.judge(r, "log")


# ---- the full run (full-run.sh): a stepped ramp and every request's timing -------------

# KG_RAMP_STEPS="8:100,16:100,...": users and seconds of each step, in order; the run ends
# after the last. Without it, -u/-r/-t on the command line shape the run.
RAMP_STEPS = [tuple(int(x) for x in step.split(":")) for step in os.environ.get("KG_RAMP_STEPS", "").split(",") if step]
if RAMP_STEPS:
    from locust import LoadTestShape

    class SteppedRamp(LoadTestShape):
        def tick(self):
            elapsed = self.get_run_time()
            for users, seconds in RAMP_STEPS:
                if elapsed < seconds:
                    return users, max(users, 8)
                elapsed -= seconds
            return None

# KG_REQUEST_LOG=FILE: one CSV line per request as Locust counts it (end time, type, name,
# milliseconds, ok), and a `start` line when the load starts, for steps.py.
REQUEST_LOG = os.environ.get("KG_REQUEST_LOG")
if REQUEST_LOG:
    import csv

    _request_file = open(REQUEST_LOG, "a", newline="", buffering=1 << 16)
    _requests = csv.writer(_request_file)

    @events.test_start.add_listener
    def _log_start(**_):
        _requests.writerow([f"{time.time():.3f}", "start", "", 0, 1])

    @events.request.add_listener
    def _log_request(request_type, name, response_time, exception=None, **_):
        _requests.writerow([f"{time.time():.3f}", request_type, name, f"{response_time:.1f}", 0 if exception else 1])

    @events.quitting.add_listener
    def _log_flush(**_):
        _request_file.flush()
