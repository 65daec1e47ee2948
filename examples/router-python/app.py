"""A kg:router/router written in Python: keyword rules of its own, no LLM.

componentize-py builds this module into a WebAssembly component exporting
`kg:router/router@0.1.0` (world `router-component` of ../../wit/worlds.wit); spin.toml plugs it
into the dispatcher in place of the Rust router (components/router). Every decision says
where it came from: its reason starts with `python-rules:`, its confidences are values the
Rust router never gives (0.81, 0.77, 0.73, 0.97, 0.41, 0.55), and its method is always
`rule` (it has no LLM), with a warning when the request asked for `llm` or `hybrid`.
"""

import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.router import Intent, RouteDecision, RouteRequest, RoutingMode
from wit_world.imports.types import Check, ComponentStatus, Error, ErrorCode

NAME = "python-rules"
VERSION = "0.1.0"
# Longest message routed; longer ones are refused (the dispatcher then falls back to
# treating the message as a question, and says so).
MAX_MESSAGE_CHARS = 4000

# Whole words, first match wins, in this order. Each rule: intent, confidence, words.
RULES = [
    (Intent.ANSWER, 0.97, {"hello", "hi", "hey", "thanks", "thank", "bye", "你好", "谢谢"}),
    (Intent.ACTION, 0.81, {"approve", "pay", "cancel", "reject", "block", "unblock", "批准", "支付", "取消"}),
    (Intent.DOCUMENT, 0.77, {"policy", "policies", "contract", "document", "documents", "handbook", "政策", "合同"}),
    (
        Intent.QUERY,
        0.73,
        {
            "supplier", "suppliers", "order", "orders", "product", "products", "part", "parts",
            "payment", "payments", "invoice", "invoices", "customer", "customers", "how",
            "which", "what", "who", "list", "show", "count", "供应商", "订单", "产品",
        },
    ),
]
# A question mark with no keyword: probably a question about the graph.
QUESTION = (Intent.QUERY, 0.55)
CLARIFICATION = (
    "python-rules could not tell what you need: ask about a supplier, an order, a product "
    "or a payment, or name an action (approve, pay, cancel)."
)

WORD = re.compile(r"[\w\u4e00-\u9fff]+")


def decide(message: str):
    """(intent, confidence, reason) for a trimmed message."""
    if not message:
        return Intent.CLARIFY, 0.41, f"{NAME}: the message is empty"
    words = [w.lower() for w in WORD.findall(message)]
    for intent, confidence, keywords in RULES:
        for word in words:
            # Chinese has no spaces: a keyword inside a run of Han characters counts too.
            if word in keywords or any(k in word for k in keywords if not k.isascii()):
                return intent, confidence, f"{NAME}: keyword `{word}` means {intent.name.lower()}"
    if message.endswith("?") or message.endswith("？"):
        intent, confidence = QUESTION
        return intent, confidence, f"{NAME}: a question with no keyword"
    return Intent.CLARIFY, 0.41, f"{NAME}: no keyword matched"


class Router(exports.Router):
    def status(self) -> ComponentStatus:
        return ComponentStatus(
            name="router",
            version=f"{VERSION}-{NAME}",
            ready=True,
            checks=[Check(name="implementation", ok=True, detail=f"{NAME} (Python, componentize-py)")],
        )

    def use_trace_context(self, traceparent: str) -> None:
        # This router records no spans.
        pass

    def take_spans(self) -> str:
        return "[]"

    def route(self, request: RouteRequest) -> RouteDecision:
        if len(request.message) > MAX_MESSAGE_CHARS:
            raise Err(
                Error(
                    code=ErrorCode.INVALID_ARGUMENT,
                    message=f"{NAME}: the message is longer than {MAX_MESSAGE_CHARS} characters",
                    retryable=False,
                    detail=None,
                )
            )
        question = request.message.strip()
        intent, confidence, reason = decide(question)
        warnings = []
        if request.mode != RoutingMode.RULE:
            warnings.append(f"{NAME} has no LLM: decided by rules instead of {request.mode.name.lower()}")
        return RouteDecision(
            intent=intent,
            confidence=confidence,
            method=RoutingMode.RULE,
            reason=reason,
            refined_question=question,
            clarification=CLARIFICATION if intent == Intent.CLARIFY else None,
            warnings=warnings,
        )
