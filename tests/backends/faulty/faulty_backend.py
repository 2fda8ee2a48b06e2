#!/usr/bin/env python3
"""A PROTOCOL A backend that misbehaves on purpose (protocol_tests).

Usage: faulty_backend.py MODE. It answers every case correctly as a passthrough (`i -> i` on f64:
the output is the input), except a case whose pattern uses the label `boom`, where it does what
MODE says. Needs only python3 (no numpy).
"""

import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def send_line(obj):
    stdout.write(json.dumps(obj).encode() + b"\n")
    stdout.flush()


def read_exact(n):
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


hello_mode = MODE.startswith("hello-")
while True:
    line = stdin.readline()
    if not line:
        sys.exit(0)
    msg = json.loads(line)
    if msg.get("bye"):
        sys.exit(0)
    if msg.get("hello"):
        if MODE == "hello-garbage":
            stdout.write(b"this is not json\n")
            stdout.flush()
            continue
        if MODE == "hello-exit":
            sys.stderr.write("cannot initialise: missing licence file\n")
            sys.exit(7)
        if MODE == "hello-wrong-protocol":
            send_line({"protocol": "einfuzz-backend/0"})
            continue
        if MODE == "slow-hello":
            time.sleep(0.3)
        send_line({"protocol": "einfuzz-backend/1", "name": "faulty " + MODE, "dtypes": ["f64"]})
        continue
    payloads = [read_exact(elements(i["shape"]) * 8) for i in msg["inputs"]]
    rid = msg["id"]
    shape = msg["inputs"][0]["shape"] if msg["inputs"] else []
    body = payloads[0] if payloads else b""
    if "boom" not in msg["pattern"]:
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
        continue
    # The fault.
    if MODE == "crash":
        sys.stderr.write("faulty: about to crash\nfaulty: segfault now\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    elif MODE == "exit":
        sys.stderr.write("faulty: giving up\n")
        sys.exit(3)
    elif MODE == "hang":
        time.sleep(3600)
    elif MODE == "wrong-id":
        send_line({"id": rid + 1, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "no-id":
        send_line({"status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "short":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body[: len(body) // 2])
        stdout.flush()
        time.sleep(3600)
    elif MODE == "short-exit":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body[: len(body) // 2])
        stdout.flush()
        sys.exit(0)
    elif MODE == "long":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body + b"\x00" * 8)
        stdout.flush()
    elif MODE == "shape-bytes":
        # A shape that disagrees with the bytes: one element more announced than sent, then exit.
        send_line({"id": rid, "status": "ok", "shape": [elements(shape) + 1]})
        stdout.write(body)
        stdout.flush()
        sys.exit(0)
    elif MODE == "garbage":
        stdout.write(b"{\"id\": 1, \"status\": \"ok\", \"shape\": [\n")
        stdout.flush()
    elif MODE == "not-object":
        send_line([rid, "ok"])
    elif MODE == "bad-status":
        send_line({"id": rid, "status": "maybe"})
    elif MODE == "huge":
        send_line({"id": rid, "status": "ok", "shape": [1 << 40, 1 << 40]})
        stdout.write(body)
        stdout.flush()
    elif MODE == "flood-stderr":
        chunk = b"x" * 1023 + b"\n"
        for _ in range(20 * 1024):  # 20 MiB
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(b"faulty: last stderr line\n")
        sys.stderr.flush()
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "flood-stderr-forever":
        while True:
            sys.stderr.buffer.write(b"y" * 4095 + b"\n")
    elif MODE == "flood-stdout":
        while True:
            stdout.write(b"z" * 65536)
    elif MODE == "non-utf8":
        stdout.write(b"{\"id\": %d, \"status\": \"error\", \"message\": \"\xff\xfe\"}\n" % rid)
        stdout.flush()
    elif MODE == "deep-json":
        stdout.write(b"[" * 100000 + b"\n")
        stdout.flush()
    elif MODE == "error":
        send_line({"id": rid, "status": "error", "message": "faulty rejects", "code": "rankMismatch"})
    else:
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
