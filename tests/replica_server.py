"""A copilot replica in a process of its own, driven by the scripted model: ``python replica_server.py DB STORE PORT LEASE``.

Tests start two of them on one PostgreSQL store, each with an ACTSAGENT_HOME of its own, so nothing but the
store is shared between them.
"""

from __future__ import annotations

import sys

import uvicorn
from copilot_script import copilot_model

from actsagent.web import create_app

if __name__ == "__main__":
    db, store, port, lease = sys.argv[1:5]
    app = create_app(db=db, model=copilot_model(), store_path=store, lease_s=float(lease))
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", access_log=False)
