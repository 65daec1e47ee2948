"""Round trips timed at the HTTP transport: from the request going out to the answer's
body read, what devhost counts per outbound request (its `Server-Timing`)."""

from __future__ import annotations

import time

import httpx


class TimedTransport(httpx.AsyncHTTPTransport):
    """Adds up the time and number of the round trips sent through it."""

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
        """The milliseconds and calls since the last `take`."""
        taken = (self.seconds * 1000.0, self.calls)
        self.seconds, self.calls = 0.0, 0
        return taken
