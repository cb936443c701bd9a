"""The guard's typed inputs and outputs: a policy, and either SQL safe to run or a rejection."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class Policy(BaseModel, frozen=True):
    """What the guard lets through.

    ``strict`` is the copilot's policy and the default. ``sandbox`` only splits the input into
    statements: it is meant for disposable database copies (BIRD-CRITIC repair), never for a live one.
    """

    name: Literal["strict", "sandbox"] = "strict"
    max_rows: int = Field(default=1000, gt=0)
    extra_functions: frozenset[str] = frozenset()  # reviewed names added to the dialect's allow-list
    function_schemas: frozenset[str] = frozenset({"pg_catalog"})  # qualifiers allowed on function calls
    max_sql_chars: int = Field(default=100_000, gt=0)

    @classmethod
    def strict(cls, max_rows: int = 1000, extra_functions: frozenset[str] | set[str] = frozenset()) -> Policy:
        return cls(name="strict", max_rows=max_rows, extra_functions=frozenset(f.lower() for f in extra_functions))

    @classmethod
    def sandbox(cls) -> Policy:
        return cls(name="sandbox")

    @property
    def read_only(self) -> bool:
        """The one question whether writes may run: False only for the sandbox policy."""
        return self.name == "strict"


LimitAction = Literal["kept", "added", "lowered", "wrapped", "none"]


class GuardedSQL(BaseModel, frozen=True):
    """SQL that passed the policy. ``sql`` is regenerated from the checked tree: run it, not the input."""

    ok: Literal[True] = True
    sql: str
    original: str
    dialect: str
    policy: Literal["strict", "sandbox"] = "strict"
    statements: list[str]
    row_limit: int | None = None  # the LIMIT the regenerated SQL carries (strict only)
    limit_action: LimitAction = "none"
    functions: list[str] = Field(default_factory=list)  # names of unmodelled functions called


class GuardRejection(BaseModel, frozen=True):
    """Why the SQL was refused, phrased so an LLM can rewrite the query."""

    ok: Literal[False] = False
    original: str
    dialect: str
    rule: str  # short code: parse, empty, multiple_statements, not_read_only, write, select_into, ...
    reason: str
    offending: str | None = None  # the function, statement kind or clause refused
    position: int | None = None  # 1-based character offset in ``original`` (parse errors)

    def describe(self) -> str:
        return f"guard rejected the SQL ({self.rule}): {self.reason}"


GuardResult = Annotated[GuardedSQL | GuardRejection, Field(discriminator="ok")]
