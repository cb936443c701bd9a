"""The strict check: parse, refuse anything but one read query, cap the rows, regenerate.

The SQL that runs is generated from the checked tree, never the input text, so tricks that make a
parser and the server disagree (comments, quoting, dollar quotes, unicode escapes) can only change
what *sqlglot* saw, and that is what gets checked. The output is parsed and checked a second time
and must regenerate to itself, so a generator quirk cannot smuggle in a different statement; for
PostgreSQL it is also read by PostgreSQL's own parser (``postgres_parse.py``), which names what the
server will call. Every call is decided by the name written or printed, never by sqlglot's node type.
Text with control characters (a NUL ends the statement early on the server) is refused outright.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from actsagent.guard.functions import AFTER_CALL_SYNTAX, SYNTAX, denied_reason
from actsagent.guard.limit import apply_row_limit
from actsagent.guard.models import GuardedSQL, GuardRejection, Policy
from actsagent.guard.postgres_parse import check_with_postgres_parser
from actsagent.guard.rules import Refused, Rules
from actsagent.guard.split import split_statements

if TYPE_CHECKING:
    from actsagent.db.catalog import ServerCatalog

# Statement nodes refused anywhere in the tree (a data-modifying CTE is an Insert/Update/Delete
# below a Select). Names missing from the installed sqlglot are skipped.
_WRITE_NODES = tuple(
    getattr(exp, n) for n in ("Insert", "Update", "Delete", "Merge", "TruncateTable") if hasattr(exp, n)
)
_OTHER_NODES = tuple(
    getattr(exp, n)
    for n in (
        "Create",
        "Drop",
        "Alter",
        "Command",
        "Copy",
        "Set",
        "Transaction",
        "Commit",
        "Rollback",
        "Use",
        "Pragma",
        "Describe",
        "Grant",
        "Revoke",
        "Analyze",
        "LoadData",
        "Cache",
        "Uncache",
        "Refresh",
        "Kill",
        "Attach",
        "Detach",
        "Show",
        "Summarize",
        "Declare",
        "Execute",
        "Comment",
    )
    if hasattr(exp, n)
)
_ANONYMOUS = tuple(getattr(exp, n) for n in ("Anonymous", "AnonymousAggFunc") if hasattr(exp, n))
_READ_ROOTS = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)
_READ_ONLY_HINT = "write one read-only query: SELECT, WITH ... SELECT, UNION/INTERSECT/EXCEPT of SELECTs, or VALUES"
# C0 and C1 control characters and DEL, except tab, newline, carriage return and form feed; and unpaired
# surrogates, which no encoding carries to the server
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_LITERALS = frozenset(
    {
        TokenType.STRING,
        TokenType.NUMBER,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.NATIONAL_RAW_STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9$]*\Z")
_CAST_OPENERS = frozenset({"cast", "try_cast", "safe_cast"})


class _WarningTrap(logging.Filter):
    """Collects sqlglot's warnings while the guard parses or generates, so a fallback to an opaque
    Command or a feature the generator drops is never silent. Outside the guard, records pass as the
    application's level for the ``sqlglot`` logger says.

    An application that quiets sqlglot (``setLevel(ERROR)``) would otherwise stop the warnings from being
    created at all, and the guard would run a guess: ``arm()`` keeps the logger at WARNING and remembers
    the application's level to apply it here instead."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()
        self.app_level = logging.NOTSET

    def arm(self) -> list[str]:
        logger = logging.getLogger("sqlglot")
        if logger.level > logging.WARNING:
            self.app_level = logger.level
            logger.setLevel(logging.WARNING)  # (setLevel, not assignment: the logger caches its decisions)
        bucket: list[str] = []
        self.local.bucket = bucket
        return bucket

    def filter(self, record: logging.LogRecord) -> bool:
        bucket = getattr(self.local, "bucket", None)
        if bucket is None:
            return record.levelno >= self.app_level
        if record.levelno >= logging.WARNING:
            bucket.append(record.getMessage())
        return False  # the guard turns it into a rejection; no need to print it


