"""The real graph on BIRD-CRITIC flash tasks, replaying exchanges a careful reader wrote through the llm-relay.

``tests/fixtures/llm/relay_flash/`` holds every request the agent sent on flash tasks 0, 1, 2, 3, 4,
8, 12 and 13 and the answer it got, recorded with ``evals/relay_smoke.py`` (model name ``relay``).
Replaying them with model requests forbidden shows that the prompts, the JSON formats and the
parsing survive a real reader, and that the prompts are deterministic. A change to a prompt, to the
schema listing or to any evidence the prompts quote makes these tests fail with a ReplayMiss:
re-record with

    python3 ../shared/tools/llm-relay/relay.py serve --dir /tmp/relay --port 18900 &
    rm -r tests/fixtures/llm/relay_flash
    OPENAI_BASE_URL=http://127.0.0.1:18900/v1 OPENAI_API_KEY=none ACTSAGENT_MODEL=relay \\
        python evals/relay_smoke.py --ids 0,1,2,3,4,8,12,13 --verify-replay

Only the public task fields reach the agent; these runs are smoke tests, not benchmark figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "llm" / "relay_flash"
TASK_IDS = ["0", "1", "2", "3", "4", "8", "12", "13"]


@pytest.fixture(scope="module")
def replay_model():
    from actsagent.llm import LLMConfig, RoleModels, openai_model

    assert openai_model.ALLOW_MODEL_REQUESTS is False  # replay only: nothing may reach a model
    config = LLMConfig.from_env(models=RoleModels(planner="relay", tools="relay", judge="relay"),
                                cache_mode="replay_only", cache_dir=FIXTURES, max_retries=0,
                                api_key="none", base_url="http://127.0.0.1:9/v1")
    return llm.get_chat_model(config)


@pytest.mark.parametrize("instance_id", TASK_IDS)
def test_flash_task_replays_through_the_tree_graph(instance_id, replay_model, pg_admin_url):
    from actsagent.agent import repair
    from actsagent.birdcritic.systems import join_statements
    from actsagent.birdcritic.tasks import load_tasks
    from actsagent.birdcritic.templates import ensure_templates
    from actsagent.config import Limits
    from actsagent.db.sandbox import sandbox
    from actsagent.guard import Policy

    (task,) = load_tasks("flash", ids=[instance_id])
    assert not hasattr(task, "sol_sql") and not hasattr(task, "test_cases")
    template = ensure_templates([task.db_id])[task.db_id]
    assert template.ok, template.reason
    calls_before = replay_model.ledger.totals().calls
    with sandbox(template.url, limits=Limits(statement_timeout_s=60.0, max_rows=10_000)) as work:
        if task.preprocess_sql:
            work.execute_script(task.preprocess_sql, timeout_s=60)
        run = repair(task.query, join_statements(task.issue_sql), work, model=replay_model,
                     policy=Policy.sandbox())
    totals = replay_model.ledger.totals()
    calls = totals.calls - calls_before
    assert calls >= 3  # planner, a generate_sql step and the judge at least
    assert totals.cached_calls == totals.calls  # every answer came from the recordings
    assert run.status == "solved", run.notes
    assert run.final_sql_statements and run.verdict is not None
    assert not run.model_failures
    assert run.tree.render_text().count("generate_sql") >= 1
