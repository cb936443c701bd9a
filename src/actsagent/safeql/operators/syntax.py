"""Syntax salvage: LLM output often wraps one good SELECT in markdown, chat, a second statement or a
run-on repetition. Cut the text down to the longest leading SELECT that parses; never invent SQL."""

from __future__ import annotations

import re

import sqlglot
from sqlglot.tokens import TokenType

from actsagent.safeql.analyze import is_query, parse
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "syntax"
handles = frozenset({"syntax"})

_FENCE = re.compile(r"```(?:sql|SQL)?\s*(.*?)(?:```|$)", re.S)
_TAILS = ("\\end{code}", "\\begin{code}", "</s>", "[/INST]", "Comment:", "Answer:", "Explanation:", "Note:")
_SET_OPS = {
    TokenType.UNION,
    TokenType.INTERSECT,
    TokenType.EXCEPT,
    TokenType.ALL,
    TokenType.DISTINCT,
    TokenType.L_PAREN,
}


def _strip(text: str) -> str:
    m = _FENCE.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    for tail in _TAILS:
        i = text.find(tail)
        if i > 0:
            text = text[:i]
    text = re.sub(r"^\s*(?:SQL|Query|Answer)\s*:\s*", "", text, flags=re.I)
    return text.strip()


def _cuts(text: str, dialect: str) -> list[int]:
    """Character offsets where a first statement could end: a semicolon, a second top-level SELECT."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except Exception:  # the tokenizer rejects stray characters; cut before them by regex instead
        return [m.start() for m in re.finditer(r";|\bSELECT\b", text, flags=re.I) if m.start() > 0]
    cuts, depth, prev = [], 0, None
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif tok.token_type == TokenType.SEMICOLON or (
            tok.token_type in (TokenType.SELECT, TokenType.WITH)
            and i > 0
            and depth <= 0
            and (prev is None or prev.token_type not in _SET_OPS)
        ):
            cuts.append(tok.start)
        prev = tok
    return cuts


def salvage(text: str, dialect: str) -> list[tuple[str, str]]:
    """Parseable single SELECTs cut from ``text``, longest first, with what was cut."""
    out: list[tuple[str, str]] = []
    base = _strip(text)
    seen = set()

    def offer(sql: str, why: str) -> None:
        sql = sql.strip().rstrip(";").strip()
        if not sql or sql in seen:
            return
        seen.add(sql)
        ast = parse(sql, dialect)
        if ast is not None and is_query(ast):
            out.append((sql, why))

    if base != text.strip():
        offer(base, "removed text around the SQL (markdown, chat, LaTeX)")
    escaped = re.sub(r"(?<=[A-Za-z])'(?=[A-Za-z])", "''", base)
    if escaped != base and parse(base, dialect) is None:
        offer(escaped, "escaped an apostrophe inside a string literal")
        base = escaped if out else base
    # the engine refused text that a parser for this or another dialect reads: write it for this one
    for src in dict.fromkeys((dialect, "mysql", "tsql", "postgres", "sqlite", "oracle", "bigquery")):
        try:
            stmts = [s for s in sqlglot.parse(base, read=src) if s is not None]
            if len(stmts) == 1 and is_query(stmts[0]):
                offer(stmts[0].sql(dialect=dialect), f"rewrote {src} syntax for {dialect}")
                offer(
                    _unwrap_set_operands(stmts[0]).sql(dialect=dialect),
                    "removed parentheses around a UNION/INTERSECT/EXCEPT member",
                )
                if dialect == "sqlite":
                    rewritten = _quantified_to_aggregate(stmts[0])
                    if rewritten is not None:
                        offer(rewritten.sql(dialect=dialect), "SQLite has no ANY/ALL: compared with MIN/MAX instead")
        except Exception:  # sqlglot raises parse, token and generation errors alike
            continue
    for cut in _cuts(base, dialect):
        offer(base[:cut], "kept the first statement only")
    if not out:  # trailing garbage or a cut-off generation: the longest prefix that parses, by whole words
        words = [m.start() for m in re.finditer(r"\s+", base)] + [len(base)]
        for end in reversed(words[-60:]):  # the three longest, so a bad cut still leaves shorter ones
            offer(_close(base[:end]), "cut the text where it stops being SQL, closing what it left open")
            if len(out) >= 3:
                break
    return out


_DANGLING = re.compile(
    r"(?:\s+(?:AND|OR|NOT|WHERE|ON|IN|BY|GROUP|ORDER|HAVING|SELECT|FROM|JOIN|INNER|LEFT|AS|LIKE|"
    r"BETWEEN|UNION|INTERSECT|EXCEPT|LIMIT|DESC|ASC|CASE|WHEN|THEN|ELSE)|\s*[,=<>!+\-*/(.])\s*$",
    re.I,
)


def _close(prefix: str) -> str:
    """Drop an unterminated quote and a dangling keyword or operator, then close open parentheses."""
    for q in ("'", '"', "`"):
        if prefix.count(q) % 2:
            prefix = prefix[: prefix.rfind(q)]
    prev = None
    while prev != prefix:
        prev = prefix
        prefix = _DANGLING.sub("", prefix).rstrip()
    open_case = len(re.findall(r"\bCASE\b", prefix, re.I)) - len(re.findall(r"\bEND\b", prefix, re.I))
    prefix += " END" * max(0, open_case)
    depth = prefix.count("(") - prefix.count(")")
    return prefix + ")" * depth if depth > 0 else prefix


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    out = []
    total = max(len(ctx.sql), 1)
    for sql, why in salvage(ctx.sql, ctx.dialect):
        ast = parse(sql, ctx.dialect)
        if ast is None:
            continue
        removed = max(0, total - len(sql)) / total
        out.append(
            Proposal(
                ast, name, why, ctx.sql[:60], sql[:60], 0.1 + 0.2 * removed, group="salvage", extra={"raw_sql": sql}
            )
        )
    return out


def _unwrap_set_operands(ast):
    """SQLite refuses ``A UNION (SELECT ...)``: the parenthesised member becomes a plain one."""
    from sqlglot import exp

    ast = ast.copy()
    for op in ast.find_all(exp.SetOperation):
        for key in ("this", "expression"):
            side = op.args.get(key)
            if (
                isinstance(side, exp.Subquery)
                and not side.alias
                and isinstance(side.this, exp.Select)
                and not side.this.args.get("order")
                and not side.this.args.get("limit")
            ):
                op.set(key, side.this)
    return ast


def _quantified_to_aggregate(ast):
    """``x < ANY (SELECT y ...)`` is ``x < (SELECT MAX(y) ...)``; ``= ANY`` is ``IN``; ALL takes the other end."""
    from sqlglot import exp

    ast = ast.copy()
    changed = False
    for q in list(ast.find_all(exp.Any, exp.All)):
        cmp = q.parent
        sub = q.this.this if isinstance(q.this, exp.Subquery) else q.this
        if (
            not isinstance(sub, exp.Select)
            or len(sub.expressions) != 1
            or not isinstance(cmp, exp.Binary)
            or cmp.expression is not q
        ):
            continue
        is_any = isinstance(q, exp.Any)
        if isinstance(cmp, exp.EQ) and is_any:
            cmp.replace(exp.In(this=cmp.this.copy(), query=exp.Subquery(this=sub.copy())))
            changed = True
            continue
        if isinstance(cmp, exp.LT | exp.LTE):
            agg = exp.Max if is_any else exp.Min
        elif isinstance(cmp, exp.GT | exp.GTE):
            agg = exp.Min if is_any else exp.Max
        else:
            continue
        inner = sub.copy()
        only = inner.expressions[0]
        only = only.this if isinstance(only, exp.Alias) else only
        inner.set("expressions", [agg(this=only.copy())])
        q.replace(exp.Subquery(this=inner))
        changed = True
    return ast if changed else None
