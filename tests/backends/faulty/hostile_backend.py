#!/usr/bin/env python3
"""A PROTOCOL A backend for survive_test.sh: it leaves a grandchild that escapes its process group.

Usage: hostile_backend.py MODE DIR. On start it runs `sleep 600` in a new session (setsid: outside
the process group the harness kills) and appends that pid to DIR/escaped.pids, then answers the
hello (einsum and reduce, every dtype). MODE `hang`: never answers a case. MODE `hang-restart`:
never answers a case, and once a case has been asked (DIR/asked exists) it never answers a hello
either, so every restart hangs too. Needs only python3.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from protocol_a import requests, send  # noqa: E402

MODE, DIR = sys.argv[1], sys.argv[2]
escaped = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(os.path.join(DIR, "escaped.pids"), "a") as f:
    f.write(f"{escaped.pid}\n")

for msg in requests():
    if msg.get("hello"):
        if MODE == "hang-restart" and os.path.exists(os.path.join(DIR, "asked")):
            time.sleep(3600)
        send({"protocol": "einfuzz-backend/1", "name": "hostile", "ops": ["einsum", "reduce"],
              "dtypes": ["f32", "f64", "i32", "i64", "bool"],
              "reductions": ["sum", "prod", "mean", "min", "max", "any", "all"]})
        continue
    open(os.path.join(DIR, "asked"), "w").close()
    time.sleep(3600)
