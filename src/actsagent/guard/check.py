"""The strict check: parse, refuse anything but one read query, cap the rows, regenerate.

The SQL that runs is generated from the checked tree, never the input text, so tricks that make a
parser and the server disagree (comments, quoting, dollar quotes, unicode escapes) can only change
what *sqlglot* saw, and that is what gets checked. The output is parsed and checked a second time
and must regenerate to itself, so a generator quirk cannot smuggle in a different statement.
"""

from __future__ import annotations

import logging
import threading

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError

from actsagent.guard.functions import DENIED_RELATIONS, denied_reason, is_allowed
from actsagent.guard.limit import apply_row_limit
from actsagent.guard.models import GuardedSQL, GuardRejection, Policy
from actsagent.guard.split import split_statements

# Statement nodes refused anywhere in the tree (a data-modifying CTE is an Insert/Update/Delete
# below a Select). Names missing from the installed sqlglot are skipped.
_WRITE_NODES = tuple(getattr(exp, n) for n in ("Insert", "Update", "Delete", "Merge", "TruncateTable")
                     if hasattr(exp, n))
_OTHER_NODES = tuple(getattr(exp, n) for n in (
    "Create", "Drop", "Alter", "Command", "Copy", "Set", "Transaction", "Commit", "Rollback", "Use",
    "Pragma", "Describe", "Grant", "Revoke", "Analyze", "LoadData", "Cache", "Uncache", "Refresh", "Kill",
    "Attach", "Detach", "Show", "Summarize", "Declare", "Execute", "Comment") if hasattr(exp, n))
_ANONYMOUS = tuple(getattr(exp, n) for n in ("Anonymous", "AnonymousAggFunc") if hasattr(exp, n))
_READ_ROOTS = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)
_READ_ONLY_HINT = ("write one read-only query: SELECT, WITH ... SELECT, UNION/INTERSECT/EXCEPT of SELECTs, "
                   "or VALUES")


