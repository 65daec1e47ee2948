"""After a load run on the local cluster: reads the graph, the action log, the stored
conversations and the run's journal (locustfile.py) and checks that nothing was lost,
doubled or misreported. Exits 1 on any violation, printing each.

    python3 deploy/local-cluster/check.py [--journal FILE] [--fault-margin-s 15] [--settle-s 10]

It first waits for the graph to be quiet (no write for --settle-s seconds, 120 s at most):
a batch whose client left runs on to its end, and a check that reads while a chunk commits
sees half of it (each Cypher statement is read-committed).

Checks:
 1. payments at most once: no order has two Payments; an order is `paid` exactly when it
    has one, and exactly when one makePayment log entry of it stands (not undone); an undo
    answered 200 is recorded as such; no cancelled order has a Payment;
 2. money: each load account's balance is its initial balance less the Payments it made;
 3. approvals at most once: no token was redeemed (200) twice in the journal, nor by its
    own requester (four-eyes cancellations); every token
    the journal saw redeemed is `redeemed` in the graph; no entity has two log entries of
    one approval's idempotency key;
 4. reports truthful: an entity a report called failed (not `unknown`) has no log entry
    under that report's idempotency key, and one it called a success has one;
 5. conversations: every acknowledged turn is stored once, in the order acknowledged, and
    no question is stored twice;
 6. statuses: the journal's `dishonest` lines (a 503/429 without Retry-After, a 500, a
    report that does not add up, a resumed stream with a gap, an approval run twice), and
    any 5xx, or a cut connection, outside a fault's window (its begin to its end + the
    margin), but the honest ones: a 503 (which carries Retry-After, else it is dishonest)
    and the app's 504 for a deadline with its documented body (docs/api.md: {"error":
    {"code": "timeout" | "llm_timeout" | "turn_deadline_exceeded", "message": …}}; a
    graph query that did not answer in time under load). HAProxy's HTML 504 (no answer
    within `timeout server`), a 502, a 500 and a bodiless error are still violations.
"""

import argparse
import base64
import collections
import json
import os
import re
import sys
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
DIR = os.environ.get("KG_CLUSTER_DIR", os.path.normpath(os.path.join(here, "../../target/local-cluster")))
BASE = int(os.environ.get("KG_CLUSTER_PORT", "18080"))


def http(method, url, body=None, headers=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers=dict({"content-type": "application/json"}, **(headers or {})))
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def cypher(statement, **params):
    auth = base64.b64encode(b"neo4j:devgraph").decode()
    status, answer = http("POST", f"http://127.0.0.1:{BASE + 12}/db/neo4j/query/v2",
                          {"statement": statement, "parameters": params}, {"authorization": f"Basic {auth}"})
    if status >= 300:
        raise SystemExit(f"check: Neo4j answered {status}: {answer}")
    return answer["data"]["values"]


# The app's answer when a deadline passed (docs/api.md, "Errors"): a JSON body
# {"error": {"code": "timeout" | "llm_timeout" | "turn_deadline_exceeded", "message": …,
# "detail"?: …}}. The journal keeps a body's first 300 characters: a body cut there is
# read from its beginning.
DEADLINE_CODES = ("timeout", "llm_timeout", "turn_deadline_exceeded")
JOURNAL_BODY_CHARS = 300
ERROR_CODE_PREFIX = re.compile(r'^\s*\{\s*"error"\s*:\s*\{\s*"code"\s*:\s*"([a-z_]+)"')


def deadline_code(body):
    """The error code of an app's deadline answer, else None (HAProxy's HTML 504, no body,
    another code, no message)."""
    body = body or ""
    try:
        error = json.loads(body).get("error")
        code, message = error.get("code"), error.get("message")
        return code if code in DEADLINE_CODES and isinstance(message, str) and message else None
    except (ValueError, AttributeError):
        pass
    m = ERROR_CODE_PREFIX.match(body)
    if m and m.group(1) in DEADLINE_CODES and len(body) >= JOURNAL_BODY_CHARS:
        return m.group(1)
    return None


