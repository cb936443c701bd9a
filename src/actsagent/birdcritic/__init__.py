"""BIRD-CRITIC: repair tasks run against disposable database copies and scored by our own scorer.

The split between ``PublicTask`` (what a user would have) and ``ScoringKeys`` (``sol_sql`` and
``test_cases``) is the point of this package: systems under test only ever receive the former.
"""

from actsagent.birdcritic.tasks import PublicTask, TaskSet, load_tasks

__all__ = ["PublicTask", "TaskSet", "load_tasks"]
