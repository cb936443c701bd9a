"""Hostile HTTP requests against the copilot on a real uvicorn server: oversized bodies (declared and
chunked) are refused while they are read, invalid bodies are never echoed back, and the token guards
every route but the page and its static files."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from web_server import LiveServer

from actsagent.web import create_app
from actsagent.web.limits import MAX_BODY_BYTES

TOKEN = "s3cret-token"
AUTH = {"X-Actsagent-Token": TOKEN}


@pytest.fixture
def app(tmp_path):
    # no database is opened by these requests; a missing SQLite file proves it
    return create_app(db=str(tmp_path / "absent.sqlite"), store_path=tmp_path / "c.sqlite", token=TOKEN)


def _raw(port: int, head: str, chunks: list[bytes] = ()) -> tuple[int, dict]:
    """Send a request by hand (headers, then body chunks until the server stops reading); its status and JSON."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode())
        for c in chunks:
            try:
                s.sendall(c)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed: it did not wait for the rest
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head_raw, _, body = data.partition(b"\r\n\r\n")
    return int(head_raw.split(b" ", 2)[1]), json.loads(body)


def _post_head(cid_path: str, extra: str) -> str:
    return (
        f"POST {cid_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-Actsagent-Token: {TOKEN}\r\n{extra}\r\n"
    )


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


TOO_LARGE = {"detail": "The request body is larger than this copilot accepts (1 MiB)."}
PIECE = b"x" * 65536


def test_a_declared_oversize_body_is_refused_before_it_is_read(app):
    with LiveServer(app) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        # 300 MB announced, not one byte sent: the answer comes without waiting for the body
        assert _raw(port, _post_head("/api/conversations", "Content-Length: 300000000\r\n")) == (413, TOO_LARGE)
        # a little over the limit, sent in full: read and dropped, so the client gets the answer, not a reset
        body = b"x" * (MAX_BODY_BYTES + 1000)
        assert _raw(port, _post_head("/api/conversations", f"Content-Length: {len(body)}\r\n"), [body]) == (
            413,
            TOO_LARGE,
        )


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(app):
    with LiveServer(app) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        head = _post_head("/api/conversations", "Transfer-Encoding: chunked\r\n")
        # 17 chunks of 64 KiB (just over 1 MiB), then the end of the body
        assert _raw(port, head, [_chunk(PIECE)] * 17 + [b"0\r\n\r\n"]) == (413, TOO_LARGE)
        # a body that never ends: 2 MiB and one byte more, no final chunk; the answer comes anyway, so the
        # server neither waited for the end nor kept what it read
        assert _raw(port, head, [_chunk(PIECE)] * 32 + [b"1\r\nx"]) == (413, TOO_LARGE)


def test_bodies_within_the_limit_pass_and_the_limit_is_configurable(tmp_path):
    app = create_app(db=str(tmp_path / "absent.sqlite"), store_path=tmp_path / "c.sqlite", max_body_bytes=4096)
    with LiveServer(app) as url, httpx.Client(base_url=url) as c:
        title = {"title": "t" * 150}
        assert c.post("/api/conversations", json=title).status_code == 201
        chunked = c.post(
            "/api/conversations",
            content=iter([json.dumps(title).encode()]),
            headers={"Content-Type": "application/json"},
        )
        assert chunked.status_code == 201 and chunked.request.headers["transfer-encoding"] == "chunked"
        big = json.dumps({"title": "t" * 5000}).encode()
        r = c.post("/api/conversations", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json() == {
            "detail": "The request body is larger than this copilot accepts (4 KiB)."
        }
        r = c.post(
            "/api/conversations", content=iter([big[:3000], big[3000:]]), headers={"Content-Type": "application/json"}
        )
        assert r.status_code == 413
    assert MAX_BODY_BYTES == 1024 * 1024


def test_invalid_bodies_are_described_never_echoed(app):
    secret = "SECRET-" + "s" * 30_000
    with LiveServer(app) as url, httpx.Client(base_url=url, headers=AUTH) as c:
        cid = c.post("/api/conversations", json={}).json()["id"]
        cases = [
            (f"/api/conversations/{cid}/ask", {"question": secret}),  # too long
            (f"/api/conversations/{cid}/sql", {"sql": secret, "action": secret}),  # not run/repair
            (f"/api/conversations/{cid}/sql", {"sql": {"nested": secret}}),  # not a string
            ("/api/conversations", {"title": [secret]}),
        ]
        for path, payload in cases:
            r = c.post(path, json=payload)
            assert r.status_code == 422, r.text
            assert "SECRET" not in r.text and len(r.text) < 1000
            body = r.json()
            assert body["detail"].startswith("The request is not valid: ")
            assert body["errors"] and all(set(e) == {"loc", "msg"} for e in body["errors"])
            assert body["errors"][0]["loc"][0] == "body"
        r = c.post(
            f"/api/conversations/{cid}/ask",
            content='{"question": "SECRET-unterminated',
            headers={"Content-Type": "application/json"},
        )
        assert r.status_code == 422 and "SECRET" not in r.text
        assert r.json()["detail"] == "The request is not valid: the body is not valid JSON."
        r = c.get("/api/turns/x/events", params={"after": "SECRET"})
        assert r.status_code == 422 and "SECRET" not in r.text
        assert r.json()["errors"] == [
            {"loc": ["query", "after"], "msg": "Input should be a valid integer, unable to parse string as an integer"}
        ]
        assert c.get("/api/conversations/SECRET-id").json() == {"detail": "No such conversation."}


def _example_path(path: str) -> str:
    return path.replace("{cid}", "c0").replace("{tid}", "t0")


def test_every_route_but_the_page_needs_the_token(app):
    # the routes the app documents, plus the schema itself (which it does not list)
    routes = [(path, method.upper()) for path, ops in app.openapi()["paths"].items() for method in ops]
    routes.append(("/api/openapi.json", "GET"))
    assert len(routes) >= 13 and ("/api/conversations/{cid}/sql", "POST") in routes
    with LiveServer(app) as url, httpx.Client(base_url=url) as c:
        for path, method in routes:
            assert path.startswith("/api/"), path
            r = c.request(method, _example_path(path), json={} if method in ("POST", "PATCH", "PUT") else None)
            assert (r.status_code, r.json()) == (401, {"detail": "This copilot needs its access token."}), (
                method,
                path,
            )
        assert c.get("/").status_code == 200 and "actsagent copilot" in c.get("/").text
        assert c.get("/static/app.js").status_code == 200
        assert c.get("/api/no/such/route").status_code == 401  # an unknown API path says nothing without the token
        schema = c.get("/api/openapi.json", headers=AUTH)
        assert schema.status_code == 200 and "/api/conversations/{cid}/ask" in schema.json()["paths"]
        assert c.get("/api/no/such/route", headers=AUTH).json() == {"detail": "No such API route."}