class _WarningTrap(logging.Filter):
    """Collects sqlglot's warnings while the guard parses or generates, so a fallback to an opaque
    Command or a feature the generator drops is never silent. Outside the guard, records pass unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        bucket = getattr(self.local, "bucket", None)
        if bucket is None:
            return True
        if record.levelno >= logging.WARNING:
            bucket.append(record.getMessage())
        return False  # the guard turns it into a rejection; no need to print it


_trap = _WarningTrap()
logging.getLogger("sqlglot").addFilter(_trap)


class _Refused(Exception):
    def __init__(self, rule: str, reason: str, offending: str | None = None, position: int | None = None) -> None:
        super().__init__(reason)
        self.rule, self.reason, self.offending, self.position = rule, reason, offending, position


def check_sql(sql: str, dialect: str, policy: Policy | None = None,
              max_rows: int | None = None) -> GuardedSQL | GuardRejection:
    """Check ``sql`` against ``policy`` (strict by default) for ``dialect`` ("postgres" or "sqlite").

    Never raises for bad SQL: a refusal is a ``GuardRejection`` with a rule code and a reason.
    """
    policy = policy or Policy.strict()
    if dialect not in ("postgres", "sqlite"):
        raise ValueError(f"unsupported dialect {dialect!r}: use 'postgres' or 'sqlite'")
    if policy.name == "sandbox":
        stmts = split_statements(sql, dialect)
        return GuardedSQL(sql=sql, original=sql, dialect=dialect, policy="sandbox", statements=stmts)
    cap = max_rows or policy.max_rows
    try:
        if len(sql) > policy.max_sql_chars:
            raise _Refused("too_long", f"the SQL is {len(sql)} characters long; the limit is "
                                       f"{policy.max_sql_chars}; send a shorter query")
        tree = _parse_one(sql, dialect)
        _check_tree(tree, dialect, policy)
        tree, row_limit, action = apply_row_limit(tree, cap)
        out = _generate(tree, dialect)
        _check_regenerated(out, dialect, policy)
    except _Refused as r:
        return GuardRejection(original=sql, dialect=dialect, rule=r.rule, reason=r.reason, offending=r.offending,
                              position=r.position)
    except RecursionError:
        return GuardRejection(original=sql, dialect=dialect, rule="too_complex",
                              reason="the query is nested too deeply to check; flatten it (fewer nested "
                                     "parentheses or subqueries)")
    functions = sorted({f.name.lower() for f in tree.find_all(*_ANONYMOUS)})
    return GuardedSQL(sql=out, original=sql, dialect=dialect, policy="strict", statements=[out],
                      row_limit=row_limit, limit_action=action, functions=functions)


def _parse_one(sql: str, dialect: str) -> exp.Expression:
    if not sql.strip():
        raise _Refused("empty", "the SQL is empty; " + _READ_ONLY_HINT)
    _trap.local.bucket = warnings = []
    try:
        trees = sqlglot.parse(sql, read=dialect, error_level=ErrorLevel.RAISE)
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        where = f" (line {first.get('line')}, column {first.get('col')})" if first.get("line") else ""
        desc = str(first.get("description") or e).splitlines()[0]
        raise _Refused("parse", f"the SQL does not parse as {dialect}: {desc}{where}; "
                                "fix the syntax and send one complete statement",
                       offending=first.get("highlight") or None, position=_position(sql, first)) from e
    except TokenError as e:
        raise _Refused("parse", f"the SQL cannot be tokenized as {dialect}: {str(e).splitlines()[0]} "
                                "(unterminated string, quoted name or comment?)") from e
    finally:
        _trap.local.bucket = None
    stmts = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if not stmts:
        raise _Refused("empty", "the SQL has no statement (only comments or semicolons); " + _READ_ONLY_HINT)
    if len(stmts) > 1:
        kinds = ", ".join(_kind(s) for s in stmts[:5]) + (", ..." if len(stmts) > 5 else "")
        raise _Refused("multiple_statements", f"only one read-only statement is allowed; found {len(stmts)} "
                                              f"statements ({kinds}); send a single query without ';' between "
                                              "statements", offending=kinds)
    tree = stmts[0]
    if isinstance(tree, exp.Command):
        kind = _kind(tree)
        raise _Refused("not_read_only", f"{kind} statements are not allowed; " + _READ_ONLY_HINT, offending=kind)
    if warnings:  # sqlglot parsed it but said it skipped or guessed something: do not run a guess
        raise _Refused("parse", f"the SQL uses syntax the guard cannot check ({warnings[0][:200]}); "
                                "rewrite it with standard syntax")
    return tree


def _position(sql: str, error: dict) -> int | None:
    """1-based offset of the token sqlglot complains about (it reports the token's last line and column)."""
    line, col, token = error.get("line"), error.get("col"), error.get("highlight") or ""
    if not isinstance(line, int) or not isinstance(col, int) or line < 1:
        return None
    start = sum(len(x) + 1 for x in sql.split("\n")[:line - 1]) + col - len(token) + 1
    return start if 1 <= start <= len(sql) else None


def _generate(tree: exp.Expression, dialect: str) -> str:
    """SQL from the tree; a feature the dialect's generator cannot print is a refusal, not a warning."""
    _trap.local.bucket = warnings = []
    try:
        out = tree.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as e:
        raise _Refused("roundtrip", f"the guard cannot regenerate this query for {dialect}: "
                                    f"{str(e).splitlines()[0]}; simplify the query") from e
    finally:
        _trap.local.bucket = None
    if warnings:
        raise _Refused("roundtrip", f"the guard cannot regenerate this query for {dialect}: {warnings[0]}; "
                                    "simplify the query")
    return out


def _check_tree(tree: exp.Expression, dialect: str, policy: Policy) -> None:
    root = tree
    while isinstance(root, exp.Subquery):
        root = root.this
    if not isinstance(root, _READ_ROOTS):
        kind = _kind(tree)
        if not _is_statement(root):
            raise _Refused("not_read_only", f"the SQL is not a query but a bare expression ({kind}); "
                                            + _READ_ONLY_HINT, offending=kind)
        raise _Refused("not_read_only", f"{kind} statements are not allowed; " + _READ_ONLY_HINT, offending=kind)
    for node in tree.walk():
        if isinstance(node, _WRITE_NODES):
            kind = _kind(node)
            raise _Refused("write", f"the query contains {kind}: data-modifying statements are not allowed "
                                    "anywhere, including inside WITH (common table expressions); "
                                    + _READ_ONLY_HINT, offending=kind)
        if isinstance(node, _OTHER_NODES):
            kind = _kind(node)
            raise _Refused("not_read_only", f"the query contains {kind}, which is not allowed; "
                                            + _READ_ONLY_HINT, offending=kind)
        if isinstance(node, exp.Lock) or (isinstance(node, exp.Select) and node.args.get("locks")):
            raise _Refused("row_lock", "row locks (FOR UPDATE / FOR SHARE / FOR NO KEY UPDATE / FOR KEY SHARE) "
                                       "are not allowed; remove the locking clause", offending="FOR UPDATE/SHARE")
        if isinstance(node, exp.Select) and node.args.get("into"):
            raise _Refused("select_into", "SELECT ... INTO creates a table and is not allowed; remove the INTO "
                                          "clause and select the rows instead", offending="INTO")
        if isinstance(node, exp.Into):
            raise _Refused("select_into", "INTO is not allowed; select the rows instead", offending="INTO")
        if isinstance(node, exp.Func):
            _check_function(node, dialect, policy)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            name = node.name.lower()
            if name in DENIED_RELATIONS and (node.db or "pg_catalog").lower() in ("pg_catalog", "main"):
                raise _Refused("denied_relation", f"reading {name} is not allowed: {DENIED_RELATIONS[name]}; "
                                                  "query the application's tables instead", offending=name)


def _check_function(node: exp.Func, dialect: str, policy: Policy) -> None:
    anonymous = isinstance(node, _ANONYMOUS)
    names = [node.name] if anonymous else [node.key, *type(node).sql_names()]
    shown = node.name if anonymous else type(node).sql_names()[0] if type(node).sql_names() else node.key
    for n in names:
        why = denied_reason(str(n))
        if why:
            raise _Refused("denied_function", f"function {str(n).lower()}() is not allowed: {why}; "
                                              "compute the result with plain SQL instead", offending=str(n).lower())
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        qualifier = ".".join(i.name for i in parent.this.find_all(exp.Identifier)).lower()
        if qualifier not in policy.function_schemas:
            allowed = ", ".join(sorted(policy.function_schemas)) or "none"
            raise _Refused("qualified_function",
                           f"function {qualifier}.{str(shown).lower()}() is schema-qualified; only built-in "
                           f"functions are allowed (qualifiers allowed: {allowed}); call it without the schema "
                           "or use a built-in function", offending=f"{qualifier}.{str(shown).lower()}")
    if anonymous and not is_allowed(node.name, dialect, policy.extra_functions):
        raise _Refused("unknown_function",
                       f"function {node.name.lower()}() is not on the reviewed list of {dialect} functions; "
                       "use standard SQL functions (COUNT, SUM, CAST, SUBSTR, CASE, ...) instead",
                       offending=node.name.lower())


def _check_regenerated(out: str, dialect: str, policy: Policy) -> None:
    """The SQL that will run must parse to one statement that passes the same checks and regenerates to itself."""
    try:
        again = _parse_one(out, dialect)
        _check_tree(again, dialect, policy)
    except _Refused as r:
        raise _Refused("roundtrip", "the guard could not regenerate this query faithfully "
                                    f"({r.reason}); simplify the query") from r
    if _generate(again, dialect) != out:
        raise _Refused("roundtrip", "the guard could not regenerate this query faithfully; simplify the query "
                                    "(unusual syntax, quoting or escapes)")


def _is_statement(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Command, *_WRITE_NODES, *_OTHER_NODES, exp.Alias)) or isinstance(node, exp.DDL)


def _kind(node: exp.Expression) -> str:
    """A readable statement kind: INSERT, DROP, EXPLAIN, SET, ..."""
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Alias) and isinstance(node.this, exp.Column):
        return node.this.name.upper()  # LISTEN x / NOTIFY x parse as a column with an alias
    if isinstance(node, exp.Column):
        return node.name.upper()
    if isinstance(node, exp.Subquery):
        return _kind(node.this)
    if isinstance(node, exp.Create):
        return f"CREATE {node.args.get('kind') or ''}".strip()
    if isinstance(node, exp.Drop):
        return f"DROP {node.args.get('kind') or ''}".strip()
    if isinstance(node, exp.TruncateTable):
        return "TRUNCATE"
    if isinstance(node, exp.SetOperation):
        return "SELECT"
    return node.key.upper()
