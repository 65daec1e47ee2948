"""Seed 000's agent graph in LangGraph, as the seed builds it (§4): a `StateGraph` of a
router node, a ReAct agent node calling the LLM with the graph tools and a prebuilt
`ToolNode` running them, looping until the LLM answers without a tool call, then a
summariser node that writes the answer from the draft and the tool results (or, when no
tool was called, the agent's reply is the answer — see `build_graph`). The LLM is
`ChatOpenAI` (langchain-openai) pointed at our scripted stub; the router classifies by
rules (our `routing_mode: "rule"`, what the benches use, so it calls no LLM either); each
turn is checkpointed (`InMemorySaver`, one thread per conversation), as ours keeps its
conversation state; and the turn streams its events (router decision, tool calls, tool
results, answer) the way seed 000's `/chat/stream` does."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from graph_client import GraphClient, Schema
from tools import query_tools

# Our prompts (prompts/en/react.txt and summariser.txt), so the requests are about the same size.
REACT_PROMPT = (
    "You are kg-agent. You answer over a Neo4j knowledge graph of procurement data (Supplier, "
    "Product, PurchaseOrder, LineItem, Invoice, Payment, Account) using the tools; never invent "
    "entities or values that the tools did not return. Find entities by name with search_instances, "
    "explore with get_instance_neighbors, get_instances_by_class, find_path_between_instances and "
    "describe_class; use run_read_cypher only when no other tool fits. Call several tools in one step "
    "when they are independent. When you have enough, answer briefly in the user's language and name "
    "the entity ids you used."
)
# prompts/en/react_action.txt, added for action turns; those would also bind the action
# tools, which this graph leaves out: the benchmark's turns are queries.
REACT_ACTION_PROMPT = REACT_PROMPT + "\n\n" + (
    "The user wants to change entities. Find every target entity with the query tools (e.g. all orders of a "
    "supplier), check the action with list_available_actions / get_action_details, then call "
    "propose_action_plan exactly once with all target ids and the parameters. Do not filter targets by "
    "preconditions: the executor checks each one and reports failures."
)
SUMMARISER_PROMPT = (
    "You are the answering step of an assistant over a procurement knowledge graph and its documents. "
    "Answer the user's question from the evidence below only. Answer in {language}. Mention entities by "
    "their ids exactly as written in the evidence (for example PO-0012) and documents by their ids. Never "
    "invent entities, ids, numbers or documents that are not in the evidence; if the evidence does not "
    "answer the question, say so plainly. For an action batch, report totals, successes and every failure "
    "with its reason, faithful to the report. Be concise."
)
ACTION_WORDS = ("pay", "approve", "cancel", "submit", "execute", "reject", "付款", "批准", "取消")
GREETINGS = ("hello", "hi", "thanks", "thank you", "你好", "谢谢")


class AgentState(TypedDict):
    """Seed 000 §4.1, the fields this graph uses."""

    messages: Annotated[list, add_messages]
    user_intent: str
    current_step: str
    answer: str


def route_by_rules(message: str) -> str:
    text = message.lower()
    if any(w in text for w in ACTION_WORDS):
        return "action"
    if text.strip(" !.?") in GREETINGS:
        return "answer"
    return "query"


def build_graph(llm_base_url: str, llm_http: Any, summarise_always: bool, max_steps: int = 8):
    """The compiled graph. `llm_http` is the `httpx.AsyncClient` the LLM client sends with.
    Without `summarise_always`, an agent that answers without calling any tool has given
    the answer (no summariser call: nothing to ground), as ours does since issue #18; with
    it, every turn ends in the summariser, as seed 000 draws it."""
    llm = ChatOpenAI(
        model="stub",
        base_url=llm_base_url,
        api_key="stub",
        temperature=0,
        max_retries=0,
        http_async_client=llm_http,
    )
    tools = query_tools()
    agent_llm = llm.bind_tools(tools)

    async def router(state: AgentState) -> dict:
        intent = route_by_rules(state["messages"][-1].content)
        get_stream_writer()({"event": "router", "data": {"intent": intent, "mode": "rule"}})
        return {"user_intent": intent, "current_step": "router"}

    async def agent(state: AgentState) -> dict:
        steps = sum(1 for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
        write = get_stream_writer()
        write({"event": "thinking", "data": {"step": steps + 1}})
        prompt = REACT_ACTION_PROMPT if state["user_intent"] == "action" else REACT_PROMPT
        reply = await agent_llm.ainvoke([SystemMessage(prompt), *state["messages"]])
        if steps >= max_steps and reply.tool_calls:
            # Out of steps: answer with what is there (our loop's step limit).
            reply = AIMessage(content=reply.content or "")
        for call in reply.tool_calls:
            write({"event": "tool_call", "data": {"tool": call["name"], "arguments": call["args"], "id": call["id"]}})
        return {"messages": [reply], "current_step": "agent"}

    async def summariser(state: AgentState) -> dict:
        question = next(m.content for m in state["messages"] if isinstance(m, HumanMessage))
        draft = state["messages"][-1].content
        evidence = [
            {"tool": m.name, "result": m.content} for m in state["messages"] if isinstance(m, ToolMessage)
        ]
        prompt = SUMMARISER_PROMPT.format(language="English")
        user = (
            f"Question: {question}\n\nDraft answer: {draft}\n\n"
            f"Evidence:\n{json.dumps(evidence, ensure_ascii=False)}"
        )
        reply = await llm.ainvoke([SystemMessage(prompt), HumanMessage(user)])
        get_stream_writer()({"event": "answer", "data": {"content": reply.content}})
        return {"answer": reply.content, "current_step": "summariser"}

    async def direct_answer(state: AgentState) -> dict:
        content = state["messages"][-1].content
        get_stream_writer()({"event": "answer", "data": {"content": content}})
        return {"answer": content, "current_step": "direct_answer"}

    def after_agent(state: AgentState) -> str:
        if tools_condition(state) == "tools":
            return "tools"
        used_tools = any(isinstance(m, ToolMessage) for m in state["messages"])
        return "summariser" if used_tools or summarise_always else "direct_answer"

    workflow = StateGraph(AgentState)
    workflow.add_node("router", router)
    workflow.add_node("agent", agent)
    workflow.add_node("tools", ToolNode(tools))
    workflow.add_node("summariser", summariser)
    workflow.add_edge(START, "router")
    # Every intent goes through the one ReAct loop (as ours does); the intent picks its prompt.
    workflow.add_edge("router", "agent")
    workflow.add_node("direct_answer", direct_answer)
    workflow.add_conditional_edges(
        "agent", after_agent, {"tools": "tools", "summariser": "summariser", "direct_answer": "direct_answer"}
    )
    workflow.add_edge("tools", "agent")
    workflow.add_edge("summariser", END)
    return workflow.compile(checkpointer=InMemorySaver())


async def turn_events(graph, graph_client: GraphClient, message: str, conversation_id: str | None = None):
    """One turn's events as they happen, each a JSON text as a server sends them."""
    config = {
        "configurable": {"thread_id": conversation_id or str(uuid.uuid4()), "schema": Schema(graph_client)},
        "recursion_limit": 50,
    }
    async for mode, chunk in graph.astream(
        {"messages": [HumanMessage(message)]}, config, stream_mode=["custom", "updates"]
    ):
        if mode == "custom":
            yield chunk
        else:
            for node in chunk:
                yield {"event": "step", "data": {"node": node}}


async def run_turn(graph, graph_client: GraphClient, message: str, conversation_id: str | None = None):
    """One turn: its events in order (JSON texts) and the answer."""
    events: list[str] = []
    answer = None
    async for event in turn_events(graph, graph_client, message, conversation_id):
        events.append(json.dumps(event, ensure_ascii=False))
        if event["event"] == "answer":
            answer = event["data"]["content"]
    return events, answer
