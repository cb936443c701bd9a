"""Hierarchical schema retrieval (Reflect-SQL): tables first, expanded along foreign keys, then the
columns of each chosen table; scored for relevance and completeness, with the question
reformulated while the context looks insufficient.

Scores mix the embedding similarity of the question to the knowledge base's texts with signals
an embedding misses: words of the question naming a table or column (abbreviations expanded),
values of the data the question quotes (``'Marvel Comics'`` points at ``publisher_name``), glossary
terms, and verified examples of similar questions. Reformulation asks the LLM when there is one;
without, it adds the names of value-matched columns, glossary definitions and similar verified
questions, and widens the search.

The context is rendered within a character budget: the chosen tables with their best columns
first, then descriptions, then the rest of those tables, then other tables by score, so a
larger budget only adds.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlglot import exp

from actsagent.kb.models import ColumnEntry, KnowledgeBase, TableEntry
from actsagent.kb.store import KbIndex
from actsagent.naming import parts, words
from actsagent.safeql.embeddings import Embedder

DEFAULT_BUDGET = 2200  # characters: what the pruned schema listing of the agent's prompts spends (see bench_retrieval)
DESC_CHARS = 140
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "not",
        "no",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "many",
        "much",
        "list",
        "show",
        "give",
        "find",
        "tell",
        "return",
        "display",
        "all",
        "each",
        "every",
        "any",
        "some",
        "that",
        "this",
        "these",
        "those",
        "their",
        "there",
        "than",
        "then",
        "have",
        "has",
        "had",
        "its",
        "it",
        "as",
        "per",
        "me",
        "my",
        "our",
        "we",
        "you",
        "your",
        "i",
        "please",
        "also",
        "number",
        "count",
        "total",
        "name",
        "names",
    ]
)
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def _stem(w: str) -> str:
    """A crude root: plural endings off, then the first 7 letters (published/publisher, heroes/hero)."""
    w = w.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("oes"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w[:7]


def _norm(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


def content_tokens(text: str) -> set[str]:
    return {_stem(t) for t in _TOKEN.findall(text) if t.lower() not in STOP and not t.isdigit()}


def _ngrams(text: str, n: int = 6) -> set[str]:
    toks = _norm(text).split()
    return {" ".join(toks[i : i + k]) for k in range(1, n + 1) for i in range(len(toks) - k + 1)}


class SchemaContext(BaseModel):
    """The retrieved context: what a prompt shows instead of the pruned schema listing."""

    text: str
    tables: list[str] = Field(default_factory=list)  # shown, catalog spelling
    columns: list[str] = Field(default_factory=list)  # shown, "table.column"
    selected_tables: list[str] = Field(default_factory=list)  # chosen by retrieval (before filling the budget)
    total_tables: int = 0
    total_columns: int = 0
    budget_chars: int = DEFAULT_BUDGET
    relevance: float = 0.0
    completeness: float = 0.0
    score: float = 0.0
    iterations: int = 1
    reformulations: list[str] = Field(default_factory=list)
    unmatched: list[str] = Field(default_factory=list)
    backend: str = "numpy"

    def prompt_vars(self) -> dict[str, object]:
        """The variables the ``_schema.md`` partial reads, like ``SchemaView.prompt_vars``."""
        return {"schema": self.text, "schema_shown": len(self.tables), "schema_total": self.total_tables}

    def contains(self, table: str, column: str | None = None) -> bool:
        if column is None:
            return table.lower() in {t.lower() for t in self.tables}
        return f"{table}.{column}".lower() in {c.lower() for c in self.columns}


class ReformulatedQuestion(BaseModel):
    question: str = Field(max_length=2000)
    missing: list[str] = Field(default_factory=list)


def _known_table(kb: KnowledgeBase, name: str) -> TableEntry:
    """A table the retriever named from ``kb`` itself (ranked, selected, hit), so the lookup cannot miss."""
    t = kb.table(name)
    if t is None:
        raise KeyError(f"no table {name!r} in the knowledge base")
    return t


@dataclass
class _Scores:
    tables: dict[str, float]
    columns: dict[tuple[str, str], float]
    value_hits: dict[tuple[str, str], list[str]]
    selected: list[str]
    relevance: float
    completeness: float
    unmatched: list[str]

    def total(self, alpha: float) -> float:
        return alpha * self.relevance + (1 - alpha) * self.completeness


@dataclass
class Retriever:
    """Retrieval over one knowledge base; ``model`` (a ChatModel) is used for reformulation only."""

    kb: KnowledgeBase
    index: KbIndex
    embedder: Embedder
    model: Any = None
    alpha: float = 0.6  # weight of relevance against completeness (Reflect-SQL's grid-searched value)
    threshold: float = 0.65
    max_iterations: int = 3
    first_k: int = 3  # tables chosen in the first pass; each reformulation widens by 2
    _col_words: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    _table_words: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        terms = self.kb.glossary_terms
        for t in self.kb.tables:
            self._table_words[t.name] = _name_words(t.name, t.readable, terms) | _described_words(t)
            for c in t.columns:
                self._col_words[(t.name, c.name)] = _name_words(c.name, c.readable, terms) | _described_words(c)
        self._neighbours: dict[str, set[str]] = {t.name: set() for t in self.kb.tables}
        for t in self.kb.tables:
            for r in t.relationships:
                ref = self.kb.table(r.ref_table)
                if ref is not None:
                    self._neighbours[t.name].add(ref.name)
                    self._neighbours[ref.name].add(t.name)

    # ----- the loop -------------------------------------------------------------------------------
    def retrieve(
        self,
        question: str,
        *,
        budget_chars: int = DEFAULT_BUDGET,
        evidence: str = "",
        tables: list[str] | set[str] | None = None,
    ) -> SchemaContext:
        """The context for ``question``; ``tables`` (e.g. those a draft SQL names) are always chosen."""
        base = f"{question} {evidence}".strip()
        forced = [t.name for t in self.kb.tables if t.name.lower() in {x.lower() for x in tables or ()}]
        query, k = base, self.first_k
        reformulations: list[str] = []
        best: tuple[float, _Scores] | None = None
        iterations = 0
        for iterations in range(1, self.max_iterations + 1):
            sc = self._score(query, base, k, forced)
            if best is None or sc.total(self.alpha) >= best[0]:
                best = (sc.total(self.alpha), sc)
            if sc.total(self.alpha) >= self.threshold or iterations == self.max_iterations:
                break
            new = self._reformulate(base, sc, budget_chars)
            if not new or new == query:
                break
            reformulations.append(new)
            query, k = new, k + 2
        assert best is not None
        sc = best[1]
        ctx = self._render(sc, budget_chars)
        ctx.relevance, ctx.completeness = round(sc.relevance, 3), round(sc.completeness, 3)
        ctx.score, ctx.iterations = round(sc.total(self.alpha), 3), iterations
        ctx.reformulations, ctx.unmatched = reformulations, sc.unmatched
        return ctx

    def _reformulate(self, base: str, sc: _Scores, budget: int) -> str | None:
        if self.model is not None:
            from actsagent.llm import StructuredOutputError
            from actsagent.prompts import render

            preview = self._render(sc, budget).text
            messages = render(
                "kb_reformulate",
                dialect=self.kb.dialect,
                question=base,
                unmatched=", ".join(sc.unmatched) or "none",
                context=preview,
            )
            try:
                out: ReformulatedQuestion = self.model.complete(
                    messages, role="tools", response_model=ReformulatedQuestion
                ).parsed
                return f"{base} {out.question} {' '.join(out.missing)}".strip()
            except StructuredOutputError:
                pass  # the LLM-free expansion below still helps
        extra: list[str] = []
        for t, c in sc.value_hits:
            tab = _known_table(self.kb, t)
            col = tab.column(c)
            extra.append(f"{(col.readable if col else None) or c} of {tab.readable or t}")
        toks = {w.lower() for w in _TOKEN.findall(base)}
        for term, meaning in self.kb.glossary_terms.items():
            if term in toks or (" " in term and term in _norm(base)):
                extra.append(meaning)
        ex = self._similar_examples(base, 0.6)
        extra += [e.question for e, _ in ex[:2]]
        return f"{base} {' '.join(dict.fromkeys(extra))}".strip() if extra else base

    def _similar_examples(self, text: str, floor: float):
        scores = self.index.example_scores(self.embedder.one(text)) if self.kb.examples else {}
        by_id = {e.id: e for e in self.kb.active_examples()}
        return sorted(((by_id[i], s) for i, s in scores.items() if i in by_id and s >= floor), key=lambda x: -x[1])

    # ----- one pass ---------------------------------------------------------------------------------
    def _score(self, query: str, base: str, k: int, forced: Sequence[str] = ()) -> _Scores:
        qvec = self.embedder.one(query)
        qtoks = content_tokens(query)
        grams = _ngrams(base)
        tsim = self.index.table_scores(qvec)
        table_score: dict[str, float] = {}
        col_lex: dict[tuple[str, str], float] = {}
        value_hits: dict[tuple[str, str], list[str]] = {}
        for t in self.kb.tables:
            for c in t.columns:
                key = (t.name, c.name)
                cw = self._col_words[key]
                col_lex[key] = len(cw & qtoks) / len(cw) if cw else 0.0
                hits = _value_hits(c, grams)
                if hits:
                    value_hits[key] = hits
        boost_t, boost_c = self._example_boosts(base)
        for t in self.kb.tables:
            tw = self._table_words[t.name]
            lex = len(tw & qtoks) / len(tw) if tw else 0.0
            best_col = max((col_lex[(t.name, c.name)] for c in t.columns), default=0.0)
            has_value = any((t.name, c.name) in value_hits for c in t.columns)
            table_score[t.name] = (
                max(tsim.get(t.name, 0.0), 0.0)
                + 0.7 * lex
                + 0.4 * best_col
                + 0.6 * has_value
                + boost_t.get(t.name.lower(), 0.0)
            )
        ranked = sorted(table_score, key=lambda n: -table_score[n])
        selected = list(forced) + [n for n in ranked[:k] if n not in forced]
        selected += [
            n
            for n in ranked[k:]
            if any((n, c.name) in value_hits for c in _known_table(self.kb, n).columns) or table_score[n] >= 1.0
        ]
        selected = self._connect(selected)
        csim = self.index.column_scores(qvec, list(table_score))
        columns = {
            key: max(csim.get(key, 0.0), 0.0)
            + 0.8 * col_lex[key]
            + 0.8 * (key in value_hits)
            + boost_c.get(f"{key[0]}.{key[1]}".lower(), 0.0)
            for key in col_lex
        }
        relevance = (
            float(np.mean([min(max(tsim.get(n, 0.0), 0.0) / 0.5, 1.0) for n in selected[:k]])) if selected else 0.0
        )
        covered: set[str] = set()
        for n in selected:
            tab = _known_table(self.kb, n)
            covered |= self._table_words[n] | content_tokens(tab.description)
            for c in tab.columns:
                covered |= self._col_words[(n, c.name)]
        for (tname, _c), hits in value_hits.items():
            if tname in selected:
                for h in hits:
                    covered |= content_tokens(h)
        unmatched = sorted(content_tokens(base) - covered)
        want = content_tokens(base)
        completeness = 1 - len(unmatched) / len(want) if want else 1.0
        if len(selected) > 1 and not self._connected(selected):
            completeness *= 0.8
        return _Scores(table_score, columns, value_hits, selected, relevance, completeness, unmatched)

    def _example_boosts(self, text: str) -> tuple[dict[str, float], dict[str, float]]:
        """Tables and columns that verified answers to similar questions used."""
        bt: dict[str, float] = {}
        bc: dict[str, float] = {}
        for e, s in self._similar_examples(text, 0.7):
            for t in e.tables:
                bt[t.lower()] = max(bt.get(t.lower(), 0.0), s)
            for c in e.columns:
                bc[c.lower()] = max(bc.get(c.lower(), 0.0), s)
        return bt, bc

    def _connect(self, selected: list[str]) -> list[str]:
        """Add the tables on the shortest foreign-key path between chosen tables (join bridges)."""
        out = list(dict.fromkeys(selected))
        for i, a in enumerate(list(out)):
            for b in out[i + 1 :]:
                if b in self._neighbours.get(a, set()):
                    continue
                path = self._path(a, b, limit=3)
                out += [p for p in path if p not in out]
        return out

    def _path(self, a: str, b: str, limit: int) -> list[str]:
        prev: dict[str, str | None] = {a: None}
        queue = deque([(a, 0)])
        while queue:
            node, depth = queue.popleft()
            if node == b:
                out = []
                cur: str | None = node
                while cur is not None and cur != a:
                    out.append(cur)
                    cur = prev[cur]
                return out[1:]  # intermediate tables only
            if depth >= limit:
                continue
            for nb in sorted(self._neighbours.get(node, ())):
                if nb not in prev:
                    prev[nb] = node
                    queue.append((nb, depth + 1))
        return []

    def _connected(self, tables: list[str]) -> bool:
        seen, stack = {tables[0]}, [tables[0]]
        allowed = set(tables)
        while stack:
            for nb in self._neighbours.get(stack.pop(), ()):
                if nb in allowed and nb not in seen:
                    seen.add(nb)
                    stack.append(nb)
        return seen == allowed

    # ----- rendering within the budget -----------------------------------------------------------------
    def _render(self, sc: _Scores, budget: int) -> SchemaContext:
        r = _Renderer(self.kb, budget)
        ranked = sorted(sc.tables, key=lambda n: -sc.tables[n])
        order = sc.selected + [n for n in ranked if n not in sc.selected]

        def cols(n: str) -> list[ColumnEntry]:
            t = _known_table(self.kb, n)
            return sorted(
                t.columns,
                key=lambda c: -(sc.columns.get((n, c.name), 0.0) + 0.5 * (c.primary_key or bool(c.references))),
            )

        for n in sc.selected:  # 1. the chosen tables with their best columns and keys
            top = cols(n)
            strong = [c for c in top if sc.columns.get((n, c.name), 0.0) >= 0.6 or c.primary_key or c.references]
            r.add_table(n)
            for c in strong + [c for c in top if c not in strong][: max(0, 3 - len(strong))]:
                r.add_column(n, c)
        for n in sc.selected:  # 2. descriptions of what was shown, best first
            r.add_description(n, None)
            for c in cols(n):
                r.add_description(n, c)
        for n in sc.selected:  # 3. the other columns of the chosen tables
            for c in cols(n):
                r.add_column(n, c)
        for n in order:  # 4. other tables, best first, then everything's descriptions
            if r.add_table(n):
                for c in cols(n):
                    r.add_column(n, c)
        for n in order:
            r.add_description(n, None)
            for c in cols(n):
                r.add_description(n, c)
        ctx = r.context()
        ctx.selected_tables = list(sc.selected)
        ctx.total_tables = len(self.kb.tables)
        ctx.total_columns = sum(len(t.columns) for t in self.kb.tables)
        ctx.backend = self.index.backend
        return ctx


def _name_words(name: str, readable_name: str, terms: dict[str, str]) -> set[str]:
    ws = {_stem(w) for w in words(name) + readable_name.split() if not w.isdigit() and w.lower() not in STOP}
    for w in set(words(name) + parts(name)):
        if w in terms:
            ws |= content_tokens(terms[w])
    return ws


def _described_words(entry: TableEntry | ColumnEntry) -> set[str]:
    """Words of a written description's lead (up to its first ``:`` or ``;``): a glossary or a person
    saying what a coded name (``T07``, ``c07``) means makes it findable by the question's words."""
    if entry.source not in ("glossary", "manual"):
        return set()
    return content_tokens(re.split(r"[:;]", entry.description, maxsplit=1)[0])


