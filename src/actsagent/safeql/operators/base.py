"""What an operator sees and returns. The search loop knows operators only through this contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from sqlglot import exp

from actsagent.db.base import Database
from actsagent.db.results import DbError
from actsagent.safeql.analyze import Analysis
from actsagent.safeql.catalog import Catalog
from actsagent.safeql.result import RefineOptions

EMPTY = "empty_result"


@dataclass
class Failure:
    """Why a candidate needs refining: an engine error class, or ``empty_result``."""

    kind: str
    error: DbError | None = None

    @property
    def identifier(self) -> str | None:
        ident = self.error.identifier if self.error else None
        return ident.strip('"`[]') if ident else None

    @property
    def position(self) -> int | None:
        return self.error.position if self.error else None

    @property
    def message(self) -> str:
        return self.error.message if self.error else "the query returns no rows"


@dataclass
class Context:
    db: Database
    catalog: Catalog
    options: RefineOptions
    sql: str
    ast: exp.Expr | None
    analysis: Analysis | None

    @property
    def dialect(self) -> str:
        return self.db.dialect

    @property
    def tree(self) -> exp.Expr:
        """The parsed candidate: operators read it only after checking that the query parsed."""
        if self.ast is None:
            raise ValueError("the candidate did not parse")
        return self.ast

    @property
    def scopes(self) -> Analysis:
        """The candidate's analysis: there is one whenever the query parsed."""
        if self.analysis is None:
            raise ValueError("the candidate did not parse")
        return self.analysis


@dataclass
class Proposal:
    """A new AST, the replaced tokens with their distances, and a human reason."""

    ast: exp.Expr
    operator: str
    reason: str
    before: str
    after: str
    token_distance: float = 0.0
    group: str = ""  # top-K is applied per (operator, group): usually the edited target
    extra: dict = field(default_factory=dict)


class Operator(Protocol):
    name: str
    handles: frozenset[str]

    def propose(self, ctx: Context, failure: Failure) -> list[Proposal]: ...
