"""Load a .sql script, a SQLite file or rows into a PostgreSQL database (the embedded one by default)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import psycopg
from psycopg import sql as pgsql
from pydantic import BaseModel
from sqlglot import exp

from actsagent.db import admin
from actsagent.errors import UserError

_SKIP_EXT = re.compile(r"^\s*CREATE\s+EXTENSION\s+IF\s+NOT\s+EXISTS\s+(\w+)\s*;?\s*$", re.I | re.M)


class Loaded(BaseModel):
    """What ``load_embedded`` did: the database, its administrator URL, and what the file held."""

    database: str
    url: str
    skipped_extensions: list[str] = []  # a .sql script: CREATE EXTENSION lines the server cannot honour
    rows: dict[str, int] = {}  # a SQLite file: rows copied per table


def load_embedded(
    path: str | Path,
    name: str,
    *,
    if_exists: Literal["error", "replace", "reuse"] = "error",
    foreign_keys: bool = False,
) -> Loaded:
    """Load a .sql script or a SQLite file into a new database ``name`` on the embedded server.

    An existing database is refused, dropped first (``replace``) or kept as it is (``reuse``). A load that
    fails drops the half-loaded database. The read-only role's grants are refreshed to cover what was loaded.
    """
    from actsagent.db import embedded
    from actsagent.db.roles import reader_url

    p = Path(path)
    if not p.is_file():
        raise UserError(f"file not found: {p}")
    maintenance = embedded.server_url(admin.MAINTENANCE_DB)
    if admin.database_exists(maintenance, name):
        if if_exists == "error":
            raise UserError(f"database {name!r} exists already (use --replace or --name)")
        if if_exists == "reuse":
            return Loaded(database=name, url=embedded.server_url(name))
        admin.drop_database(maintenance, name)
    admin.create_database(maintenance, name)
    url = embedded.server_url(name)
    out = Loaded(database=name, url=url)
    try:
        if p.suffix.lower() == ".sql":
            out.skipped_extensions = load_sql_file(url, p)
        else:
            out.rows = load_sqlite_file(url, p, foreign_keys=foreign_keys)
        reader_url(url, refresh=True)
    except BaseException:
        admin.drop_database(maintenance, name)
        raise
    return out


def load_sql_file(url: str, path: str | Path) -> list[str]:
    """Run a SQL script; CREATE EXTENSION lines for extensions the server lacks are skipped and reported."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"SQL file not found: {p}")
    text = p.read_text(encoding="utf-8", errors="replace")
    have = admin.available_extensions(url)
    skipped = [m.group(1) for m in _SKIP_EXT.finditer(text) if m.group(1).lower() not in have]
    text = _SKIP_EXT.sub(lambda m: "" if m.group(1).lower() not in have else m.group(0), text)
    try:
        admin.run_script(url, text)
    except UserError as e:
        raise UserError(f"loading {p.name} failed: {e}") from e
    return skipped


def load_rows(url: str, ddl: str, data: Mapping[str, Iterable[tuple[Any, ...]]]) -> dict[str, int]:
    """Create tables with ``ddl`` and COPY ``data`` (rows per table) into them, in one transaction, then
    ANALYZE; returns the rows copied per table."""
    counts: dict[str, int] = {}
    with psycopg.connect(url) as conn:
        conn.execute(ddl)
        for table, rows in data.items():
            n = 0
            with conn.cursor().copy(pgsql.SQL("COPY {} FROM STDIN").format(pgsql.Identifier(table))) as cp:
                for r in rows:
                    cp.write_row(r)
                    n += 1
            counts[table] = n
        conn.execute("ANALYZE")
        conn.commit()
    return counts


_TYPE_MAP = [
    ("INT", "bigint"),
    ("CHAR", "text"),
    ("CLOB", "text"),
    ("TEXT", "text"),
    ("BLOB", "bytea"),
    ("REAL", "double precision"),
    ("FLOA", "double precision"),
    ("DOUB", "double precision"),
    ("DATE", "text"),
    ("TIME", "text"),
    ("BOOL", "boolean"),
]


