"""The copilot's HTTP API and page, one process: ``create_app(db=..., model=...)``.

POSTs start a turn and return at once; the turn's steps stream from
``GET /api/turns/{id}/events`` as server-sent events (``data:`` is a ``WebEvent``), replayed
from the store first, so a reload or a reconnect shows the same answer.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from sse_starlette import EventSourceResponse

from actsagent import __version__
from actsagent.db.base import Database
from actsagent.errors import ActsagentError, DatabaseUnavailable
from actsagent.graphs.models import Mode
from actsagent.web.agent_bridge import AgentBridge
from actsagent.web.answer import Answerer
from actsagent.web.body_limit import BodyLimit
from actsagent.web.flow import NO_LLM_NOTE, DatabaseHandle, Flow
from actsagent.web.lease import Heartbeat
from actsagent.web.limits import MAX_BODY_BYTES, cut
from actsagent.web.models import (
    AskRequest,
    ClarifyRequest,
    Conversation,
    ConversationSummary,
    NewConversation,
    SqlRequest,
    Status,
    Turn,
    TurnKind,
    WebEvent,
)
from actsagent.web.runner import TurnRunner
from actsagent.web.store import DEFAULT_LEASE_S, ConversationBusy, StoreTarget
from actsagent.web.stores import open_store

log = logging.getLogger("actsagent.web")
STATIC = Path(__file__).parent / "static"
_NEW_TITLE = "New conversation"


TOKEN_NEEDED = "This copilot needs its access token."


def given_token(request: Request) -> str:
    """The token a request carries: ``Authorization: Bearer``, ``X-Actsagent-Token`` or ``?token=``."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-actsagent-token") or request.query_params.get("token") or ""


def _sse(ev: WebEvent) -> dict[str, str]:
    return {"id": str(ev.seq), "event": "step", "data": ev.model_dump_json()}


def _validation_errors(e: RequestValidationError) -> list[dict[str, Any]]:
    """Where each invalid field is and what is wrong with it, never the value sent (which may be huge or secret)."""
    return [
        {"loc": [cut(str(part), 100) for part in err.get("loc", ())][:10], "msg": cut(str(err.get("msg", "")), 300)}
        for err in e.errors()[:20]
    ]


