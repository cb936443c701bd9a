#!/usr/bin/env bash
# The Ray engine's tests (tests/test_batch_engine_ray.py) need the optional extra actsagent[ray].
set -euo pipefail
.venv/bin/pip install -q -e ".[ray]"
.venv/bin/python -c "import ray; print('ray', ray.__version__)"
