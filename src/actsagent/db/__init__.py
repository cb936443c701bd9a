"""Databases behind one typed interface: PostgreSQL (pooled, or embedded) and SQLite files."""

from actsagent.db.base import Database, Dialect
from actsagent.db.connect import open_database, open_embedded
from actsagent.db.results import Column, DbError, ErrorClass, ExecResult, QueryResult

__all__ = [
    "Column",
    "Database",
    "DbError",
    "Dialect",
    "ErrorClass",
    "ExecResult",
    "QueryResult",
    "open_database",
    "open_embedded",
]