def create_app(
    *,
    db: Database | str | None = None,
    model: Any = None,
    store_path: str | Path | StoreTarget | None = None,
    token: str | None = None,
    allowed_hosts: list[str] | None = None,
    llm_answers: bool = True,
    mode: Mode = "tree",
    max_body_bytes: int = MAX_BODY_BYTES,
    lease_s: float = DEFAULT_LEASE_S,
    poll_s: float = 0.25,
) -> FastAPI:
    """The app; ``db`` is a Database, a target for ``open_database`` or None (``DATABASE_URL``, else the demo database).

    ``model`` is a chat model (``actsagent.llm.get_chat_model()`` or a scripted one) or None for the
    agent's LLM-free path. ``token``, when set, is required on every route but the page and its static
    files (header ``Authorization: Bearer``, ``X-Actsagent-Token`` or ``?token=``). ``allowed_hosts`` guards
    a localhost server against DNS rebinding. A request body over ``max_body_bytes`` is refused (413) while
    it is read.

    ``store_path`` is a SQLite file (None: the default one) or a ``postgresql://`` URL that several copilot
    replicas share: a turn runs on the replica that started it and streams from any (polled every ``poll_s``);
    a replica silent for ``lease_s`` has stopped, and its running turns are marked interrupted.
    """
    store = open_store(store_path, lease_s=lease_s)
    try:
        store.recover()
        bridge = AgentBridge(model, mode=mode, checkpointer=store.checkpointer())
    except BaseException:
        store.close()
        raise
    heartbeat = Heartbeat(store).start()
    handle = DatabaseHandle(db)
    flow = Flow(handle, bridge, Answerer(model if llm_answers else None))
    runner = TurnRunner(store)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        heartbeat.stop()
        runner.shutdown()
        handle.close()
        store.close()

    # the schema is served by the API router below, behind the token like every other API route
    app = FastAPI(
        title="actsagent copilot",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        openapi_url=None,
        redoc_url=None,
    )
    app.state.store, app.state.runner, app.state.flow, app.state.db = store, runner, flow, handle
    app.state.heartbeat = heartbeat

    if allowed_hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    app.add_middleware(BodyLimit, limit=max_body_bytes)  # outermost: nothing reads a body before the limit

    # the two checks of every API request are async: a plain def would cost each request two hops to a worker thread
    async def check_token(request: Request) -> None:
        if token and not secrets.compare_digest(given_token(request).encode(), token.encode()):
            raise HTTPException(status_code=401, detail=TOKEN_NEEDED)

    async def json_only(request: Request) -> None:
        # A cross-site form cannot send application/json without a CORS preflight, which we never allow.
        if request.method in ("POST", "PATCH", "PUT"):
            ctype = request.headers.get("content-type", "")
            if not ctype.startswith("application/json"):
                raise HTTPException(status_code=415, detail="Send JSON (Content-Type: application/json).")

    api = APIRouter(prefix="/api", dependencies=[Depends(check_token), Depends(json_only)])

    @app.exception_handler(ActsagentError)
    async def _known(_: Request, e: ActsagentError) -> JSONResponse:
        code = 503 if isinstance(e, DatabaseUnavailable) else 400
        return JSONResponse({"detail": str(e)}, status_code=code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(e)
        words = "; ".join(
            "the body is not valid JSON"
            if err["msg"] == "JSON decode error"
            else f"{'.'.join(err['loc'][1:]) or 'the body'}: {err['msg']}"
            for err in errors[:3]
        )
        return JSONResponse(
            {"detail": cut(f"The request is not valid: {words}.", 500), "errors": errors}, status_code=422
        )

    @app.exception_handler(ConversationBusy)
    async def _busy(_: Request, e: ConversationBusy) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, status_code=409)

    @app.exception_handler(Exception)
    async def _bug(_: Request, e: Exception) -> JSONResponse:
        log.exception("request failed")
        return JSONResponse(
            {"detail": f"The copilot failed on this request ({type(e).__name__}); the details are in the server log."},
            status_code=500,
        )

    def conversation_or_404(cid: str) -> ConversationSummary:
        conv = store.conversation_summary(cid)
        if conv is None:
            raise HTTPException(status_code=404, detail="No such conversation.")
        return conv

    def turn_or_404(tid: str) -> Turn:
        turn = store.get_turn(tid)
        if turn is None:
            raise HTTPException(status_code=404, detail="No such turn.")
        return turn

    def name_from(conv: ConversationSummary, text: str) -> None:
        if conv.title == _NEW_TITLE and text.strip():
            line = " ".join(text.split())
            store.rename_conversation(conv.id, line[:70] + ("…" if len(line) > 70 else ""))

    def start_turn(cid: str, kind: TurnKind, *, question: str = "", sql: str | None = None) -> Turn:
        """The turn, started; the store refuses (409) while another turn of the conversation runs."""
        try:
            return store.add_turn(cid, kind, question=question, sql=sql)
        except KeyError:
            raise HTTPException(status_code=404, detail="No such conversation.") from None

    @api.get("/status")
    def status() -> Status:
        ok, err, dialect = True, None, None
        try:
            dialect = handle.get().dialect
        except ActsagentError as e:
            ok, err = False, str(e)
        llm_note = NO_LLM_NOTE
        if bridge.has_llm:
            cfg = getattr(model, "config", None)
            name = cfg.model_for("planner") if cfg is not None else "configured in the environment"
            llm_note = f"LLM: {name}"
        return Status(
            database=handle.label,
            dialect=dialect,
            database_ok=ok,
            database_error=err,
            llm=bridge.has_llm,
            llm_note=llm_note,
            version=__version__,
        )

    @api.get("/schema")
    def schema() -> dict[str, Any]:
        info = handle.get().schema()
        return {
            "dialect": info.dialect,
            "database": info.database,
            "tables": [
                {
                    "name": t.qualified,
                    "comment": t.comment,
                    "rows": t.row_estimate,
                    "columns": [
                        {
                            "name": c.name,
                            "type": c.type,
                            "pk": c.primary_key,
                            "comment": c.comment,
                            "references": c.references,
                        }
                        for c in t.columns
                    ],
                }
                for t in info.tables
            ],
        }

    @api.get("/conversations")
    def list_conversations() -> list[ConversationSummary]:
        return store.list_conversations()

    @api.post("/conversations", status_code=201)
    def new_conversation(body: NewConversation) -> ConversationSummary:
        return store.create_conversation(body.title or _NEW_TITLE, handle.label)

    @api.get("/conversations/{cid}")
    def get_conversation(cid: str) -> Conversation:
        conv = store.get_conversation(cid)
        if conv is None:
            raise HTTPException(status_code=404, detail="No such conversation.")
        return conv

    @api.patch("/conversations/{cid}")
    def rename(cid: str, body: NewConversation) -> ConversationSummary:
        conversation_or_404(cid)
        if body.title:
            store.rename_conversation(cid, body.title)
        return conversation_or_404(cid)

    @api.delete("/conversations/{cid}", status_code=204)
    def delete(cid: str) -> None:
        if not store.delete_conversation(cid):
            raise HTTPException(status_code=404, detail="No such conversation.")

    @api.post("/conversations/{cid}/ask", status_code=202)
    def ask(cid: str, body: AskRequest) -> Turn:
        conv = conversation_or_404(cid)
        turn = start_turn(cid, "ask", question=body.question)
        previous = store.previous_turns(cid, turn.index)
        name_from(conv, body.question)
        runner.start(
            turn.id,
            lambda: flow.ask(body.question, thread_id=turn.thread_id or turn.id, previous=previous),
            fresh=True,
        )
        return turn

    @api.post("/conversations/{cid}/sql", status_code=202)
    def sql(cid: str, body: SqlRequest) -> Turn:
        conv = conversation_or_404(cid)
        question = body.question or ""
        if not question:  # an edit of an earlier answer keeps that answer's question
            prev = store.previous_turns(cid, 10**9, limit=1)
            question = prev[0].question if prev and body.action == "run" else ""
        turn = start_turn(cid, body.action, question=question, sql=body.sql)
        name_from(conv, body.question or body.sql)
        if body.action == "run":
            runner.start(turn.id, lambda: flow.run_sql(body.sql, question=question), fresh=True)
        else:
            previous = store.previous_turns(cid, turn.index)
            runner.start(
                turn.id,
                lambda: flow.repair(
                    body.sql, thread_id=turn.thread_id or turn.id, question=body.question, previous=previous
                ),
                fresh=True,
            )
        return turn

    @api.get("/turns/{tid}")
    def get_turn(tid: str) -> Turn:
        turn = store.get_turn(tid, with_events=True)
        if turn is None:
            raise HTTPException(status_code=404, detail="No such turn.")
        return turn

    @api.post("/turns/{tid}/clarify", status_code=202)
    def clarify(tid: str, body: ClarifyRequest) -> Turn:
        turn = turn_or_404(tid)
        if not store.claim_turn(tid):  # atomic: of two replies at once, one resumes the run
            raise HTTPException(status_code=409, detail="This answer is not waiting for a clarification.")
        runner.start(tid, lambda: flow.resume(body.answer, thread_id=turn.thread_id or tid, question=turn.question))
        return turn_or_404(tid)

    @api.get("/turns/{tid}/events")
    async def events(tid: str, request: Request, after: int = 0) -> EventSourceResponse:
        last = request.headers.get("last-event-id")
        if last and last.isdigit():
            after = max(after, int(last))
        ch = runner.channel(tid)  # the turn runs here (so it exists): its events as they are produced
        polled = None
        if ch is None:  # stored, or running on another replica: the store says which, and whether there is one
            polled = await anyio.to_thread.run_sync(store.poll, tid, after, abandon_on_cancel=True)
            if polled is None:
                raise HTTPException(status_code=404, detail="No such turn.")

        async def gen() -> AsyncIterator[dict[str, str]]:
            seen = after
            if ch is not None:
                while True:
                    evs, more = ch.wait(seen, 0)  # what is there already, without a worker thread
                    if not evs and more:
                        evs, more = await anyio.to_thread.run_sync(ch.wait, seen, 10.0, abandon_on_cancel=True)
                    for ev in evs:
                        seen = ev.seq
                        yield _sse(ev)
                    if not more:
                        break
            else:  # the store, polled every ``poll_s`` until the turn stops running (or is deleted)
                evs, running = polled or ([], False)
                while True:
                    for ev in evs:
                        seen = ev.seq
                        yield _sse(ev)
                    if not running:
                        break
                    if not evs:
                        await anyio.sleep(poll_s)
                    again = await anyio.to_thread.run_sync(store.poll, tid, seen, abandon_on_cancel=True)
                    evs, running = again or ([], False)
            yield {"event": "end", "data": "{}"}

        # sse-starlette frames the events (one "data:" line each: the JSON has no line break), pings an idle
        # stream every 10 s and stops the generator when the client goes away
        return EventSourceResponse(gen(), sep="\n", ping=10)

    @api.get("/openapi.json", include_in_schema=False)
    def openapi() -> dict[str, Any]:
        return app.openapi()

    @api.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"], include_in_schema=False)
    def unknown(rest: str) -> None:  # after the token check: an unknown API path tells nothing without the token
        raise HTTPException(status_code=404, detail="No such API route.")

    app.include_router(api)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def event_stream_lines(raw: str) -> list[dict[str, Any]]:
    """Parse an SSE body into the ``WebEvent`` dicts it carries (for tests and scripts)."""
    out = []
    for block in raw.split("\n\n"):
        parts = block.split("\n")  # not splitlines(): U+0085 or U+2028 inside a JSON string is no line break
        lines = [ln for ln in parts if ln.startswith("data: ")]
        kind = next((ln[7:] for ln in parts if ln.startswith("event: ")), "message")
        if lines and kind == "step":
            out.append(json.loads("\n".join(ln[6:] for ln in lines)))
    return out
