"""actsagent: make LLM-written SQL correct and safe."""

from actsagent.db import Database, DbError, ErrorClass, QueryResult, open_database

__all__ = ["Database", "DbError", "ErrorClass", "QueryResult", "open_database"]
__version__ = "0.1.0"
