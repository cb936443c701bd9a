"""Split a script into statements by sqlglot's tokenizer, keeping each statement's own text, and read
the keyword a statement starts with.

Used by the sandbox policy: the statements run as written (no regeneration), so the split must
respect strings, quoted names, comments and dollar quotes, which the tokenizer does.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType


def split_statements(sql: str, dialect: str) -> list[str]:
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError:
        return [sql.strip()] if sql.strip() else []
    out: list[str] = []
    start: int | None = None
    end = 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                out.append(sql[start : end + 1].strip())
            start = None
            continue
        if start is None:
            start = tok.start
        end = tok.end
    if start is not None:
        out.append(sql[start : end + 1].strip())
    return [s for s in out if s]


# first keywords of statements that change the database or its settings rather than read it
WRITE_KEYWORDS = frozenset(
    {
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "ALTER",
        "TRUNCATE",
        "GRANT",
        "REVOKE",
        "MERGE",
        "COPY",
        "VACUUM",
        "ATTACH",
        "DETACH",
        "PRAGMA",
        "REPLACE",
    }
)


def first_keyword(sql: str, dialect: str) -> str:
    """The statement's first word, upper-cased, as the tokenizer reads it (comments and opening parentheses
    skipped); "" when there is none. What SQL that no parser reads (broken SQL) says it is."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError:
        words = sql.lstrip("( \t\r\n").split(None, 1)
        return words[0].upper() if words else ""
    return next((t.text.upper() for t in tokens if t.token_type != TokenType.L_PAREN), "")
