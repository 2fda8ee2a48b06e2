"""PROTOCOL A framing for the test backends (faulty, hostile, zero): one JSON line per message,
payloads as raw bytes after it. Needs only python3 (no numpy).

A backend script imports it with `sys.path.insert(0, <tests/support>)`; `requests()` yields each
request until stdin closes or a `bye` arrives.
"""

import json
import sys

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def send(obj, payload=b""):
    """One JSON line, then `payload`, flushed together."""
    stdout.write(json.dumps(obj).encode() + b"\n" + payload)
    stdout.flush()


def read_exact(n):
    """n payload bytes; a stdin closed inside a payload ends the backend (status 0)."""
    data = b""
    while len(data) < n:
        chunk = stdin.read(n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data


def elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def requests():
    """Each message (a dict, the hello included) until EOF or `bye`."""
    for line in iter(stdin.readline, b""):
        msg = json.loads(line)
        if msg.get("bye"):
            return
        yield msg