def _value_hits(c: ColumnEntry, grams: set[str]) -> list[str]:
    hits = []
    for v in c.values:
        nv = _norm(v)
        if len(nv) < 3 or nv in STOP or (nv.isdigit() and len(nv) < 4):
            continue
        if nv in grams:
            hits.append(v)
            if len(hits) >= 3:
                break
    return hits


def _quote(name: str, dialect: str) -> str:
    """``name`` as the listing shows it: bare when the engine reads it back unchanged, else quoted."""
    plain = name.isidentifier() and (dialect == "sqlite" or name == name.lower())
    return exp.to_identifier(name, quoted=not plain).sql(dialect)


class _Renderer:
    """Lines of the context, kept within the budget exactly; items that do not fit are skipped."""

    def __init__(self, kb: KnowledgeBase, budget: int) -> None:
        self.kb, self.budget = kb, budget
        self.tables: dict[str, dict[str, Any]] = {}  # name -> {"desc": bool, "cols": {col: bool}}
        self.size = 0

    def _header(self, t: TableEntry, desc: bool) -> str:
        head = f"Table {_quote(t.name, self.kb.dialect)}"
        notes = []
        if t.row_count is not None:
            notes.append(f"{t.row_count} rows")
        if desc and (note := table_note(t)):
            notes.append(note)
        return head + (" -- " + "; ".join(notes) if notes else "")

    def _line(self, c: ColumnEntry, desc: bool) -> str:
        line = f"  {_quote(c.name, self.kb.dialect)} {c.type or 'any'}"
        if c.primary_key:
            line += " PK"
        if c.references:
            line += f" FK -> {c.references}"
        note = column_note(c) if desc else ""
        return line + (f" -- {note}" if note else "")

    def _fits(self, extra: int) -> bool:
        return self.size + extra <= self.budget

    def add_table(self, name: str) -> bool:
        if name in self.tables:
            return False
        t = _known_table(self.kb, name)
        cost = len(self._header(t, False)) + (2 if self.tables else 0)
        if not self._fits(cost):
            return False
        self.tables[name] = {"desc": False, "cols": {}}
        self.size += cost
        return True

    def add_column(self, table: str, c: ColumnEntry) -> None:
        entry = self.tables.get(table)
        if entry is None or c.name in entry["cols"]:
            return
        cost = len(self._line(c, False)) + 1
        if self._fits(cost):
            entry["cols"][c.name] = False
            self.size += cost

    def add_description(self, table: str, c: ColumnEntry | None) -> None:
        entry = self.tables.get(table)
        if entry is None:
            return
        t = _known_table(self.kb, table)
        if c is None:
            if entry["desc"]:
                return
            cost = len(self._header(t, True)) - len(self._header(t, False))
            if cost and self._fits(cost):
                entry["desc"] = True
                self.size += cost
            return
        if c.name not in entry["cols"] or entry["cols"][c.name]:
            return
        cost = len(self._line(c, True)) - len(self._line(c, False))
        if cost and self._fits(cost):
            entry["cols"][c.name] = True
            self.size += cost

    def context(self) -> SchemaContext:
        blocks, tables, columns = [], [], []
        for t in self.kb.tables:  # catalog order reads better than score order
            entry = self.tables.get(t.name)
            if entry is None:
                continue
            lines = [self._header(t, entry["desc"])]
            for c in t.columns:
                if c.name in entry["cols"]:
                    lines.append(self._line(c, entry["cols"][c.name]))
                    columns.append(f"{t.name}.{c.name}")
            blocks.append("\n".join(lines))
            tables.append(t.name)
        text = "\n\n".join(blocks)
        assert len(text) <= self.budget, (len(text), self.budget)
        return SchemaContext(text=text, tables=tables, columns=columns, budget_chars=self.budget)


