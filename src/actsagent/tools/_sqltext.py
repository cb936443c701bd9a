"""One way to show SQL to a model, in every prompt: each statement ends with ";", lists are numbered.

Prompts used to differ (joined with ";" for the planner and judge, with newlines only for the
fixers), so a model could not tell one statement with line breaks from several statements. The
answer format is fixed in the ``_sql_answer.md`` partial: one JSON string for a single query, a
JSON array of statements (no trailing ";") for a list.
"""

from __future__ import annotations


def _bare(stmt: str) -> str:
    return stmt.strip().rstrip(";").rstrip()


def statements_text(sql: str | list[str] | None) -> str:
    """A single statement as ``SQL;``; a list as ``-- statement i of n`` headers, each ``SQL;``."""
    if sql is None:
        return ""
    stmts = [_bare(s) for s in ([sql] if isinstance(sql, str) else sql) if s and s.strip()]
    if not stmts:
        return ""
    if len(stmts) == 1:
        return stmts[0] + ";"
    n = len(stmts)
    return "\n".join(f"-- statement {i} of {n}\n{s};" for i, s in enumerate(stmts, 1))


def split_script(sql: str | list[str], dialect: str) -> list[str]:
    """The statements of a list, or of a script string (split by the guard's tokenizer-based splitter)."""
    if isinstance(sql, list):
        return [_bare(s) for s in sql if s and s.strip()]
    from actsagent.guard.split import split_statements

    return [_bare(s) for s in split_statements(sql, dialect)] or ([sql] if sql.strip() else [])


def is_statement_list(sql: str | list[str] | None) -> bool:
    """True when the SQL holds several statements: the answer must then be a JSON array."""
    return isinstance(sql, list) and len([s for s in sql if s and s.strip()]) > 1


QUERY_KEYWORDS = ("SELECT", "WITH", "VALUES", "TABLE")


def is_query(sql: str, dialect: str) -> bool:
    """True when the statement is a query (its first keyword, as the guard's tokenizer reads it)."""
    from actsagent.guard.split import first_keyword

    return first_keyword(sql, dialect) in QUERY_KEYWORDS


def is_read(sql: str, dialect: str) -> bool:
    """True when the statement only reads: a query, EXPLAIN or SHOW."""
    from actsagent.guard.split import first_keyword

    return first_keyword(sql, dialect) in (*QUERY_KEYWORDS, "EXPLAIN", "SHOW")