_trap = _WarningTrap()
logging.getLogger("sqlglot").addFilter(_trap)


def check_sql(
    sql: str,
    dialect: str,
    policy: Policy | None = None,
    max_rows: int | None = None,
    catalog: ServerCatalog | Callable[[], ServerCatalog | None] | None = None,
) -> GuardedSQL | GuardRejection:
    """Check ``sql`` against ``policy`` (strict by default) for ``dialect`` ("postgres" or "sqlite").

    ``catalog`` (``Database.catalog()``) holds the server's function and column names: with it, a field
    ``t.f`` is refused exactly when the server would run it as a call ``f(t)``. Pass ``Database.catalog``
    itself to read it only when a field needs it.
    Never raises for any SQL: a refusal is a ``GuardRejection`` with a rule code and a reason.
    """
    policy = policy or Policy.strict()
    if dialect not in ("postgres", "sqlite"):
        raise ValueError(f"unsupported dialect {dialect!r}: use 'postgres' or 'sqlite'")
    if not policy.read_only:
        stmts = split_statements(sql, dialect)
        return GuardedSQL(sql=sql, original=sql, dialect=dialect, policy="sandbox", statements=stmts)
    cap = max_rows or policy.max_rows
    rules = Rules(dialect, policy, catalog)
    try:
        if len(sql) > policy.max_sql_chars:
            raise Refused(
                "too_long",
                f"the SQL is {len(sql)} characters long; the limit is {policy.max_sql_chars}; send a shorter query",
            )
        _refuse_control_characters(sql, "the SQL")
        tree, tokens = _parse_one(sql, rules)
        _check_tree(tree, sql, tokens, rules)
        tree, row_limit, action = apply_row_limit(tree, cap)
        functions = sorted({f.name.lower() for f in tree.find_all(*_ANONYMOUS)})
        out = _generate(tree, dialect)  # may transform the tree in place: read it before
        _refuse_control_characters(out, "the regenerated SQL")
        _check_regenerated(out, rules)
        if dialect == "postgres":
            check_with_postgres_parser(out, rules)
    except Refused as r:
        return GuardRejection(
            original=sql, dialect=dialect, rule=r.rule, reason=r.reason, offending=r.offending, position=r.position
        )
    except RecursionError:
        return GuardRejection(
            original=sql,
            dialect=dialect,
            rule="too_complex",
            reason="the query is nested too deeply to check; flatten it (fewer nested parentheses or subqueries)",
        )
    except Exception as e:  # a parser or generator bug on odd input is a refusal, never a crash
        return GuardRejection(
            original=sql,
            dialect=dialect,
            rule="unsupported",
            reason=f"the guard could not check this query (its SQL parser failed with "
            f"{type(e).__name__}); rewrite it with standard syntax",
        )
    return GuardedSQL(
        sql=out,
        original=sql,
        dialect=dialect,
        policy="strict",
        statements=[out],
        row_limit=row_limit,
        limit_action=action,
        functions=functions,
    )


def _refuse_control_characters(text: str, what: str) -> None:
    m = _CONTROL.search(text)
    if m:
        c = ord(m.group())
        code, kind = (f"\\x{c:02x}", "control character") if c < 0x100 else (f"\\u{c:04x}", "unpaired surrogate")
        raise Refused(
            "control_character",
            f"{what} contains the {kind} {code} at position "
            f"{m.start() + 1}; the server may stop reading at it (NUL) or read it "
            "differently; remove it",
            offending=code,
            position=m.start() + 1,
        )


