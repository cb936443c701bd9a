"""The decisions every reading of a query shares: which calls, fields, settings and relations pass.

``check.py`` applies them to sqlglot's trees of the input and of the regenerated SQL,
``postgres_parse.py`` to PostgreSQL's own parse tree of the regenerated SQL. One place, so the
readings cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from actsagent.guard.functions import (
    ALLOWED,
    ARGUMENT_CHECKED,
    SAFE_SETTINGS,
    WRITTEN_SYNTAX,
    denied_reason,
    known_function_names,
)
from actsagent.guard.relations import denied_relation

if TYPE_CHECKING:
    from actsagent.db.catalog import ServerCatalog
    from actsagent.guard.models import Policy

_USE_STANDARD = "use standard SQL functions (COUNT, SUM, CAST, SUBSTR, CASE, ...) instead"


class Refused(Exception):
    def __init__(self, rule: str, reason: str, offending: str | None = None, position: int | None = None) -> None:
        super().__init__(reason)
        self.rule, self.reason, self.offending, self.position = rule, reason, offending, position


class Rules:
    """The policy for one dialect, with the connected server's catalog when there is one.

    ``catalog`` may be a function that reads it (``Database.catalog``): it is called only when a field
    ``q.f`` needs it, so a query without such a field, or one refused before, costs no catalog read."""

    def __init__(
        self,
        dialect: str,
        policy: Policy,
        catalog: ServerCatalog | Callable[[], ServerCatalog | None] | None = None,
    ) -> None:
        self.dialect, self.policy, self._catalog = dialect, policy, catalog
        self.reviewed = ALLOWED[dialect] | policy.extra_functions

    @property
    def catalog(self) -> ServerCatalog | None:
        if callable(self._catalog):
            self._catalog = self._catalog()
        return self._catalog

    def call(self, name: str, written: bool = False) -> None:
        """A function called by ``name``: refused when denied or not reviewed. ``written``: the name as the
        input spells it, where a few names are syntax (``ARRAY(SELECT ...)``)."""
        n = name.lower()
        why = denied_reason(n)
        if why:
            raise Refused(
                "denied_function",
                f"function {n}() is not allowed: {why}; compute the result with plain SQL instead",
                offending=n,
            )
        if n not in self.reviewed and not (written and n in WRITTEN_SYNTAX[self.dialect]):
            raise Refused(
                "unknown_function",
                f"function {n}() is not on the reviewed list of {self.dialect} functions; {_USE_STANDARD}",
                offending=n,
            )

    def qualifier(self, qualifier: str, name: str) -> None:
        q, shown = qualifier.lower(), f"{qualifier.lower()}.{name.lower()}"
        if q not in self.policy.function_schemas:
            allowed = ", ".join(sorted(self.policy.function_schemas)) or "none"
            raise Refused(
                "qualified_function",
                f"function {shown}() is schema-qualified; only built-in functions are allowed (qualifiers "
                f"allowed: {allowed}); call it without the schema or use a built-in function",
                offending=shown,
            )

    def setting(self, name: str | None, extra_arguments: bool) -> None:
        """``current_setting(name [, missing_ok])``: only a literal name from the reviewed settings."""
        if name is None or name.lower() not in SAFE_SETTINGS or extra_arguments:
            shown = "a computed name" if name is None else repr(name)
            raise Refused(
                "denied_setting",
                f"current_setting() may read only these settings, named by a literal: "
                f"{', '.join(sorted(SAFE_SETTINGS))}; it was given {shown} (server paths "
                "and configuration stay private)",
                offending=name,
            )

    def field(self, name: str, folded: str, on_expression: bool, shown: str) -> None:
        """A field selection ``q.name`` or ``(expr).name``. PostgreSQL runs it as ``name(q)`` when ``q`` has no
        column ``name`` (attribute notation), so it is decided like a call unless it can only be a column.

        ``folded`` is the name as the server compares it (PostgreSQL keeps quoted names' case)."""
        n = name.lower()
        why = denied_reason(n)
        if why:
            raise Refused(
                "denied_function",
                f"{shown} would call function {n}() (PostgreSQL runs x.f as f(x) when "
                f"there is no column f), which is not allowed: {why}; select a column "
                "instead",
                offending=n,
            )
        if n in ARGUMENT_CHECKED:
            raise self._attribute_call(n, shown, f"{n}() is allowed only as a direct call with a literal argument")
        if folded in self.reviewed:
            return
        catalog = self.catalog
        if catalog is not None:
            if folded in catalog.functions and folded not in catalog.columns:
                raise self._attribute_call(
                    n, shown, f"no relation on this server has a column {n}, and {n}() is not on the reviewed list"
                )
        elif on_expression and n in known_function_names():
            raise self._attribute_call(
                n,
                shown,
                f"{n}() is not on the reviewed list, and without the server's "
                "catalog the guard cannot tell the field from the call",
            )

    def _attribute_call(self, name: str, shown: str, why: str) -> Refused:
        return Refused(
            "attribute_call",
            f"{shown} may call function {name}() on the value before the dot "
            f"(PostgreSQL's attribute notation: x.f runs f(x)); {why}; select a real "
            f"column, or {_USE_STANDARD}",
            offending=name,
        )

    def relation(self, schema: str | None, name: str) -> None:
        why = denied_relation(schema, name)
        if why:
            n = name.lower()
            raise Refused(
                "denied_relation",
                f"reading {n} is not allowed: {why}; query the application's tables instead",
                offending=n,
            )
