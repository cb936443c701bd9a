"""A request-body limit enforced while the body is read, before any route sees it.

At most ``limit`` bytes of a body are kept. A declared ``Content-Length`` far over the limit is refused
before a byte of the body is read; past the limit a body (declared or chunked) is read on and dropped
for at most another ``limit`` bytes, so that a client sending a little too much gets the 413 rather than
a connection reset (a server that closes with unread data resets the connection and the answer is lost),
then refused. (FastAPI's own ``max_body_size`` answers a declared oversize body in plain text; the copilot
answers every error in JSON.)
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def size_text(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n:,} bytes"


class BodyLimit:
    """ASGI middleware: buffer at most ``limit`` bytes of a request body, answer 413 past that."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await _json(send, 400, "The Content-Length header is not a number.")
                return
            if int(declared) > 2 * self.limit:
                await _json(send, 413, self._too_large())
                return
        body = bytearray()
        received, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before sending its body
            chunk = message.get("body", b"")
            more = message.get("more_body", False)
            received += len(chunk)
            if received <= self.limit:
                body += chunk
                continue
            body.clear()  # over the limit: read on (and drop) to let the answer arrive, but not for long
            if not more or received > 2 * self.limit:
                await _json(send, 413, self._too_large())
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: the disconnect a streaming response listens for
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"The request body is larger than this copilot accepts ({size_text(self.limit)})."


async def _json(send: Send, status: int, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