def _parse_one(sql: str, rules: Rules) -> tuple[exp.Expr, list[Token]]:
    """One statement's tree, and the tokens it was parsed from (the call-name check reads them)."""
    dialect = rules.dialect
    if not sql.strip():
        raise Refused("empty", "the SQL is empty; " + _READ_ONLY_HINT)
    warnings = _trap.arm()
    reader, tokens = Dialect.get_or_raise(dialect), []
    try:
        tokens = reader.tokenize(sql)
        trees = reader.parser(error_level=ErrorLevel.RAISE).parse(tokens, sql)
    except ParseError as e:
        _refuse_unreviewed_modelled_call(tokens, reader, rules)
        first = e.errors[0] if e.errors else {}
        where = f" (line {first.get('line')}, column {first.get('col')})" if first.get("line") else ""
        desc = str(first.get("description") or e).splitlines()[0]
        raise Refused(
            "parse",
            f"the SQL does not parse as {dialect}: {desc}{where}; fix the syntax and send one complete statement",
            offending=first.get("highlight") or None,
            position=_position(sql, first),
        ) from e
    except TokenError as e:
        raise Refused(
            "parse",
            f"the SQL cannot be tokenized as {dialect}: {str(e).splitlines()[0]} "
            "(unterminated string, quoted name or comment?)",
        ) from e
    except RecursionError:
        raise
    except Exception as e:  # sqlglot's builders fail on arguments they do not expect (VAR_MAP('a'))
        _refuse_unreviewed_modelled_call(tokens, reader, rules)
        raise Refused(
            "unsupported",
            f"the guard's SQL parser failed on this query ({type(e).__name__}); rewrite it with standard syntax",
        ) from e
    finally:
        _trap.local.bucket = None
    stmts = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if not stmts:
        raise Refused("empty", "the SQL has no statement (only comments or semicolons); " + _READ_ONLY_HINT)
    if len(stmts) > 1:
        kinds = ", ".join(_kind(s) for s in stmts[:5]) + (", ..." if len(stmts) > 5 else "")
        raise Refused(
            "multiple_statements",
            f"only one read-only statement is allowed; found {len(stmts)} "
            f"statements ({kinds}); send a single query without ';' between "
            "statements",
            offending=kinds,
        )
    tree = stmts[0]
    if isinstance(tree, exp.Command):
        kind = _kind(tree)
        raise Refused("not_read_only", f"{kind} statements are not allowed; " + _READ_ONLY_HINT, offending=kind)
    if warnings:  # sqlglot parsed it but said it skipped or guessed something: do not run a guess
        raise Refused(
            "parse",
            f"the SQL uses syntax the guard cannot check ({warnings[0][:200]}); rewrite it with standard syntax",
        )
    return tree, tokens


def _refuse_unreviewed_modelled_call(tokens: list[Token], reader: Dialect, rules: Rules) -> None:
    """When sqlglot cannot build a query, the usual cause is a function it models from another dialect called
    with arguments it does not expect (SECRET(1)): name that function rather than sqlglot's complaint."""
    parser = reader.parser_class
    for name in _called_names(tokens, SYNTAX[rules.dialect]):
        if name.upper() in parser.FUNCTIONS or name.upper() in parser.FUNCTION_PARSERS:
            rules.call(name)


def _position(sql: str, error: dict) -> int | None:
    """1-based offset of the token sqlglot complains about (it reports the token's last line and column)."""
    line, col, token = error.get("line"), error.get("col"), error.get("highlight") or ""
    if not isinstance(line, int) or not isinstance(col, int) or line < 1:
        return None
    start = sum(len(x) + 1 for x in sql.split("\n")[: line - 1]) + col - len(token) + 1
    return start if 1 <= start <= len(sql) else None


def _generate(tree: exp.Expr, dialect: str) -> str:
    """SQL from the tree; a feature the dialect's generator cannot print is a refusal, not a warning."""
    warnings = _trap.arm()
    try:
        out = tree.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE, copy=False)
    except SqlglotError as e:
        raise Refused(
            "roundtrip",
            f"the guard cannot regenerate this query for {dialect}: {str(e).splitlines()[0]}; simplify the query",
        ) from e
    finally:
        _trap.local.bucket = None
    if warnings:
        raise Refused(
            "roundtrip", f"the guard cannot regenerate this query for {dialect}: {warnings[0]}; simplify the query"
        )
    return out


