"""The compact, commented listing the safety note recommends for prompts."""

from __future__ import annotations

from actsagent.schema.model import SchemaInfo, TableInfo


def _quoter(reserved: frozenset[str]):
    def quote(name: str) -> str:
        plain = name.isidentifier() and name == name.lower() and name.upper() not in reserved
        return name if plain else '"' + name.replace('"', '""') + '"'

    return quote


def render_table(t: TableInfo, *, samples: bool = True, reserved: frozenset[str] = frozenset()) -> str:
    """One table as the note's listing; names the engine reserves (``order``) are shown quoted."""
    _quote = _quoter(reserved)
    head = "Table " + (_quote(t.name) if t.qualified == t.name else f"{t.schema_name}.{_quote(t.name)}")
    notes = []
    if t.comment:
        notes.append(t.comment)
    if t.row_estimate is not None and t.row_estimate >= 0:
        notes.append(f"~{t.row_estimate} rows")
    if notes:
        head += " -- " + "; ".join(notes)
    lines = [head]
    width = max((len(_quote(c.name)) for c in t.columns), default=0)
    twidth = max((len(c.type) for c in t.columns), default=0)
    for c in t.columns:
        tags = []
        if c.primary_key:
            tags.append("PK")
        if c.references:
            tags.append(f"FK -> {c.references}")
        if not c.nullable and not c.primary_key:
            tags.append("NOT NULL")
        comment = []
        if c.comment:
            comment.append(c.comment)
        if samples and c.sample_values:
            shown = ", ".join(repr(v) if len(v) < 40 else repr(v[:37] + "...") for v in c.sample_values[:8])
            more = "" if len(c.sample_values) <= 8 else ", ..."
            comment.append(f"values: {shown}{more}")
        line = f"  {_quote(c.name):<{width}}  {c.type:<{twidth}}"
        if tags:
            line += "  " + " ".join(tags)
        if comment:
            line += "  -- " + "; ".join(comment)
        lines.append(line.rstrip())
    return "\n".join(lines)


def render_schema(schema: SchemaInfo, *, tables: list[str] | None = None, samples: bool = True) -> str:
    wanted = {t.lower() for t in tables} if tables else None
    reserved = frozenset(w.upper() for w in schema.reserved_words)
    parts = [render_table(t, samples=samples, reserved=reserved) for t in schema.tables if wanted is None or t.name.lower() in wanted]
    return "\n\n".join(parts)
