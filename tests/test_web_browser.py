"""End to end in real headless Chromium (Debian's, driven by Playwright): the copilot page on the
demo database with the real agent and a scripted model. With CI=true a missing browser fails."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from copilot_script import ORDERS_BY_STATUS, copilot_model
from web_server import LiveServer

from actsagent.demo import ensure_demo
from actsagent.web import create_app

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000


def _chromium() -> str:
    exe = os.environ.get("ACTSAGENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        msg = "Debian's chromium is not installed (apt-get install chromium, or bash .ci/install_browser.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return exe


@pytest.fixture(scope="module")
def browser() -> Iterator:
    exe = _chromium()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)  # an agent run takes seconds on 2 shared cores
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def demo_db():
    db = ensure_demo()
    yield db
    db.close()


@pytest.fixture(scope="module")
def copilot_url(demo_db, tmp_path_factory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("copilot") / "copilot.sqlite"
    with LiveServer(create_app(db=demo_db, model=copilot_model(), store_path=store)) as url:
        yield url


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1360, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(WAIT_MS)
    yield pg
    ctx.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _send(page, text: str) -> None:
    page.get_by_test_id("composer-input").fill(text)
    page.get_by_test_id("composer-input").press("Enter")


def test_ask_edit_rerun_and_reload(page, copilot_url):
    from playwright.sync_api import expect

    page.goto(copilot_url)
    expect(page.get_by_test_id("llm-badge")).to_contain_text("scripted")
    _send(page, "How many orders per status?")
    turn = page.get_by_test_id("turn").last
    expect(turn.get_by_test_id("user-message")).to_have_text("How many orders per status?")
    # the plan tree (run, write, and the direct rewrite that confirmed it), then the SQL, the rows, the words
    # and the chart
    expect(turn.get_by_test_id("plan-node")).to_have_count(3)
    expect(turn.locator("[data-testid=plan-node][data-status=accepted]")).to_contain_text("write the final SQL")
    expect(turn.get_by_test_id("final-sql")).to_have_text(ORDERS_BY_STATUS)
    rows = turn.locator("[data-testid=result-table] tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.first.locator("td").first).to_have_text("PAID")
    expect(turn.get_by_test_id("answer-text")).to_have_text("Scripted answer in words.")
    expect(turn.locator("[data-testid=chart] svg rect.ch-bar")).to_have_count(3)
    expect(turn.get_by_test_id("turn-status")).to_contain_text("answered")
    expect(page.get_by_test_id("conversation-item").first).to_contain_text("How many orders per status?")

    # edit the SQL and rerun it: a new answer, run through the guard
    turn.get_by_test_id("edit-sql").click()
    editor = turn.get_by_test_id("sql-editor")
    editor.fill("SELECT status, count(*) AS orders FROM orders WHERE status <> 'PAID' GROUP BY status ORDER BY 1")
    turn.get_by_test_id("run-edited").click()
    rerun = page.get_by_test_id("turn").nth(1)
    expect(rerun.get_by_test_id("user-message")).to_contain_text("WHERE status <> 'PAID'")
    expect(rerun.locator("[data-testid=result-table] tbody tr")).to_have_count(2)
    expect(rerun.locator("[data-testid=result-table] tbody tr").first.locator("td").first).to_have_text("CANCELLED")
    expect(rerun.get_by_test_id("final-sql")).to_contain_text("LIMIT")

    # a write is refused by the guard and shown as a message
    turn2 = rerun
    turn2.get_by_test_id("edit-sql").click()
    turn2.get_by_test_id("sql-editor").fill("DELETE FROM orders")
    turn2.get_by_test_id("run-edited").click()
    refused = page.get_by_test_id("turn").nth(2)
    expect(refused.get_by_test_id("error-message")).to_contain_text("The SQL safety guard refused this statement")
    expect(refused.get_by_test_id("turn-status")).to_have_text("failed")

    # reload: the conversation is in the sidebar and opens with its answers
    url = page.url
    assert re.search(r"#/c/\w+", url)
    page.reload()
    expect(page.get_by_test_id("conversation-item").first).to_contain_text("How many orders per status?")
    expect(page.get_by_test_id("turn")).to_have_count(3)
    expect(page.get_by_test_id("final-sql").first).to_have_text(ORDERS_BY_STATUS)
    expect(page.get_by_test_id("turn").first.locator("[data-testid=result-table] tbody tr")).to_have_count(3)
    # and from a fresh page, through the sidebar
    page.goto(copilot_url)
    page.get_by_test_id("conversation-item").first.click()
    expect(page.get_by_test_id("turn")).to_have_count(3)


def test_clarification_offers_the_readings_and_resumes_on_the_click(page, copilot_url):
    from playwright.sync_api import expect

    page.goto(copilot_url)
    page.get_by_test_id("new-conversation").click()
    _send(page, "What is the revenue per product category?")
    turn = page.get_by_test_id("turn").last
    options = turn.get_by_test_id("clarify-option")
    expect(options).to_have_count(2)
    expect(turn.get_by_test_id("clarify")).to_contain_text("Which orders should count as revenue?")
    expect(turn.get_by_test_id("turn-status")).to_have_text("needs your answer")
    expect(turn.get_by_test_id("final-sql")).to_have_count(0)
    turn.get_by_role("button", name="only PAID orders").click()
    expect(turn.get_by_test_id("final-sql")).to_contain_text("o.status = 'PAID'")
    expect(turn.get_by_test_id("clarify-answer")).to_have_text("You answered: only PAID orders")
    expect(turn.locator("[data-testid=plan-node][data-status=skipped]")).to_contain_text("all orders")
    expect(turn.locator("[data-testid=plan-node][data-status=accepted]")).to_contain_text("only PAID orders")
    expect(turn.locator("[data-testid=result-table] tbody tr")).not_to_have_count(0)
    # the run's notes are shown with the answer, as text
    expect(turn.get_by_test_id("run-notes")).to_contain_text("user clarified 'revenue': only PAID orders")
    page.reload()
    expect(page.get_by_test_id("clarify-answer")).to_have_text("You answered: only PAID orders")
    expect(page.get_by_test_id("run-notes").last).to_contain_text("user clarified")
    expect(page.get_by_test_id("final-sql")).to_contain_text("o.status = 'PAID'")


def test_token_prompt_and_no_llm_banner(browser, demo_db, tmp_path):
    from playwright.sync_api import expect

    app = create_app(db=demo_db, model=None, store_path=tmp_path / "c.sqlite", token="open-sesame")
    with LiveServer(app) as url:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        expect(page.get_by_test_id("token-modal")).to_be_visible()
        page.get_by_test_id("token-input").fill("wrong")
        page.get_by_test_id("token-submit").click()
        expect(page.locator("#token-error")).to_have_text("That token is not right.")
        page.get_by_test_id("token-input").fill("open-sesame")
        page.get_by_test_id("token-submit").click()
        expect(page.get_by_test_id("token-modal")).to_be_hidden()
        expect(page.get_by_test_id("no-llm-banner")).to_contain_text("No LLM is configured")
        page.get_by_test_id("mode-run").click()
        _send(page, "SELECT count(*) AS customers FROM customers")
        expect(page.locator("[data-testid=result-table] tbody tr")).to_have_count(1)  # the stream used ?token=
        # SQL that fails: the error is marked in the SQL, and the LLM-free agent repairs it on request
        _send(page, "SELECT statuss, count(*) AS n FROM orders GROUP BY statuss")
        failed = page.get_by_test_id("turn").nth(1)
        expect(failed.get_by_test_id("error-message")).to_contain_text("statuss")
        expect(failed.locator("mark.err-pos")).to_have_text("statuss")
        failed.get_by_test_id("repair-sql").click()
        repaired = page.get_by_test_id("turn").nth(2)
        expect(repaired.get_by_test_id("user-message")).to_contain_text("Repair this SQL")
        expect(repaired.locator("[data-testid=result-table] tbody tr")).to_have_count(3)
        expect(repaired.get_by_test_id("final-sql")).not_to_contain_text("statuss")
        expect(repaired.get_by_test_id("plan-node").first).to_be_visible()
        ctx.close()
