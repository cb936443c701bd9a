"""Shared fixtures: a real embedded PostgreSQL per test session, fresh databases per test, no LLM.

Databases are never mocked. Each session gets its own ACTSAGENT_HOME, so tests never touch
a user's embedded server or caches (the sessions share only a cache of embedding vectors, of their own). Under pytest-xdist (``-n 2``) each worker is a session of its own:
its own home, hence its own embedded server, databases and files.
"""

from __future__ import annotations

import functools
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under pytest-xdist, else ""


def _scratch_dir() -> str | None:
    """Where a session's own home goes: memory (``/dev/shm``) when it has room, else the temp folder. The tests
    create and drop hundreds of databases; on a disk each file written and unlinked costs far more, and
    durability is not under test (see ``_NO_FLUSH``)."""
    import shutil

    shm = Path("/dev/shm")
    try:
        roomy = shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free >= 2 * 1024**3
    except OSError:
        roomy = False
    return str(shm) if roomy else None


_HOME = (
    Path(os.environ["ACTSAGENT_TEST_HOME"]) / _WORKER
    if os.environ.get("ACTSAGENT_TEST_HOME")
    else Path(tempfile.mkdtemp(prefix=f"actsagent-test-{_WORKER}", dir=_scratch_dir()))
)
os.environ["ACTSAGENT_HOME"] = str(_HOME)
# No test may reach a real model by accident: drop credentials, point any client at a dead port.
for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
    os.environ.pop(var, None)
os.environ["ACTSAGENT_NO_LLM"] = "1"
# OpenAIChatModel refuses to send (pydantic-ai guard)
__import__("actsagent.llm.openai_model").llm.openai_model.ALLOW_MODEL_REQUESTS = False

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MODEL_PATH = SHARED / "models" / "all-MiniLM-L6-v2-onnx-int8"
os.environ.setdefault("ACTSAGENT_EMBED_MODEL_PATH", str(MODEL_PATH))
# The embedding vectors are the model's, whoever asks: the workers and later sessions share one cache (each checks
# the vectors it reads), so the server's ~3,000 function names are embedded once per machine, not per worker.
os.environ.setdefault(
    "ACTSAGENT_EMBED_CACHE", str(Path(tempfile.gettempdir()) / f"actsagent-test-embeddings-{os.getuid()}")
)


# Durability is not under test: the session's own server skips fsync, so creating and dropping a database
# per test costs no disk flushes (changed at run time, and only on the tests' own server).
_NO_FLUSH = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    from actsagent.db import admin, embedded

    url = embedded.server_url("postgres")
    with admin.connect(url) as conn:
        for name, value in _NO_FLUSH.items():
            conn.execute(f"ALTER SYSTEM SET {name} = {value}")
        conn.execute("SELECT pg_reload_conf()")
    yield url


def _build_cli_once() -> None:
    """typer's CliRunner builds the click command tree from the type hints of every command on each invoke
    (about 0.1 s for actsagent's): the tree of ``actsagent.cli.app`` is fixed at import, so build it once."""
    import typer.testing

    from actsagent.cli import app

    build = typer.testing._get_command
    root = functools.cache(lambda: build(app))
    typer.testing._get_command = lambda typer_app: root() if typer_app is app else build(typer_app)


_build_cli_once()


