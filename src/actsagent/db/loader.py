"""Load a .sql script or a SQLite file into a PostgreSQL database (the embedded one by default)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import psycopg
from psycopg import sql as pgsql

from actsagent.errors import UserError

_SKIP_EXT = re.compile(r"^\s*CREATE\s+EXTENSION\s+IF\s+NOT\s+EXISTS\s+(\w+)\s*;?\s*$", re.I | re.M)


def available_extensions(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM pg_available_extensions")}


def load_sql_file(url: str, path: str | Path) -> list[str]:
    """Run a SQL script; CREATE EXTENSION lines for extensions the server lacks are skipped and reported."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"SQL file not found: {p}")
    text = p.read_text(encoding="utf-8", errors="replace")
    have = available_extensions(url)
    skipped = [m.group(1) for m in _SKIP_EXT.finditer(text) if m.group(1).lower() not in have]
    text = _SKIP_EXT.sub(lambda m: "" if m.group(1).lower() not in have else m.group(0), text)
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute(text.encode("utf-8"))  # simple protocol: a whole script in one round trip
        except psycopg.Error as e:
            raise UserError(f"loading {p.name} failed: {e.diag.message_primary or e}") from e
    return skipped


_TYPE_MAP = [("INT", "bigint"), ("CHAR", "text"), ("CLOB", "text"), ("TEXT", "text"), ("BLOB", "bytea"),
             ("REAL", "double precision"), ("FLOA", "double precision"), ("DOUB", "double precision"),
             ("DATE", "text"), ("TIME", "text"), ("BOOL", "boolean")]


def _pg_type(sqlite_type: str) -> str:
    up = (sqlite_type or "").upper()
    for key, pg in _TYPE_MAP:
        if key in up:
            return pg
    return "numeric" if up.startswith(("NUM", "DEC")) else "text"


def load_sqlite_file(url: str, path: str | Path) -> dict[str, int]:
    """Copy every table of a SQLite file into PostgreSQL (types mapped by SQLite affinity)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"SQLite file not found: {p}")
    src = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    src.text_factory = lambda b: b.decode("utf-8", errors="replace")
    counts: dict[str, int] = {}
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                            "AND name NOT LIKE 'sqlite_%'")]
        for t in tables:
            cols = src.execute(f'PRAGMA table_info("{t}")').fetchall()
            types = [_pg_type(c[2]) for c in cols]
            pk = [c[1] for c in sorted(cols, key=lambda c: c[5]) if c[5]]
            defs = [pgsql.SQL("{} {}").format(pgsql.Identifier(c[1]), pgsql.SQL(ty)) for c, ty in zip(cols, types)]
            if pk:
                defs.append(pgsql.SQL("PRIMARY KEY ({})").format(pgsql.SQL(", ").join(map(pgsql.Identifier, pk))))
            conn.execute(pgsql.SQL("CREATE TABLE {} ({})").format(pgsql.Identifier(t), pgsql.SQL(", ").join(defs)))
            n = 0
            with conn.cursor().copy(pgsql.SQL("COPY {} FROM STDIN").format(pgsql.Identifier(t))) as cp:
                for row in src.execute(f'SELECT * FROM "{t}"'):
                    cp.write_row([_coerce(v, ty) for v, ty in zip(row, types)])
                    n += 1
            counts[t] = n
        conn.commit()
    src.close()
    return counts


def _coerce(v, pg_type: str):
    if v is None:
        return None
    if pg_type == "bigint" and not isinstance(v, int):
        try:
            return int(float(v))
        except (TypeError, ValueError):
            return None
    if pg_type == "double precision" and not isinstance(v, (int, float)):
        try:
            return float(v)
        except (TypeError, ValueError):
            return None
    if pg_type == "text" and not isinstance(v, str):
        return str(v)
    if pg_type == "boolean":
        return bool(v)
    return v
