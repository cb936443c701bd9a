"""Where the benchmark data and the embedding model are looked for: the variables first; the ``shared/``
folder beside a source checkout only as the development fallback; an installed package never guesses."""

from __future__ import annotations

import pytest

from actsagent import config
from actsagent.benchmarks import data_root
from actsagent.birdcritic.tasks import data_dir
from actsagent.errors import UserError


def test_variables_name_the_data(monkeypatch, tmp_path):
    monkeypatch.setenv("ACTSAGENT_DATA_DIR", str(tmp_path / "all"))
    monkeypatch.delenv("ACTSAGENT_BIRDCRITIC_DIR", raising=False)
    monkeypatch.delenv("ACTSAGENT_BENCH_DATA", raising=False)
    assert data_dir() == tmp_path / "all" / "birdcritic"
    assert data_root() == tmp_path / "all" / "realerrors"
    monkeypatch.setenv("ACTSAGENT_BIRDCRITIC_DIR", str(tmp_path / "bc"))
    monkeypatch.setenv("ACTSAGENT_BENCH_DATA", str(tmp_path / "re"))
    assert data_dir() == tmp_path / "bc" and data_root() == tmp_path / "re"


def test_without_variables_only_a_checkout_looks_beside_itself(monkeypatch):
    for var in ("ACTSAGENT_DATA_DIR", "ACTSAGENT_BIRDCRITIC_DIR", "ACTSAGENT_BENCH_DATA", "ACTSAGENT_EMBED_MODEL_PATH"):
        monkeypatch.delenv(var, raising=False)
    shared = config.checkout_shared()
    assert shared is not None and shared.name == "shared"  # the tests run from a checkout beside shared/
    assert data_dir() == shared / "data" / "birdcritic"
    monkeypatch.setattr(config, "checkout_shared", lambda: None)  # as in an installed package
    with pytest.raises(UserError, match="ACTSAGENT_BIRDCRITIC_DIR"):
        data_dir()
    with pytest.raises(UserError, match="ACTSAGENT_BENCH_DATA"):
        data_root()
    assert config.default_model_path() is None