def _check_tree(tree: exp.Expr, text: str, tokens: list[Token], rules: Rules) -> None:
    """Statement kind, clauses, relations, calls and fields of one parsed statement; ``text`` is what it was
    parsed from (node positions point into it)."""
    root = tree
    while isinstance(root, exp.Subquery):
        root = root.this
    if not isinstance(root, _READ_ROOTS):
        kind = _kind(tree)
        if not _is_statement(root):
            raise Refused(
                "not_read_only",
                f"the SQL is not a query but a bare expression ({kind}); " + _READ_ONLY_HINT,
                offending=kind,
            )
        raise Refused("not_read_only", f"{kind} statements are not allowed; " + _READ_ONLY_HINT, offending=kind)
    aliases: Counter[str] = Counter()  # t in "WITH t(a) AS" / "AS t(a)": a name before "(" that is no call
    for node in tree.walk():
        if isinstance(node, _WRITE_NODES):
            kind = _kind(node)
            raise Refused(
                "write",
                f"the query contains {kind}: data-modifying statements are not allowed "
                "anywhere, including inside WITH (common table expressions); " + _READ_ONLY_HINT,
                offending=kind,
            )
        if isinstance(node, _OTHER_NODES):
            kind = _kind(node)
            raise Refused(
                "not_read_only", f"the query contains {kind}, which is not allowed; " + _READ_ONLY_HINT, offending=kind
            )
        if isinstance(node, exp.Lock) or (isinstance(node, exp.Select) and node.args.get("locks")):
            raise Refused(
                "row_lock",
                "row locks (FOR UPDATE / FOR SHARE / FOR NO KEY UPDATE / FOR KEY SHARE) "
                "are not allowed; remove the locking clause",
                offending="FOR UPDATE/SHARE",
            )
        if isinstance(node, exp.Select) and node.args.get("into"):
            raise Refused(
                "select_into",
                "SELECT ... INTO creates a table and is not allowed; remove the INTO "
                "clause and select the rows instead",
                offending="INTO",
            )
        if isinstance(node, exp.Into):
            raise Refused("select_into", "INTO is not allowed; select the rows instead", offending="INTO")
        if isinstance(node, exp.Func):
            _check_function(node, text, rules)
        elif isinstance(node, exp.Column):
            _check_column(node, rules)
        elif isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            field = node.expression
            rules.field(field.name, _fold(field, rules.dialect), True, f"(...).{field.name}")
        elif isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            rules.relation(node.db, node.name)
        elif isinstance(node, exp.TableAlias) and node.args.get("columns"):
            aliases[node.name.lower()] += 1
        elif not isinstance(node, exp.Identifier) and (written := _written_name(node, text)):
            rules.call(written, written=True)  # LIKE(a, b) and MOD(a, b) become operators: still a call written
    for name in _called_names(tokens, SYNTAX[rules.dialect]):
        if aliases[name] > 0:
            aliases[name] -= 1
        else:
            rules.call(name)


def _check_function(node: exp.Func, text: str, rules: Rules) -> None:
    """A call is decided by the name written, not by the node type sqlglot made of it: SECRET(...) from
    another dialect is a typed node, yet the server would call a function named secret."""
    anonymous = isinstance(node, _ANONYMOUS)
    if not anonymous:
        for n in (node.key, *type(node).sql_names()):
            if denied_reason(n):
                rules.call(n)
    name = node.name if anonymous else _written_name(node, text)
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        shown = name or (type(node).sql_names() or [node.key])[0]
        rules.qualifier(".".join(i.name for i in parent.this.find_all(exp.Identifier)), shown)
    if name is None:  # SQL syntax (CAST, CASE, EXTRACT(... FROM ...), operators): the token and parser checks see it
        return
    rules.call(name, written=not anonymous)
    if name.lower() == "current_setting":
        args = node.expressions if anonymous else [a for a in node.args.values() if isinstance(a, exp.Expr)]
        first = args[0] if args else None
        literal = first.name if isinstance(first, exp.Literal) and first.is_string else None
        rules.setting(literal, len(args) > 2 or (len(args) == 2 and not isinstance(args[1], exp.Boolean)))


