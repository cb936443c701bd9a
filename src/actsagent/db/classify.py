"""Turn engine errors into ``ErrorClass`` plus the offending identifier.

PostgreSQL gives SQLSTATEs; SQLite only gives messages, so both are read.
"""

from __future__ import annotations

import re

from actsagent.db.results import ErrorClass

_PG_STATES: dict[str, ErrorClass] = {
    "42601": ErrorClass.SYNTAX,
    "42P01": ErrorClass.UNKNOWN_RELATION,
    "3F000": ErrorClass.UNKNOWN_RELATION,  # invalid schema name
    "42703": ErrorClass.UNKNOWN_COLUMN,
    "42883": ErrorClass.UNKNOWN_FUNCTION,
    "42725": ErrorClass.UNKNOWN_FUNCTION,  # ambiguous function
    "42702": ErrorClass.AMBIGUOUS_COLUMN,
    "42804": ErrorClass.TYPE_MISMATCH,
    "42846": ErrorClass.TYPE_MISMATCH,
    "22P02": ErrorClass.TYPE_MISMATCH,
    "22007": ErrorClass.TYPE_MISMATCH,
    "22008": ErrorClass.TYPE_MISMATCH,
    "57014": ErrorClass.TIMEOUT,
    "42501": ErrorClass.PERMISSION_DENIED,
    "25006": ErrorClass.PERMISSION_DENIED,  # read-only transaction
    "53000": ErrorClass.RESOURCE_LIMIT,  # insufficient resources
    "53100": ErrorClass.RESOURCE_LIMIT,  # disk full
    "53200": ErrorClass.RESOURCE_LIMIT,  # out of memory
    "53400": ErrorClass.RESOURCE_LIMIT,  # configuration limit exceeded: temp_file_limit
    "54000": ErrorClass.RESOURCE_LIMIT,  # program limit exceeded: a value over 1 GB
}

_PG_IDENT = [
    re.compile(r'relation "([^"]+)" does not exist'),
    re.compile(r'schema "([^"]+)" does not exist'),
    re.compile(r'column "([^"]+)" does not exist'),
    re.compile(r'column ([\w$]+\.[\w$"]+) does not exist'),
    re.compile(r'column reference "([^"]+)" is ambiguous'),
    re.compile(r"function ([\w.$\"]+)\("),
    re.compile(r"operator does not exist: (.+)$"),
    re.compile(r'missing FROM-clause entry for table "([^"]+)"'),
    re.compile(r'syntax error at or near "([^"]*)"'),
    re.compile(r"permission denied for (?:table|relation|function|schema) (\S+)"),
    re.compile(r'invalid input syntax for type \w+: "([^"]*)"'),
]


def classify_postgres(sqlstate: str | None, message: str) -> tuple[ErrorClass, str | None]:
    cls = _PG_STATES.get(sqlstate or "", ErrorClass.OTHER)
    if sqlstate == "42P01" and "missing FROM-clause" in message:
        cls = ErrorClass.UNKNOWN_COLUMN  # a qualifier names a table absent from FROM
    if sqlstate == "42883" and message.startswith("operator does not exist"):
        cls = ErrorClass.TYPE_MISMATCH
    return cls, _first_match(_PG_IDENT, message)


_SQLITE_RULES: list[tuple[re.Pattern[str], ErrorClass]] = [
    (re.compile(r"no such table: (\S+)"), ErrorClass.UNKNOWN_RELATION),
    (re.compile(r"no such column: (\S+)"), ErrorClass.UNKNOWN_COLUMN),
    (re.compile(r"no such function: (\S+)"), ErrorClass.UNKNOWN_FUNCTION),
    (re.compile(r"wrong number of arguments to function (\w+)"), ErrorClass.UNKNOWN_FUNCTION),
    (re.compile(r"ambiguous column name: (\S+)"), ErrorClass.AMBIGUOUS_COLUMN),
    (re.compile(r'near "([^"]*)": syntax error'), ErrorClass.SYNTAX),
    (re.compile(r"(incomplete input|unrecognized token: .*|syntax error)"), ErrorClass.SYNTAX),
    (re.compile(r"(one statement at a time)"), ErrorClass.SYNTAX),
    (re.compile(r"(interrupted)"), ErrorClass.TIMEOUT),
    (re.compile(r"(attempt to write a readonly database|not authorized)"), ErrorClass.PERMISSION_DENIED),
    (re.compile(r"(datatype mismatch)"), ErrorClass.TYPE_MISMATCH),
    (re.compile(r"(string or blob too big)"), ErrorClass.RESOURCE_LIMIT),
]


def classify_sqlite(message: str) -> tuple[ErrorClass, str | None]:
    for pattern, cls in _SQLITE_RULES:
        m = pattern.search(message)
        if m:
            ident = (
                m.group(1)
                if cls not in (ErrorClass.TIMEOUT, ErrorClass.PERMISSION_DENIED, ErrorClass.RESOURCE_LIMIT)
                else None
            )
            if cls is ErrorClass.SYNTAX and ident in ("incomplete input", "syntax error", "one statement at a time"):
                ident = None
            return cls, ident
    return ErrorClass.OTHER, None


def _first_match(patterns: list[re.Pattern[str]], message: str) -> str | None:
    for p in patterns:
        m = p.search(message)
        if m:
            return m.group(1)
    return None