def _pg_type(sqlite_type: str) -> str:
    up = (sqlite_type or "").upper()
    for key, pg in _TYPE_MAP:
        if key in up:
            return pg
    return "numeric" if up.startswith(("NUM", "DEC")) else "text"


def load_sqlite_file(url: str, path: str | Path, *, foreign_keys: bool = False) -> dict[str, int]:
    """Copy every table of a SQLite file into PostgreSQL (types mapped by SQLite affinity, primary keys kept).

    ``foreign_keys`` adds the file's foreign keys too, ``NOT VALID`` (Spider's data do not always satisfy
    their own keys); a key PostgreSQL cannot have (to a missing table, a non-unique column or the implicit
    rowid) is left out."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"SQLite file not found: {p}")
    src = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    src.text_factory = lambda b: b.decode("utf-8", errors="replace")
    counts: dict[str, int] = {}
    try:
        with psycopg.connect(url) as conn:
            tables = [
                r[0]
                for r in src.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
            ]
            for t in tables:
                counts[t] = _copy_table(src, conn, t)
            if foreign_keys:
                for table, frm, ref, to in _foreign_keys(src, tables):
                    _add_foreign_key(conn, table, frm, ref, to)
            conn.commit()
    finally:
        src.close()
    return counts


def _copy_table(src: sqlite3.Connection, conn: psycopg.Connection, table: str) -> int:
    cols = src.execute("SELECT * FROM pragma_table_info(?)", [table]).fetchall()
    types = [_pg_type(c[2]) for c in cols]
    pk = [c[1] for c in sorted(cols, key=lambda c: c[5]) if c[5]]
    defs = [pgsql.SQL("{} {}").format(pgsql.Identifier(c[1]), pgsql.SQL(ty)) for c, ty in zip(cols, types)]
    if pk:
        defs.append(pgsql.SQL("PRIMARY KEY ({})").format(pgsql.SQL(", ").join(map(pgsql.Identifier, pk))))
    conn.execute(pgsql.SQL("CREATE TABLE {} ({})").format(pgsql.Identifier(table), pgsql.SQL(", ").join(defs)))
    n = 0
    with conn.cursor().copy(pgsql.SQL("COPY {} FROM STDIN").format(pgsql.Identifier(table))) as cp:
        for row in src.execute(f"SELECT * FROM {_sqlite_ident(table)}"):
            cp.write_row([_coerce(v, ty) for v, ty in zip(row, types)])
            n += 1
    return n


def _foreign_keys(src: sqlite3.Connection, tables: list[str]) -> list[tuple[str, list[str], str, list[str]]]:
    """(table, from columns, referenced table, referenced columns) for each foreign key of the file."""
    out: list[tuple[str, list[str], str, list[str]]] = []
    for t in tables:
        groups: dict[int, tuple[str, list[str], list[str]]] = {}
        for fid, _seq, ref, frm, to, *_ in src.execute("SELECT * FROM pragma_foreign_key_list(?)", [t]):
            g = groups.setdefault(fid, (ref, [], []))
            g[1].append(frm)
            g[2].append(to)
        out += [(t, frm, ref, to) for ref, frm, to in groups.values()]
    return out


def _add_foreign_key(conn: psycopg.Connection, table: str, frm: list[str], ref: str, to: list[str]) -> None:
    if not all(to):
        return  # a key to the implicit rowid has no PostgreSQL counterpart
    stmt = pgsql.SQL("ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}) NOT VALID").format(
        pgsql.Identifier(table),
        pgsql.SQL(", ").join(map(pgsql.Identifier, frm)),
        pgsql.Identifier(ref),
        pgsql.SQL(", ").join(map(pgsql.Identifier, to)),
    )
    try:
        with conn.transaction():  # a savepoint: a refused key leaves the rest of the load intact
            conn.execute(stmt)
    except psycopg.Error:
        pass  # a key to a missing table or a non-unique column (Spider has both): left out


def _sqlite_ident(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql("sqlite")


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
