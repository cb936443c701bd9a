"""The embeddings' disk cache: shared by processes (and embedders) on one directory, each text embedded once even
when two ask at the same moment, and a damaged or foreign vector in the file is never used."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing

import numpy as np
import pytest

from actsagent.safeql import embeddings
from actsagent.safeql.embeddings import Embedder


class _CountingModel:
    """Stands in for the ONNX model: a fixed vector per text, and every text it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts, batch_size=256):
        with self._lock:
            self.asked.extend(texts)
        for t in texts:
            rng = np.random.default_rng(sum(map(ord, t)))
            yield rng.normal(size=384).astype(np.float32)


@pytest.fixture
def model(monkeypatch):
    m = _CountingModel()
    monkeypatch.setattr(Embedder, "model", property(lambda self: m))
    return m


TEXTS = ["customer name", "order total", "ordered at", "country"]


def test_a_second_embedder_on_the_directory_reads_what_the_first_embedded(tmp_path, model, monkeypatch):
    first = Embedder("some/model", cache_dir=tmp_path).embed(TEXTS)
    assert sorted(model.asked) == sorted(TEXTS)
    monkeypatch.setenv(embeddings.CACHE_DIR_VAR, str(tmp_path))  # the directory named by the environment
    again = Embedder("some/model").embed(TEXTS)
    assert sorted(model.asked) == sorted(TEXTS)  # nothing embedded twice
    assert np.array_equal(first, again) and np.allclose(np.linalg.norm(again, axis=1), 1.0)
    Embedder("another/model", cache_dir=tmp_path).embed(TEXTS[:1])  # another model has a cache of its own
    assert len(model.asked) == len(TEXTS) + 1


def test_embedders_asking_at_the_same_moment_embed_each_text_once(tmp_path, model):
    start, out = threading.Barrier(4), []

    def work() -> None:
        e = Embedder("some/model", cache_dir=tmp_path)
        start.wait()
        out.append(e.embed(TEXTS))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and all(np.array_equal(out[0], v) for v in out)
    assert sorted(model.asked) == sorted(TEXTS)


@pytest.mark.parametrize(
    "damage",
    [b"short", np.zeros(384, dtype=np.float32).tobytes(), np.full(384, np.nan, dtype=np.float32).tobytes(), 7],
    ids=["wrong size", "not unit length", "not finite", "not bytes"],
)
def test_a_damaged_vector_in_the_file_is_embedded_again(tmp_path, model, damage):
    good = Embedder("some/model", cache_dir=tmp_path)
    vecs = good.embed(TEXTS)
    with closing(sqlite3.connect(good.cache_path)) as db, db:
        db.execute("UPDATE vec SET v = ? WHERE text = ?", (damage, TEXTS[1]))
    model.asked.clear()
    again = Embedder("some/model", cache_dir=tmp_path).embed(TEXTS)
    assert model.asked == [TEXTS[1]] and np.array_equal(again, vecs)
    with closing(sqlite3.connect(good.cache_path)) as db:  # and the file holds the right vector again
        (blob,) = db.execute("SELECT v FROM vec WHERE text = ?", (TEXTS[1],)).fetchone()
    assert np.array_equal(np.frombuffer(blob, dtype=np.float32), vecs[1])
