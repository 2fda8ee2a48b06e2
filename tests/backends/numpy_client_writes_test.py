#!/usr/bin/env python3
"""The numpy client answers each request in one write(), whatever PYTHONUNBUFFERED says.

Under PYTHONUNBUFFERED=1 (python3 -u; many container images set it) sys.stdout.buffer is the raw
file, and a client that writes its JSON line and then its payload makes two system calls per answer:
the harness wakes on the line, finds no payload yet, and sleeps again. The client's stdout here is
one end of a SOCK_SEQPACKET socket pair, which keeps the boundary of every write(): each recv() below
returns exactly what one write() sent. An answer that fits the client's buffer must be one record;
a larger one must arrive whole. Each answer's values are checked against numpy in this process.

    numpy_client_writes_test.py CLIENT    (with a python3 that has numpy)
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np

CLIENT = sys.argv[1]
BUFFER = 1 << 16  # the client's response buffer (numpy_backend.response_stream)


def requests():
    """(request, input arrays, the expected answer) for answers of several sizes."""
    a = np.arange(6, dtype="<f8").reshape(2, 3) / 4
    b = np.arange(12, dtype="<f8").reshape(3, 4) - 5
    x = np.arange(12, dtype="<f4").reshape(3, 4) * 0.5
    u = np.arange(120, dtype="<f8")
    v = np.arange(100, dtype="<f8") / 8
    return [
        ({"op": "einsum", "pattern": "i j, j k -> i k", "subscripts": "ab,bc->ac", "dtype": "f64",
          "inputs": [{"shape": [2, 3]}, {"shape": [3, 4]}]}, [a, b], a @ b),
        ({"op": "reduce", "pattern": "a b -> a", "reduction": "sum", "axis_lengths": {}, "dtype": "f32",
          "inputs": [{"shape": [3, 4]}]}, [x], x.sum(axis=1)),
        ({"op": "einsum", "pattern": "i ->", "subscripts": "a->", "dtype": "f64",
          "inputs": [{"shape": [0]}]}, [np.zeros(0, dtype="<f8")], np.float64(0)),
        # 96000 bytes: more than the buffer holds.
        ({"op": "einsum", "pattern": "i, j -> i j", "subscripts": "a,b->ab", "dtype": "f64",
          "inputs": [{"shape": [120]}, {"shape": [100]}]}, [u, v], np.outer(u, v)),
    ]


def records_of_one_answer(sock, expected_bytes):
    """The records of one answer: its JSON line and then `expected_bytes` payload bytes."""
    records = [sock.recv(1 << 20)]
    if not records[0]:
        raise SystemExit("FAIL: the client closed its stdout")
    data = records[0]
    line_end = data.find(b"\n")
    while line_end < 0 or len(data) < line_end + 1 + expected_bytes:
        more = sock.recv(1 << 20)
        if not more:
            raise SystemExit("FAIL: the client stopped inside an answer")
        records.append(more)
        data += more
        line_end = data.find(b"\n")
    if len(data) != line_end + 1 + expected_bytes:
        raise SystemExit("FAIL: %d bytes after the line, expected %d" % (len(data) - line_end - 1, expected_bytes))
    return records, json.loads(data[:line_end]), data[line_end + 1:]


def run(unbuffered):
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    client = subprocess.Popen([sys.executable, CLIENT], stdin=subprocess.PIPE, stdout=theirs.fileno(), env=env)
    theirs.close()
    try:
        client.stdin.write(b'{"protocol":"einfuzz-backend/1","hello":true}\n')
        client.stdin.flush()
        hello = ours.recv(1 << 20)
        assert json.loads(hello)["name"] == "numpy", hello
        for rid, (request, inputs, expected) in enumerate(requests(), 1):
            request = dict(request, id=rid)
            client.stdin.write(json.dumps(request).encode() + b"\n" + b"".join(t.tobytes() for t in inputs))
            client.stdin.flush()
            expected = np.asarray(expected, dtype=inputs[0].dtype)
            records, header, payload = records_of_one_answer(ours, expected.nbytes)
            what = "PYTHONUNBUFFERED=%s, request %d (%s, %d payload bytes)" % (
                "1" if unbuffered else "unset", rid, request["pattern"], expected.nbytes)
            if header != {"id": rid, "status": "ok", "shape": list(expected.shape)}:
                raise SystemExit("FAIL: %s: header %r" % (what, header))
            got = np.frombuffer(payload, dtype=expected.dtype).reshape(expected.shape)
            if not np.array_equal(got, expected):
                raise SystemExit("FAIL: %s: values %r, expected %r" % (what, got, expected))
            line = len(json.dumps(header)) + 1
            if line + expected.nbytes <= BUFFER and len(records) != 1:
                raise SystemExit("FAIL: %s: the answer came in %d writes (%s bytes), not one" % (
                    what, len(records), ", ".join(str(len(r)) for r in records)))
            print("ok: %s: %d write(s)" % (what, len(records)))
        client.stdin.write(b'{"bye":true}\n')
        client.stdin.flush()
    finally:
        client.stdin.close()
        client.wait(timeout=30)
        ours.close()
    if client.returncode != 0:
        raise SystemExit("FAIL: the client exited with status %d" % client.returncode)


if __name__ == "__main__":
    run(unbuffered=True)
    run(unbuffered=False)
    print("PASS")
