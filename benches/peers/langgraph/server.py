"""The graph behind HTTP, as seed 000 serves it (FastAPI): `POST /chat` runs one turn and
answers `{"answer", "events", "timing"}` — `timing` holds the turn's graph and LLM round
trips as the server's transports measured them, in ms, the way devhost reports ours in
`Server-Timing` — and `POST /chat/stream` sends the same events as server-sent events.
Run by bench.py --http:

  uvicorn server:app --host 127.0.0.1 --port PORT   (with the KG_PEER_* environment)
"""

from __future__ import annotations

import json
import os

import httpx
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from agent import build_graph, run_turn, turn_events
from graph_client import GraphClient
from timing import TimedTransport

graph_io, llm_io = TimedTransport(), TimedTransport()
graph_client = GraphClient(
    os.environ["KG_PEER_GRAPH_URL"], os.environ["KG_PEER_GRAPH_USER"], os.environ["KG_PEER_GRAPH_PASSWORD"], graph_io
)
graph = build_graph(
    os.environ["KG_PEER_LLM_URL"],
    httpx.AsyncClient(transport=llm_io, timeout=30.0),
    summarise_always=os.environ.get("KG_PEER_ZERO_STEP_LLM_CALLS", "1") == "2",
)
app = FastAPI()


class ChatRequest(BaseModel):
    message: str
    conversation_id: str | None = None


@app.post("/chat")
async def chat(request: ChatRequest) -> dict:
    # The benchmark sends one turn at a time, so the transports' totals are this turn's.
    graph_io.take()
    llm_io.take()
    events, answer = await run_turn(graph, graph_client, request.message, request.conversation_id)
    (graph_ms, graph_n), (llm_ms, llm_n) = graph_io.take(), llm_io.take()
    return {
        "answer": answer,
        "events": events,
        "timing": {"graph_ms": graph_ms, "graph_n": graph_n, "llm_ms": llm_ms, "llm_n": llm_n},
    }


@app.post("/chat/stream")
async def chat_stream(request: ChatRequest) -> StreamingResponse:
    async def sse():
        async for event in turn_events(graph, graph_client, request.message, request.conversation_id):
            yield f"event: {event['event']}\ndata: {json.dumps(event['data'], ensure_ascii=False)}\n\n"

    return StreamingResponse(sse(), media_type="text/event-stream")


@app.get("/health")
async def health() -> dict:
    return {"status": "ok"}