def _written_name(node: exp.Expr, text: str) -> str | None:
    """The name as written when sqlglot built ``node`` from a call ``name(...)`` (it records the name's span;
    literals carry a span too, but no "(" follows them)."""
    start, end = node.meta.get("start"), node.meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    if not isinstance(node, exp.Func) and not text[end + 1 : end + 200].lstrip().startswith("("):
        return None
    return text[start : end + 1].strip('"`[]').lower()


def _check_column(node: exp.Column, rules: Rules) -> None:
    """``a.b.c``: every part after the first may name a function PostgreSQL calls on what precedes it."""
    parts = node.parts
    for part in parts[1:]:
        if isinstance(part, exp.Identifier):
            rules.field(part.name, _fold(part, rules.dialect), False, ".".join(p.name for p in parts))


def _fold(ident: exp.Identifier, dialect: str) -> str:
    """The name as the server compares it: PostgreSQL keeps a quoted name's case; SQLite ignores case."""
    return ident.name if ident.quoted and dialect == "postgres" else ident.name.lower()


def _called_names(tokens: list[Token], syntax: frozenset[str]) -> Iterator[str]:
    """Every name followed by "(" that is not grammar (IN (, FILTER(, ...) or a type (CAST(x AS numeric(10, 2)),
    x::varchar(5)): the functions the statement calls, however sqlglot models them."""
    frames: list[list] = []  # one per open "(": [the word before it, AS seen inside a CAST]
    last = len(tokens) - 1
    for i, tok in enumerate(tokens):
        kind = tok.token_type
        if kind == TokenType.L_PAREN:
            frames.append([tokens[i - 1].text.lower() if i else "", False])
            continue
        if kind == TokenType.R_PAREN:
            if frames:
                frames.pop()
            continue
        if kind == TokenType.ALIAS and frames and frames[-1][0] in _CAST_OPENERS:
            frames[-1][1] = True
            continue
        if i == last or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        name = tok.text.lower()
        if kind != TokenType.IDENTIFIER and (
            kind in _LITERALS
            or name in syntax
            or not _NAME.match(name)
            or (name in AFTER_CALL_SYNTAX and i and tokens[i - 1].token_type == TokenType.R_PAREN)
        ):
            continue
        if any(cast_as for _, cast_as in frames) or _after_cast_operator(tokens, i):
            continue
        yield name


def _after_cast_operator(tokens: list[Token], i: int) -> bool:
    """``x::numeric(10, 2)`` or ``x::character varying(5)``: a type, not a call."""
    return tokens[i - 1].token_type == TokenType.DCOLON or (
        i > 1 and tokens[i - 2].token_type == TokenType.DCOLON and bool(_NAME.match(tokens[i - 1].text))
    )


def _check_regenerated(out: str, rules: Rules) -> None:
    """The SQL that will run must parse to one statement that passes the same checks and regenerates to itself."""
    try:
        again, tokens = _parse_one(out, rules)
        _check_tree(again, out, tokens, rules)
    except Refused as r:
        if r.rule in ("parse", "empty", "multiple_statements"):
            raise Refused(
                "roundtrip", f"the guard could not regenerate this query faithfully ({r.reason}); simplify the query"
            ) from r
        raise Refused(r.rule, f"{r.reason} (in the SQL the guard regenerated: {out[:300]})", r.offending) from r
    if _generate(again, rules.dialect) != out:
        raise Refused(
            "roundtrip",
            "the guard could not regenerate this query faithfully; simplify the query "
            "(unusual syntax, quoting or escapes)",
        )


def _is_statement(node: exp.Expr) -> bool:
    return isinstance(node, (exp.Command, *_WRITE_NODES, *_OTHER_NODES, exp.Alias, exp.DDL))


def _kind(node: exp.Expr) -> str:
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
