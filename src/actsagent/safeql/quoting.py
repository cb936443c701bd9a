"""Identifiers as the catalog spells them: quoted when case, characters or a reserved word require it."""

from __future__ import annotations

from sqlglot import exp

# Words neither engine accepts as a bare column or table name (SQL reserved words). PostgreSQL's own
# list (pg_get_keywords, reserved and type/function-name categories) is added when its catalog is built.
_SQL_RESERVED = frozenset(
    [
        "all",
        "analyse",
        "analyze",
        "and",
        "any",
        "array",
        "as",
        "asc",
        "asymmetric",
        "authorization",
        "between",
        "binary",
        "both",
        "case",
        "cast",
        "check",
        "collate",
        "collation",
        "column",
        "concurrently",
        "constraint",
        "create",
        "cross",
        "current_catalog",
        "current_date",
        "current_role",
        "current_schema",
        "current_time",
        "current_timestamp",
        "current_user",
        "default",
        "deferrable",
        "desc",
        "distinct",
        "do",
        "drop",
        "else",
        "end",
        "escape",
        "except",
        "exists",
        "false",
        "fetch",
        "for",
        "foreign",
        "freeze",
        "from",
        "full",
        "glob",
        "grant",
        "group",
        "having",
        "ilike",
        "in",
        "index",
        "initially",
        "inner",
        "insert",
        "intersect",
        "into",
        "is",
        "isnull",
        "join",
        "lateral",
        "leading",
        "left",
        "like",
        "limit",
        "localtime",
        "localtimestamp",
        "natural",
        "not",
        "notnull",
        "null",
        "offset",
        "on",
        "only",
        "or",
        "order",
        "outer",
        "overlaps",
        "placing",
        "primary",
        "references",
        "regexp",
        "returning",
        "right",
        "select",
        "session_user",
        "similar",
        "some",
        "symmetric",
        "system_user",
        "table",
        "tablesample",
        "then",
        "to",
        "trailing",
        "true",
        "union",
        "unique",
        "user",
        "using",
        "values",
        "variadic",
        "verbose",
        "when",
        "where",
        "window",
        "with",
    ]
)
_RESERVED: dict[str, set[str]] = {"postgres": set(_SQL_RESERVED), "sqlite": set(_SQL_RESERVED)}


def add_reserved(dialect: str, words) -> None:
    """Words the engine itself reports as reserved (its keyword list), quoted from then on."""
    _RESERVED.setdefault(dialect, set(_SQL_RESERVED)).update(w.lower() for w in words)


def needs_quotes(name: str, dialect: str) -> bool:
    """True when ``name`` only reaches the catalog object quoted: not all-lowercase (PostgreSQL folds
    bare names to lowercase), not a plain word, or reserved."""
    if not name.isidentifier() or name.lower() in _RESERVED.get(dialect, _SQL_RESERVED):
        return True
    return dialect != "sqlite" and name != name.lower()


def ident(name: str, dialect: str) -> exp.Identifier:
    """An identifier spelled as the catalog spells it, quoted only when it must be."""
    return exp.to_identifier(name, quoted=needs_quotes(name, dialect))


def spelled_as(written: exp.Identifier | str | None, name: str, dialect: str) -> bool:
    """Whether the identifier as written reaches the catalog object ``name`` on ``dialect``."""
    if written is None:
        return False
    if isinstance(written, str):
        written = exp.to_identifier(written)
    text, quoted = written.this, bool(written.args.get("quoted"))
    if dialect == "sqlite":
        return text.lower() == name.lower() and (quoted or not needs_quotes(name, dialect))
    return (text if quoted else text.lower()) == name and (quoted or name.lower() not in _RESERVED["postgres"])