def app_deadline(body):
    return deadline_code(body) is not None


def settle(quiet_s, most_s=120.0):
    """Waits until the graph's writes stop: the load's clients are gone, but a batch whose
    client left runs on to its end on the instance. Each statement below is read-committed
    (Neo4j): one that reads while a chunk commits sees part of it (an order's Payments
    counted before the commit, its status read after: "paid with 0 Payments"). Quiet means
    the action log, the Payments and the load accounts' balances unchanged for `quiet_s`."""
    started = time.monotonic()
    last, since = None, started
    while True:
        now = cypher("CALL () { MATCH (l:ActionLog) RETURN count(l) AS logs } "
                     "CALL () { MATCH (p:Payment) RETURN count(p) AS payments } "
                     "CALL () { MATCH (a:Account) WHERE a.id STARTS WITH 'ACC-LOAD-' RETURN sum(a.balance) AS money } "
                     "RETURN logs, payments, money")[0]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            print(f"check: the graph quiet for {quiet_s:g} s after {time.monotonic() - started:.1f} s")
            return
        if time.monotonic() - started > most_s:
            raise SystemExit(f"check: the graph still written to after {most_s:g} s: {now}")
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--journal", default=os.path.join(DIR, "journal.jsonl"))
    parser.add_argument("--fault-margin-s", type=float, default=15.0)
    parser.add_argument("--settle-s", type=float, default=10.0)
    args = parser.parse_args()
    settle(args.settle_s)
    journal = [json.loads(line) for line in open(args.journal) if line.strip()]
    by_kind = collections.defaultdict(list)
    for j in journal:
        by_kind[j["kind"]].append(j)
    problems = []

    def problem(text):
        problems.append(text)

    # 1. payments at most once.
    for order, n in cypher("MATCH (o:PurchaseOrder)<-[:PAYS]-(p:Payment) WITH o, count(p) AS n WHERE n > 1 RETURN o.id, n"):
        problem(f"payments: order {order} has {n} Payments")
    for order, status, n in cypher(
            "MATCH (o:PurchaseOrder) WHERE o.id STARTS WITH 'LPO-' OPTIONAL MATCH (o)<-[:PAYS]-(p:Payment) "
            "WITH o, count(p) AS n WHERE (o.status = 'paid') <> (n = 1) RETURN o.id, o.status, n"):
        problem(f"payments: order {order} is {status} with {n} Payments")
    for entity, n in cypher(
            "MATCH (l:ActionLog {action_name: 'makePayment'}) WHERE l.undone_by IS NULL "
            "WITH l.entity_id AS e, count(l) AS n WHERE n > 1 RETURN e, n"):
        problem(f"payments: {entity} has {n} standing makePayment log entries")
    # An order is paid exactly when one makePayment of it stands (not undone): an undo the
    # journal saw succeed left no payment behind, and nothing paid went unrecorded.
    # (Two scans compared here: a join per order of 200,000 would scan the log each time.)
    standing = dict(cypher(
        "MATCH (l:ActionLog {action_name: 'makePayment'}) WHERE l.undone_by IS NULL AND l.entity_id STARTS WITH 'LPO-' "
        "RETURN l.entity_id, count(l)"))
    paid_ids = {o for (o,) in cypher("MATCH (o:PurchaseOrder {status: 'paid'}) WHERE o.id STARTS WITH 'LPO-' RETURN o.id")}
    for order in sorted(paid_ids ^ {o for o, n in standing.items() if n == 1}):
        problem(f"payments: order {order} is {'paid' if order in paid_ids else 'not paid'} "
                f"with {standing.get(order, 0)} standing makePayment log entries")
    undone_ok = [u["log_id"] for u in by_kind["undo"] if u["status"] == 200]
    undone = dict(cypher("MATCH (l:ActionLog) WHERE l.id IN $ids RETURN l.id, l.undone_by", ids=undone_ok))
    for log_id in undone_ok:
        if not undone.get(log_id):
            problem(f"undo: {log_id} was undone (200) but the log does not say so")
    # A cancelled order was never paid (the cancel's precondition) or its payment was undone.
    for order, n in cypher(
            "MATCH (o:PurchaseOrder {status: 'cancelled'})<-[:PAYS]-(p:Payment) WHERE o.id STARTS WITH 'LPO-' "
            "RETURN o.id, count(p)"):
        problem(f"cancel: order {order} is cancelled with {n} Payments")
    paid = cypher("MATCH (o:PurchaseOrder {status: 'paid'}) WHERE o.id STARTS WITH 'LPO-' RETURN count(o)")[0][0]

    # 2. money.
    for account, balance, initial, spent in cypher(
            "MATCH (a:Account) WHERE a.id STARTS WITH 'ACC-LOAD-' OPTIONAL MATCH (a)<-[:FROM_ACCOUNT]-(p:Payment) "
            "RETURN a.id, a.balance, a.initial_balance, coalesce(sum(p.amount), 0)"):
        if abs(initial - spent - balance) > 1e-6:
            problem(f"money: {account} holds {balance}, its initial {initial} less its payments {spent} is {initial - spent}")

    # 3. approvals at most once.
    redeemed = collections.Counter(r["token_sha256"] for r in by_kind["redeem"] if r["status"] == 200)
    for token, n in redeemed.items():
        if n > 1:
            problem(f"approvals: token sha256 {token[:12]}… redeemed {n} times")
    states = dict(cypher("MATCH (a:ActionApproval) WHERE a.id IN $ids RETURN a.id, a.state", ids=list(redeemed)))
    for r in by_kind["self_redeem"]:
        if r["status"] == 200:
            problem(f"approvals: token sha256 {r['token_sha256'][:12]}… redeemed by its own requester (four-eyes)")
    for token in redeemed:
        if states.get(token) != "redeemed":
            problem(f"approvals: token sha256 {token[:12]}… ran, but the graph says {states.get(token)!r}")
    keys = dict(cypher("MATCH (a:ActionApproval) WHERE a.idempotency_key IS NOT NULL RETURN a.id, a.idempotency_key"))
    for key, entity, n in cypher(
            "MATCH (l:ActionLog) WHERE l.idempotency_key STARTS WITH 'approval-' AND NOT l.action_name STARTS WITH 'undo' "
            "WITH l.idempotency_key AS k, l.entity_id AS e, count(l) AS n WHERE n > 1 RETURN k, e, n"):
        problem(f"approvals: {entity} applied {n} times under {key}")

    # 4. reports truthful.
    reports = by_kind["report"]
    # The log's entries by idempotency key, read once (a query per report scanned the whole
    # log each time: minutes after a ten-minute run).
    by_key = collections.defaultdict(set)
    for key, entity in cypher("MATCH (l:ActionLog) WHERE l.idempotency_key IS NOT NULL AND NOT l.action_name STARTS WITH 'undo' "
                              "RETURN l.idempotency_key, l.entity_id"):
        by_key[key].add(entity)
    for r in reports:
        key = r["key"] or keys.get(r["token_sha256"])
        if key is None:
            problem(f"reports: no idempotency key for a report of token {r['token_sha256']}")
            continue
        logged = by_key.get(key, set())
        for entity in r["failed"]:
            if entity in logged:
                problem(f"reports: {entity} reported failed under {key} but applied (action log)")
        for entity in r["succeeded"]:
            if entity not in logged:
                problem(f"reports: {entity} reported succeeded under {key} but not in the action log")

    # 5. conversations.
    keys_json = json.load(open(os.environ.get("KG_CLUSTER_KEYS", os.path.join(DIR, "keys.json"))))
    admin = next(k["key"] for k in keys_json if "admin" in k["roles"])
    acked = collections.defaultdict(list)
    for t in by_kind["turn"]:
        acked[t["conv"]].append(t)
    turns_checked = 0
    for conv, turns in acked.items():
        turns.sort(key=lambda t: t["seq"])
        status, stored = http("GET", f"http://127.0.0.1:{BASE}/conversations/{conv}", headers={"authorization": f"Bearer {admin}"})
        if status != 200:
            problem(f"conversations: {conv} answers {status}: {str(stored)[:200]}")
            continue
        questions = [t["content"] for t in stored["turns"] if t["role"] == "user"]
        counts = collections.Counter(questions)
        for q, n in counts.items():
            if n > 1:
                problem(f"conversations: {conv} stores {q!r} {n} times")
        positions = []
        for t in turns:
            turns_checked += 1
            if t["message"] not in counts:
                problem(f"conversations: {conv} lost acknowledged turn {t['seq']} ({t['message']!r})")
            else:
                positions.append(questions.index(t["message"]))
        if positions != sorted(positions):
            problem(f"conversations: {conv} stores its acknowledged turns out of order: {positions}")

    # 6. statuses.
    for d in by_kind["dishonest"]:
        problem(f"status: {d['route']}: {d['problem']}")
    windows = []
    begun = {}
    faults_log = os.path.join(DIR, "faults.log")
    if os.path.exists(faults_log):
        for line in open(faults_log):
            t, edge, *what = line.split()
            if edge == "begin":
                begun[" ".join(what)] = float(t)
            elif edge == "end" and " ".join(what) in begun:
                windows.append((begun.pop(" ".join(what)), float(t) + args.fault_margin_s))
        windows += [(b, float("inf")) for b in begun.values()]
    statuses = collections.Counter((s["route"], s["status"]) for s in by_kind["status"])
    # Honest at any time: a 503 with Retry-After (the journal's `dishonest` lines hold those
    # without), and the app's own 504 for a deadline, with the body docs/api.md documents.
    # Anything else of 500 and up (a 500, a 502, HAProxy's HTML 504, a bodiless error) and
    # a cut connection (0) outside a fault's window is not explained.
    honest_504 = [s for s in by_kind["status"] if s["status"] == 504 and app_deadline(s["body"])]
    outside = [s for s in by_kind["status"] if (s["status"] >= 500 or s["status"] == 0) and s["status"] != 503
               and not (s["status"] == 504 and app_deadline(s["body"]))
               and not any(b <= s["t"] <= e for b, e in windows)]
    for s in outside[:20]:
        problem(f"status: {s['route']} answered {s['status']} outside any fault: {s['body'][:120]!r}")
    if len(outside) > 20:
        problem(f"status: {len(outside) - 20} more such answers")

    if honest_504:
        print(f"check: {len(honest_504)} deadline answers from the app (504 "
              f"{'/'.join(sorted({deadline_code(s['body']) for s in honest_504}))}), honest: "
              + ", ".join(f"{r}: {n}" for r, n in sorted(collections.Counter(s["route"] for s in honest_504).items())))
    print(f"check: {len(journal)} journal lines; {turns_checked} acknowledged turns in {len(acked)} conversations; "
          f"{len(reports)} reports; {len(redeemed)} approvals redeemed; {paid} load orders paid; "
          f"{len(by_kind['undo'])} undos; {len(by_kind['unacked_turn'])} turns not acknowledged; "
          f"{len(windows)} fault windows")
    if statuses:
        print("check: non-2xx answers: " + ", ".join(f"{r} {s}: {n}" for (r, s), n in sorted(statuses.items())))
    for p in problems:
        print(f"check: VIOLATION {p}")
    print(f"check: {'FAILED' if problems else 'ok'} ({len(problems)} violations)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
