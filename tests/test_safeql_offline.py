"""Without the embedding model (an air-gapped site, a fresh clone): SafeQL says so once, in one line, attempts
no download it cannot make, and still repairs by spelling (token distance is min(embedding, characters))."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from actsagent.safeql import embeddings, refine


@pytest.fixture
def no_model(tmp_path, monkeypatch):
    """The model path points nowhere; loaded models and shared embedders are forgotten before and after."""
    monkeypatch.setenv("ACTSAGENT_EMBED_MODEL_PATH", str(tmp_path / "no-model-here"))
    monkeypatch.setenv(embeddings.CACHE_DIR_VAR, str(tmp_path / "embeddings"))  # not the sessions' shared one
    monkeypatch.setattr(embeddings, "_MODELS", {})
    probes = []
    monkeypatch.setattr(embeddings, "_hub_reachable", lambda: probes.append(1) or False)
    embeddings._shared_embedder.cache_clear()
    yield probes
    embeddings._shared_embedder.cache_clear()


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "actsagent.safeql" and r.levelno == logging.WARNING]


def test_refine_resolves_an_unknown_column_without_the_model(no_model, sqlite_db, pg_db, caplog):
    caplog.set_level(logging.WARNING, logger="actsagent.safeql")
    for db in (sqlite_db, pg_db, sqlite_db):
        res = refine(db, "SELECT nme FROM customers WHERE country = 'DE'")
        assert res.status == "refined", res.why
        assert res.refined_sql.replace('"', "") == "SELECT name FROM customers WHERE country = 'DE'"
        assert res.error_class == "unknown_column" and res.rows_preview == [["Ada"]]
    said = _warnings(caplog)
    assert len(said) == 1 and "\n" not in said[0]
    assert "no embedding model at" in said[0] and "ACTSAGENT_EMBED_MODEL_PATH" in said[0]
    assert no_model == []  # an explicit path is used as it is: no download is attempted


def test_without_the_model_every_embedding_distance_is_the_maximum(no_model):
    emb = embeddings.shared_embedder()
    assert not emb.available
    assert emb.distance("population", "pop") == 2.0
    assert emb.distances("name", emb.embed(["name", "title"])).tolist() == [2.0, 2.0]


def test_no_local_copy_and_an_unreachable_hub_gives_up_at_once(tmp_path, monkeypatch, caplog):
    """No path at all, nothing in fastembed's cache, and a hub that refuses connections (a closed loopback port)."""
    import huggingface_hub.constants

    monkeypatch.setattr(embeddings, "_MODELS", {})
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    caplog.set_level(logging.WARNING, logger="actsagent.safeql")
    assert embeddings._load_model(None) is None
    assert embeddings._load_model(None) is None
    said = _warnings(caplog)
    assert len(said) == 1 and "model hub is unreachable" in said[0] and "ACTSAGENT_EMBED_MODEL_PATH" in said[0]


def test_a_broken_model_folder_is_reported_not_raised(tmp_path, monkeypatch, caplog):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    monkeypatch.setattr(embeddings, "_MODELS", {})
    caplog.set_level(logging.WARNING, logger="actsagent.safeql")
    assert embeddings._load_model(str(broken)) is None
    said = _warnings(caplog)
    assert len(said) == 1 and f"from {broken}" in said[0]


def test_cli_refine_warns_once_on_stderr_and_repairs(tmp_path, sqlite_db):
    env = {**os.environ, "ACTSAGENT_EMBED_MODEL_PATH": str(tmp_path / "nowhere"), "ACTSAGENT_HOME": str(tmp_path)}
    env.pop(embeddings.CACHE_DIR_VAR, None)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from actsagent.cli import main; main()",
            "refine",
            "SELECT nme FROM customers",
            "--db",
            str(sqlite_db.path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SELECT name FROM customers" in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: no embedding model at"), proc.stderr
    assert "Traceback" not in proc.stderr
