"""The names a connected server resolves: its functions, and the columns and relations a query can name.

The guard needs them to tell a column reference from a call: PostgreSQL runs ``t.f`` and ``(x).f`` as
``f(t)`` / ``f(x)`` when there is no column ``f`` (attribute notation). Names are kept as the server
stores them (PostgreSQL folds unquoted names to lower case; SQLite compares without case, so its
names are lower-cased here).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

_RELKINDS = "('r', 'v', 'm', 'f', 'p', 'c')"  # tables, views, matviews, foreign, partitioned, composite types
_QUERIES = {
    "postgres": (
        "SELECT (SELECT array_agg(DISTINCT proname::text) FROM pg_catalog.pg_proc), "
        "(SELECT array_agg(DISTINCT n) FROM (SELECT a.attname::text AS n FROM pg_catalog.pg_attribute a "
        "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
        f"WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN {_RELKINDS} "
        f"UNION SELECT relname::text FROM pg_catalog.pg_class WHERE relkind IN {_RELKINDS}) s)"
    ),
    "sqlite": (
        "SELECT (SELECT json_group_array(DISTINCT lower(name)) FROM pragma_function_list), "
        "(SELECT json_group_array(DISTINCT lower(n)) FROM (SELECT p.name AS n FROM sqlite_master m, "
        "pragma_table_info(m.name) p WHERE m.type IN ('table', 'view') "
        "UNION SELECT name FROM sqlite_master WHERE type IN ('table', 'view')))"
    ),
}


class ServerCatalog(BaseModel, frozen=True):
    functions: frozenset[str]
    columns: frozenset[str]  # column names of every relation, and the relation names themselves


def catalog_query(dialect: str) -> str:
    """One read-only query whose single row is (function names, column and relation names)."""
    return _QUERIES[dialect]


def parse_catalog(row: list[Any]) -> ServerCatalog:
    """The catalog from the row of ``catalog_query`` (arrays on PostgreSQL, JSON text on SQLite)."""
    functions, columns = ([] if v is None else json.loads(v) if isinstance(v, str) else v for v in row)
    return ServerCatalog(functions=frozenset(functions), columns=frozenset(columns))