def column_note(c: ColumnEntry) -> str:
    """What the context adds to a column line: a written description as it is (a glossary's with the
    range or a few short values after it, no sample ids of a key); for a templated one only what the
    line does not say already (the name as words when it was expanded, values, range)."""
    if c.source == "glossary":  # a dictionary's line says what the column is, not what it holds
        facts = "" if (c.primary_key or c.references) and not c.value_range else _values_note(c, 3, 20)
        return _clip("; ".join(p for p in (c.description, facts) if p))
    if c.source != "template":
        return _clip(c.description)
    parts = []
    if c.readable and c.readable != " ".join(words(c.name)):
        parts.append(c.readable)
    if facts := _values_note(c, 4, 30):
        parts.append(facts)
    return _clip("; ".join(parts))


def _values_note(c: ColumnEntry, n: int, width: int) -> str:
    """The range of a numeric column, else up to ``n`` frequent values cut to ``width`` characters."""
    if c.value_range:
        return f"{c.value_range[0]}..{c.value_range[1]}"
    if not c.samples:
        return ""
    shown = ", ".join(repr(v if len(v) <= width else v[: width - 3] + "...") for v in c.samples[:n])
    return f"e.g. {shown}" if len(c.values) > len(c.samples[:n]) else f"values {shown}"


def table_note(t: TableEntry) -> str:
    """A table header's note: a glossary's first clause (up to ``;``; the whole text is searched, and the
    columns follow with their own lines), another written description as it is, else the name as words."""
    if t.source == "glossary":
        return _clip(t.description.split(";", 1)[0])
    if t.source != "template":
        return _clip(t.description)
    return t.readable if t.readable and t.readable != " ".join(words(t.name)) else ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DESC_CHARS else text[: DESC_CHARS - 3] + "..."