# Files whose tests take seconds each (subprocesses, a Ray cluster, whole corpora), longest first. They run
# first, so that under pytest-xdist the workers share them and none is left running a long test alone at the end.
_LONG_FILES = (
    "test_batch_engine_ray.py",  # on one worker (pytest_xdist_make_scheduler): its Ray cluster starts once
    "test_web_replicas.py",
    "test_cli_hostile.py",
    "test_mcp_server.py",
    "test_web_hostile_corpus.py",
    "test_birdcritic_runner.py",
    "test_web_browser.py",
    "test_relay_flash_replay.py",
    "test_roles.py",
    "test_batch_engine.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(_LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


# Files whose tests share a costly module fixture: under pytest-xdist each goes to one worker whole, so the fixture
# is built once (on two workers it would be built twice).
_ONE_WORKER = (
    "test_batch_engine_ray.py",  # its Ray cluster
    "test_mcp_server.py",  # its stdio server process
    "test_birdcritic_compare.py",  # its three benchmark runs
)


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist, tests go out one at a time in the order above, except that those of each ``_ONE_WORKER``
    file go to one worker together (xdist's own ``loadgroup`` cannot tag them under pytest 9)."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduler(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.rsplit("/", 1)[-1] in _ONE_WORKER else nodeid

    return Scheduler(config, log)


def pytest_sessionfinish(session, exitstatus) -> None:
    """The embedded server outlives its process by design; a test session's own one must not."""
    if not os.environ.get("ACTSAGENT_TEST_HOME"):
        import shutil

        from actsagent.db import embedded

        embedded.stop()
        shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture
def pg_db_factory(pg_admin_url: str) -> Iterator:
    """Create fresh databases on the embedded server (empty or a copy of ``template``), with setup SQL; dropped
    after the test."""
    from actsagent.db import admin
    from actsagent.db.postgres import PostgresDatabase

    made: list[tuple[str, PostgresDatabase]] = []

    def make(setup: list[str] | str = (), *, template: str | None = None, **kwargs) -> PostgresDatabase:
        name = f"t_{uuid.uuid4().hex[:12]}"
        admin.create_database(pg_admin_url, name, template=template)
        url = pg_admin_url.replace("/postgres?", f"/{name}?")  # the URL form the embedded server gives
        stmts = [setup] if isinstance(setup, str) else list(setup)
        if stmts:
            with admin.connect(url) as conn:
                for s in stmts:
                    conn.execute(s)
        db = PostgresDatabase(url, **kwargs)
        made.append((name, db))
        return db

    yield make
    for name, db in made:
        db.close()
        admin.drop_database(pg_admin_url, name)


@pytest.fixture(scope="session")
def shop_template(pg_admin_url: str) -> str:
    """The shop, built once per session; each ``pg_db`` is a fresh copy of it (CREATE DATABASE ... TEMPLATE)."""
    from actsagent.db import admin

    name = f"t_shop_{uuid.uuid4().hex[:8]}"
    admin.create_database(pg_admin_url, name)
    with admin.connect(admin.url_for(pg_admin_url, name)) as conn:
        for s in SHOP_SETUP:
            conn.execute(s)
    return name


@pytest.fixture
def pg_db(pg_db_factory, shop_template):
    """A small shop database on the real embedded server."""
    return pg_db_factory(template=shop_template)


@pytest.fixture(scope="module")
def module_shop(pg_admin_url: str, shop_template: str) -> Iterator:
    """One copy of the shop for a module whose tests only read it: made once, not once a test, and what a first
    use builds in it (the SafeQL value index, a server process's caches) serves the module's later tests too."""
    from actsagent.db import admin
    from actsagent.db.postgres import PostgresDatabase

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin.create_database(pg_admin_url, name, template=shop_template)
    db = PostgresDatabase(admin.url_for(pg_admin_url, name))
    yield db
    db.close()
    admin.drop_database(pg_admin_url, name)


@pytest.fixture
def sqlite_db(tmp_path):
    import sqlite3

    from actsagent.db.sqlite import SqliteDatabase

    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        for s in SHOP_SETUP:
            conn.execute(s.replace("SERIAL", "INTEGER"))
    db = SqliteDatabase(path)
    yield db
    db.close()


SHOP_SETUP = [
    "CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT NOT NULL, country TEXT, created_at DATE)",
    "CREATE TABLE orders (id SERIAL PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
    "status TEXT, total NUMERIC(10,2), ordered_at DATE)",
    "INSERT INTO customers (name, country, created_at) VALUES ('Ada', 'DE', '2024-01-05'), "
    "('Bob', 'US', '2024-02-11'), ('Chloe', 'FR', '2024-03-20')",
    "INSERT INTO orders (customer_id, status, total, ordered_at) VALUES (1, 'paid', 120.50, '2024-04-01'), "
    "(1, 'refunded', 30.00, '2024-04-03'), (2, 'paid', 99.99, '2024-05-10'), (3, 'cancelled', 10.00, '2024-05-11')",
]
