"""The hostile SQL corpus (tests/data/hostile_sql/), loaded once for every entry point that must refuse it.

A file starts with ``-- dialect: postgres|sqlite``; an optional second line ``-- escapes: on`` says its
statements spell control characters as Python escapes (``\\x00``, ``\\u2028``), since a NUL byte cannot
live in a text file the tools read. Statements are separated by a line that is exactly ``-- ----``.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import NamedTuple

CORPUS_DIR = Path(__file__).parent / "data" / "hostile_sql"


class HostileStatement(NamedTuple):
    file: str
    dialect: str
    sql: str


def load_corpus(dialect: str | None = None) -> list[HostileStatement]:
    """Every statement of the corpus, optionally only those of one dialect."""
    out: list[HostileStatement] = []
    for path in sorted(CORPUS_DIR.glob("*.sql")):
        first, rest = path.read_text(encoding="utf-8").split("\n", 1)
        assert first.startswith("-- dialect:"), path
        file_dialect = first.split(":", 1)[1].strip()
        escapes = rest.startswith("-- escapes: on\n")
        if escapes:
            rest = rest.split("\n", 1)[1]
        for s in rest.split("\n-- ----\n"):
            if not s.strip():
                continue
            sql = codecs.decode(s.strip(), "unicode_escape") if escapes else s.strip()
            if dialect is None or file_dialect == dialect:
                out.append(HostileStatement(path.name, file_dialect, sql))
    return out
