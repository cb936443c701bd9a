"""Several callers on one copilot: each access token names a user and the settings (``app.tenant_id``)
SET LOCAL in every transaction that user's turns open, so row-level security decides what each sees.

``tokens.json`` maps token -> ``{"user": "alice", "settings": {"app.tenant_id": 42}}``. Each user
gets a copilot of their own (``create_app`` over the database viewed through their settings, with
their own conversation store, so nobody lists or reads another's conversations and results), and a
small ASGI router picks it by token. Requests without a known token reach only the page itself.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, field_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from actsagent.db.base import Database
from actsagent.db.settings import SessionSettings, as_settings
from actsagent.errors import UserError
from actsagent.web.app import TOKEN_NEEDED, create_app, given_token
from actsagent.web.store import StoreTarget, parse_store

MIN_TOKEN_LEN = 16
_USER = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class Caller(BaseModel, frozen=True):
    user: str
    settings: SessionSettings = SessionSettings()

    @field_validator("user")
    @classmethod
    def _user(cls, v: str) -> str:
        if not _USER.match(v) or v.strip(".") != v:
            raise ValueError("a user is 1-64 letters, digits, '_', '-' or '.' (it names the user's conversation file)")
        return v

    @field_validator("settings", mode="before")
    @classmethod
    def _settings(cls, v: Any) -> SessionSettings:
        return as_settings(v)


def load_tokens(path: str | Path) -> dict[str, Caller]:
    """Read and check a tokens file; any problem is one UserError naming the file."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(f"cannot read tokens file {p}: {e}") from e
    return check_tokens(raw, source=str(p))


def check_tokens(raw: Any, *, source: str = "tokens") -> dict[str, Caller]:
    if not isinstance(raw, Mapping) or not raw:
        raise UserError(f'{source}: expected a JSON object mapping each token to {{"user": ..., "settings": ...}}')
    out: dict[str, Caller] = {}
    seen: dict[str, SessionSettings] = {}
    for token, entry in raw.items():
        if len(token) < MIN_TOKEN_LEN or not token.isprintable() or token != token.strip():
            raise UserError(f"{source}: every token must be at least {MIN_TOKEN_LEN} printable characters")
        try:
            caller = Caller.model_validate(entry)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "entry"
            raise UserError(f"{source}: the entry of a token is not valid ({where}: {err['msg']})") from None
        except UserError as e:  # a bad setting name or value
            raise UserError(f"{source}: {e}") from None
        if seen.setdefault(caller.user, caller.settings) != caller.settings:
            raise UserError(f"{source}: user {caller.user!r} has two tokens with different settings")
        out[token] = caller
    return out


def user_store(store_path: str | Path | StoreTarget | None, user: str) -> StoreTarget:
    """The user's own store: a SQLite file beside the given one, or a PostgreSQL schema of their own."""
    return parse_store(store_path).for_user(user)


class TokenRouter:
    """ASGI: the app of the user whose token the request carries; no known token, no API."""

    def __init__(self, apps: Mapping[str, Starlette], users: dict[str, str], on_close: Any = None) -> None:
        self._apps = apps  # user -> app
        self._users = users  # token -> user
        self._page = next(iter(apps.values()))  # serves the page and its static files, which hold no data
        self._on_close = on_close

    def app_for(self, token: str) -> Starlette | None:
        found = None
        for tok, user in self._users.items():  # compare every token, in constant time each
            if secrets.compare_digest(tok.encode(), token.encode()):
                found = self._apps[user]
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app: ASGIApp | None = (
            self.app_for(given_token(Request(scope))) if scope["type"] in ("http", "websocket") else None
        )
        if app is None:
            if scope.get("path", "").startswith("/api"):
                await JSONResponse({"detail": TOKEN_NEEDED}, status_code=401)(scope, receive, send)
                return
            app = self._page
        await app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with AsyncExitStack() as stack:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    try:
                        for app in self._apps.values():
                            await stack.enter_async_context(app.router.lifespan_context(app))
                    except Exception as e:  # report it to the server, which stops
                        await send({"type": "lifespan.startup.failed", "message": str(e)})
                        return
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await stack.aclose()
                    if self._on_close is not None:
                        self._on_close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return


class LabelledApp:
    """An ASGI app with the label the server prints on start (which database, how many users)."""

    def __init__(self, app: ASGIApp, label: str) -> None:
        self.app = app
        self.label = label

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def create_tenant_app(
    tokens: dict[str, Caller],
    *,
    db: Database | str | None = None,
    model: Any = None,
    store_path: str | Path | StoreTarget | None = None,
    allowed_hosts: list[str] | None = None,
    **app_options: Any,
) -> LabelledApp:
    """One copilot per user of ``tokens`` over one database (opened now: a bad target fails at start)."""
    from actsagent.demo import open_target

    if not tokens:
        raise UserError("no tokens given")
    base = db if isinstance(db, Database) else open_target(db)
    callers = {c.user: c for c in tokens.values()}
    try:
        apps = {
            user: create_app(
                db=base.with_settings(c.settings),
                model=model,
                store_path=user_store(store_path, user),
                **app_options,
            )
            for user, c in callers.items()
        }
    except Exception:
        if not isinstance(db, Database):
            base.close()
        raise
    router: ASGIApp = TokenRouter(
        apps, {t: c.user for t, c in tokens.items()}, on_close=None if isinstance(db, Database) else base.close
    )
    if allowed_hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        router = TrustedHostMiddleware(router, allowed_hosts=allowed_hosts)
    return LabelledApp(router, f"{base.name} ({base.dialect}), {len(apps)} users")
