"""The SQL safety guard: one parsed read query, reviewed functions, a forced row limit.

``check_sql`` says yes (``GuardedSQL`` with the regenerated SQL to run) or no (``GuardRejection``
with a rule and a reason an LLM can act on); ``run_guarded`` checks then executes. The database
role (``actsagent.db.roles``) is the second layer: the guard is a filter, not a proof.
"""

from actsagent.guard.check import check_sql
from actsagent.guard.functions import ALLOWED, DENIED, DENIED_PREFIXES, SAFE_SETTINGS, denied_reason
from actsagent.guard.models import GuardedSQL, GuardRejection, GuardResult, Policy
from actsagent.guard.relations import DENIED_RELATIONS, denied_relation
from actsagent.guard.run import rejection_error, run_guarded
from actsagent.guard.split import split_statements

__all__ = [
    "ALLOWED",
    "DENIED",
    "DENIED_PREFIXES",
    "DENIED_RELATIONS",
    "SAFE_SETTINGS",
    "GuardRejection",
    "GuardResult",
    "GuardedSQL",
    "Policy",
    "check_sql",
    "denied_reason",
    "denied_relation",
    "rejection_error",
    "run_guarded",
    "split_statements",
]
