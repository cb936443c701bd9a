"""Best-first search over error-directed refinements (SafeQL, Algorithm 1).

Candidates are ordered by delta = alpha * normalised TED(original, candidate) + (1 - alpha) * the
sum of token distances of everything replaced on the way. The first candidate that executes (and,
when the original's problem was an empty result, returns rows) is the answer. Type pruning cuts
candidates that introduce a new type mismatch; top-K keeps the K nearest per operator and target.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from actsagent.db.base import Database
from actsagent.db.results import DbError, ErrorClass, QueryResult
from actsagent.guard.split import WRITE_KEYWORDS, first_keyword
from actsagent.safeql.analyze import Analysis, is_query, parse
from actsagent.safeql.catalog import Catalog, get_catalog
from actsagent.safeql.distance import LabelTree, normalised_ted, to_tree
from actsagent.safeql.operators import OPERATORS
from actsagent.safeql.operators.base import EMPTY, Context, Failure, Proposal
from actsagent.safeql.result import Edit, RefineOptions, RefineResult
from actsagent.safeql.types import mismatch_keys

_REFINABLE = {
    ErrorClass.SYNTAX,
    ErrorClass.OTHER,
    ErrorClass.UNKNOWN_RELATION,
    ErrorClass.UNKNOWN_COLUMN,
    ErrorClass.UNKNOWN_FUNCTION,
    ErrorClass.AMBIGUOUS_COLUMN,
    ErrorClass.TYPE_MISMATCH,
}


_TYPE_FIXERS = {"function", "mismatch"}
_NON_SELECT = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Merge,
    exp.TruncateTable,
    exp.Pragma,
    exp.Grant,
)


@dataclass(order=True)
class _Node:
    delta: float
    seq: int
    sql: str = field(compare=False)
    ast: exp.Expr | None = field(compare=False)
    edits: list[Edit] = field(compare=False, default_factory=list)
    embed: float = field(compare=False, default=0.0)
    ted: float = field(compare=False, default=0.0)
    depth: int = field(compare=False, default=0)
    ref: LabelTree | None = field(compare=False, default=None)  # zss tree the TED is measured from
    mismatches: frozenset = field(compare=False, default=frozenset())


def _failure(res) -> Failure | None:
    if isinstance(res, DbError):
        return Failure(res.error_class.value, res)
    if res.empty:
        return Failure(EMPTY)
    return None


def refine(
    db: Database,
    sql: str,
    *,
    options: RefineOptions | None = None,
    catalog: Catalog | None = None,
    check: Callable[[str], DbError | None] | None = None,
) -> RefineResult:
    """Return the nearest query to ``sql`` that executes on ``db`` (read-only), or say why not.

    ``check`` (e.g. the SQL guard) sees every query before it runs, the original included; a
    ``DbError`` it returns stands for the execution (refinable classes are refined further, a
    ``guard_rejected`` candidate is dropped) and the query never reaches the database.
    """
    opts = options or RefineOptions()

    def run(q: str):
        if check is not None:
            verdict = check(q)
            if verdict is not None:
                return verdict
        return db.execute(q, read_only=True, max_rows=opts.max_rows, timeout_s=opts.statement_timeout_s)

    start = time.perf_counter()
    result = RefineResult(status="gave_up", original_sql=sql)

    def done(**kw) -> RefineResult:
        for k, v in kw.items():
            setattr(result, k, v)
        result.elapsed_ms = (time.perf_counter() - start) * 1000
        return result

    ast0 = parse(sql, db.dialect)
    head = first_keyword(sql, db.dialect)
    if head in WRITE_KEYWORDS or isinstance(ast0, _NON_SELECT):
        return done(why=f"only SELECT queries are refined; this is {head or 'empty'}")
    if ast0 is not None and not is_query(ast0):
        ast0 = None  # a bare word or chat text that sqlglot read as something: only salvage can help
    res0 = run(sql)
    # an aggregate without GROUP BY returns one row ([0, NULL]) even when no row passes FROM/WHERE:
    # for value refinement that is an empty result too
    agg_empty0 = (
        isinstance(res0, QueryResult)
        and not res0.empty
        and opts.refine_empty
        and _aggregates_nothing(ast0, run, db.dialect)
    )
    if isinstance(res0, QueryResult) and (not res0.empty or not opts.refine_empty) and not agg_empty0:
        return done(status="already_ok", why="the query executes", **_rows(res0, opts))
    fail0 = Failure(EMPTY) if agg_empty0 else _failure(res0)
    result.error_class = fail0.kind if fail0 else None
    result.error_message = fail0.message if fail0 else None
    if agg_empty0:
        result.error_message = _AGG_EMPTY
    if isinstance(res0, DbError) and res0.error_class not in _REFINABLE:
        return done(why=f"{res0.error_class.value} errors are not refinable: {res0.message}")
    if ast0 is None and fail0 is not None:
        # whatever the engine said about the first statement, the text must be cut down to one first
        fail0 = Failure(ErrorClass.SYNTAX.value, res0 if isinstance(res0, DbError) else None)

    if catalog is None:
        t0 = time.perf_counter()
        catalog = get_catalog(db)
        result.catalog_ms = (time.perf_counter() - t0) * 1000
    want_rows = fail0 is not None and fail0.kind == EMPTY
    seq = itertools.count()
    ref0 = to_tree(ast0) if ast0 is not None else None
    root = _Node(
        0.0,
        next(seq),
        sql,
        ast0,
        ref=ref0,
        mismatches=mismatch_keys(Analysis(ast0, catalog.schema), db.dialect) if ast0 is not None else frozenset(),
    )
    heap: list[_Node] = []
    # a syntax error on text sqlglot reads: its regenerated form is a candidate, so remember the text only
    syntax0 = isinstance(res0, DbError) and res0.error_class is ErrorClass.SYNTAX
    visited = {sql.strip() if syntax0 else _canon(ast0, sql, db.dialect)}
    fallback: tuple[_Node, QueryResult] | None = None
    expansions = 0

    def expand(node: _Node, failure: Failure) -> None:
        nonlocal expansions
        expansions += 1
        if node.depth >= opts.max_depth:
            return
        an = Analysis(node.ast, catalog.schema) if node.ast is not None else None
        ctx = Context(db=db, catalog=catalog, options=opts, sql=node.sql, ast=node.ast, analysis=an)
        for op in OPERATORS:
            if failure.kind not in op.handles:
                continue
            try:
                proposals = op.propose(ctx, failure)
            except RecursionError:
                proposals = []
            result.candidates_generated += len(proposals)
            kept: dict[str, int] = {}
            for p in sorted(proposals, key=lambda p: p.token_distance):
                # type pruning first, then top-K of what survives (the paper's order)
                child = _child(node, p, db.dialect, catalog, opts, seq, visited, result)
                if child is None:
                    continue
                if kept.get(p.group, 0) >= opts.k:
                    result.pruned_by_topk += 1
                    continue
                kept[p.group] = kept.get(p.group, 0) + 1
                visited.add(_canon(child.ast, child.sql, db.dialect))
                heapq.heappush(heap, child)

    if fail0 is not None:
        expand(root, fail0)
    deadline = time.perf_counter() + opts.time_limit_s  # the index build is accounted apart
    while (
        heap
        and time.perf_counter() < deadline
        and expansions < opts.max_expansions
        and result.candidates_explored < opts.max_candidates
    ):
        node = heapq.heappop(heap)
        res = run(node.sql)
        result.candidates_explored += 1
        # refining an emptiness: an aggregate's single row counts only if some row reaches the aggregate
        agg_empty = (
            want_rows
            and isinstance(res, QueryResult)
            and not res.empty
            and _aggregates_nothing(node.ast, run, db.dialect)
        )
        if isinstance(res, QueryResult) and not res.empty and not agg_empty:
            why = (
                "the refined query executes and its aggregate now covers rows (the original aggregated "
                "an empty row set: no row passed its FROM/WHERE)"
                if agg_empty0
                else "the refined query executes and returns rows"
            )
            return done(
                status="refined",
                why=why,
                refined_sql=node.sql,
                edits=node.edits,
                distance=node.delta,
                ted=node.ted,
                **_rows(res, opts),
            )
        if isinstance(res, QueryResult):
            if not want_rows and fallback is None:
                # it runs: look a little further for one that also returns rows, then settle
                fallback = (node, res)
                deadline = min(deadline, time.perf_counter() + 0.5)
            expand(node, Failure(EMPTY))
            continue
        if res.error_class in _REFINABLE:
            expand(node, Failure(res.error_class.value, res))

    if fallback is not None:
        node, res = fallback
        return done(
            status="refined",
            why="the refined query executes but returns no rows"
            + (" (or aggregates an empty row set)" if res.row_count else ""),
            refined_sql=node.sql,
            edits=node.edits,
            distance=node.delta,
            ted=node.ted,
            **_rows(res, opts),
        )
    limit = (
        "time limit"
        if time.perf_counter() >= deadline
        else "expansion limit"
        if expansions >= opts.max_expansions
        else "candidate limit"
        if result.candidates_explored >= opts.max_candidates
        else "no refinement left"
    )
    what = "no candidate returned rows" if want_rows else "no candidate executed"
    return done(why=f"{what} ({limit}; {result.candidates_explored} explored)")


def _child(
    node: _Node,
    p: Proposal,
    dialect: str,
    catalog: Catalog,
    opts: RefineOptions,
    seq,
    visited: set[str],
    result: RefineResult,
) -> _Node | None:
    sql = p.extra.get("raw_sql") or p.ast.sql(dialect=dialect)
    if _canon(p.ast, sql, dialect) in visited:
        return None
    # re-read the text that will run, so node positions match the engine's error positions
    reparsed = parse(sql, dialect)
    if reparsed is not None:
        p.ast = reparsed
    try:
        mism = mismatch_keys(Analysis(p.ast, catalog.schema), dialect)
    except RecursionError:
        mism = frozenset()
    # cut an edit that adds a comparison or call that cannot type-check, and a type fix that fixes nothing
    if len(mism) > len(node.mismatches) or (
        p.operator in _TYPE_FIXERS and mism and mism != node.mismatches and len(mism) >= len(node.mismatches)
    ):
        result.pruned_by_type += 1
        return None
    ref = node.ref if node.ref is not None else to_tree(p.ast)
    ted = normalised_ted(ref, p.ast)
    embed = node.embed + p.token_distance
    delta = opts.alpha * ted + (1 - opts.alpha) * embed
    edit = Edit(
        operator=p.operator,
        reason=p.reason,
        before=p.before,
        after=p.after,
        embed_distance=round(p.token_distance, 4),
        sql=sql,
    )
    return _Node(delta, next(seq), sql, p.ast, node.edits + [edit], embed, ted, node.depth + 1, ref, mism)


_AGG_EMPTY = (
    "the query aggregates an empty row set: no row passes its FROM/WHERE, so its single row "
    "(counts 0, sums NULL) is an empty result for value refinement"
)


def aggregates_nothing(
    db: Database, sql: str, *, check: Callable[[str], DbError | None] | None = None, timeout_s: float = 3.0
) -> bool:
    """Whether ``sql`` aggregates without GROUP BY over an empty FROM/WHERE: its one row ([0, NULL]) is
    an empty result to value refinement, so a caller that saw that row should call ``refine``."""

    def run(q: str):
        verdict = check(q) if check is not None else None
        return verdict if verdict is not None else db.execute(q, read_only=True, max_rows=1, timeout_s=timeout_s)

    return _aggregates_nothing(parse(sql, db.dialect), run, db.dialect)


def _aggregates_nothing(ast: exp.Expr | None, run: Callable[[str], object], dialect: str) -> bool:
    """A SELECT that aggregates without GROUP BY whose FROM/WHERE yields no row, checked cheaply by
    running the FROM/WHERE alone as ``SELECT 1 ... LIMIT 1``."""
    if not isinstance(ast, exp.Select) or ast.args.get("group") or not (ast.args.get("from_") or ast.args.get("from")):
        return False
    aggs = [
        a
        for e in ast.expressions
        for a in e.find_all(exp.AggFunc)
        if not isinstance(a.parent, exp.Window) and a.find_ancestor(exp.Select) is ast
    ]
    if not aggs:
        return False
    probe = ast.copy()
    probe.set("expressions", [exp.Literal.number(1)])
    for key in ("having", "order", "offset", "distinct", "qualify"):
        probe.set(key, None)
    probe.set("limit", exp.Limit(expression=exp.Literal.number(1)))
    try:
        text = probe.sql(dialect=dialect)
    except (sqlglot.errors.SqlglotError, ValueError, RecursionError):  # odd trees: no evidence of emptiness
        return False
    res = run(text)
    return isinstance(res, QueryResult) and res.empty


def _canon(ast: exp.Expr | None, sql: str, dialect: str) -> str:
    if ast is None:
        return sql.strip()
    try:
        return ast.sql(dialect=dialect, normalize=True, pretty=False)
    except Exception:  # generation can fail on odd trees; fall back to the text
        return sql.strip()


def _rows(res: QueryResult, opts: RefineOptions) -> dict:
    return {
        "columns": [c.name for c in res.columns],
        "rows_preview": res.rows[: opts.preview_rows],
        "row_count": res.row_count,
        "empty_result": res.empty,
    }
