#!/usr/bin/env python3
"""einfuzz reference client of PROTOCOL A (einfuzz-backend/1): numpy.einsum and numpy reductions.

Reads one JSON line per message on stdin (plus raw little-endian payloads), answers on stdout.
`--optimize` runs numpy.einsum with optimize=True (contraction paths through tensordot/BLAS);
without it optimize=False (numpy's own sum-of-products loops). Reduce patterns are einops-style
(`b (h 2) (w 2) -> b h w`, `a ... -> a`, `a b -> () a 1`) and are reduced with np.sum / np.mean /
np.prod / np.min / np.max / np.any / np.all after a reshape, as einops does with numpy. Inputs that
carry a `layout` (the strided extension, docs/protocol.md) are built as views with
numpy.lib.stride_tricks.as_strided, so numpy's stride handling is what gets tested.

Needs only Debian's python3 and python3-numpy.
"""

import io
import json
import math
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

PROTOCOL = "einfuzz-backend/1"
DTYPES = {"f32": np.dtype("<f4"), "f64": np.dtype("<f8"), "i32": np.dtype("<i4"),
          "i64": np.dtype("<i8"), "bool": np.dtype(np.bool_), "f16": np.dtype("<f2")}
# numpy has no bfloat16, so bf16 is not declared. f16 accumulates in f16 (the default, declared
# explicitly): np.sum along an outer axis adds row by row in f16 (3000 ones -> 2048), and so do
# einsum's sum-of-products loops (optimize off and on); only the contiguous inner-axis sum (pairwise,
# in float) and np.mean (dtype float32 inside) hold partial sums wider. The narrowest that holds for
# every path is f16.
ACCUMULATE = {"f16": "f16"}
REDUCTIONS = ("sum", "mean", "prod", "min", "max", "any", "all")


class Reject(Exception):
    """The case is bad input for this client (answered with status "error")."""


class Unsupported(Exception):
    """The case is outside what this client expresses (answered with status "unsupported")."""


# ------------------------------------------------------------------------------------------------
# einops-style pattern parsing (enough for the einsum front end and for reduce)

def tokenize(text):
    """Words, '(', ')', ',', '->', '...'; only U+0020 separates (SEMANTICS §1.1)."""
    tokens = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == " ":
            i += 1
        elif c in "(),":
            tokens.append(c)
            i += 1
        elif text.startswith("->", i):
            tokens.append("->")
            i += 2
        elif text.startswith("...", i) or c == "\u2026":
            n = 3 if c == "." else 1
            before = text[i - 1] if i > 0 else " "
            after = text[i + n] if i + n < len(text) else " "
            if before.isalnum() or before == "_" or after.isalnum() or after == "_" or after == ".":
                raise Reject("unknownCharacter: ellipsis touching a word or a fourth dot")
            tokens.append("...")
            i += n
        elif c.isalnum() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(text[i:j])
            i = j
        else:
            raise Reject("unknownCharacter: %r" % c)
    return tokens


def classify(word, allow_underscore):
    """('name', s) | ('anon', n) | ('unit', 1)."""
    if word.isdecimal():
        value = int(word)
        if value == 0:
            raise Reject("invalidAnonymousAxis: %r" % word)
        return ("unit", 1) if value == 1 else ("anon", value)
    if word == "_" and allow_underscore:
        return ("name", word)
    if not word.isidentifier() or word.startswith("_") or word.endswith("_"):
        raise Reject("invalidIdentifier: %r" % word)
    return ("name", word)


def parse_expression(tokens, allow_underscore, allow_duplicates):
    """A list of items; an item is ('atom', atom) or ('group', [atoms]); atoms as classify or ('...',)."""
    items = []
    seen = set()
    ellipses = 0
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "(":
            group = []
            i += 1
            while i < len(tokens) and tokens[i] != ")":
                if tokens[i] == "(":
                    raise Reject("nestedParenthesis")
                if tokens[i] in (",", "->"):
                    raise Reject("unexpectedToken: %r" % tokens[i])
                group.append(("...",) if tokens[i] == "..." else classify(tokens[i], allow_underscore))
                i += 1
            if i == len(tokens):
                raise Reject("unbalancedParenthesis")
            items.append(("group", [a for a in group if a[0] != "unit"]))
            atoms = group
        elif t == ")":
            raise Reject("unbalancedParenthesis")
        elif t in (",", "->"):
            raise Reject("unexpectedToken: %r" % t)
        else:
            atom = ("...",) if t == "..." else classify(t, allow_underscore)
            items.append(("atom", atom))
            atoms = [atom]
        for a in atoms:
            if a[0] == "...":
                ellipses += 1
            elif a[0] == "name" and not allow_duplicates and a[1] != "_":
                if a[1] in seen:
                    raise Reject("duplicateAxis: %r" % a[1])
                seen.add(a[1])
        i += 1
    if ellipses > 1:
        raise Reject("duplicateEllipsis")
    return items


def split_arrow(tokens):
    arrows = [i for i, t in enumerate(tokens) if t == "->"]
    if not arrows:
        raise Reject("missingArrow")
    if len(arrows) > 1:
        raise Reject("duplicateArrow")
    return tokens[:arrows[0]], tokens[arrows[0] + 1:]


def check_einsum_pattern(pattern):
    """Parse errors as einops would raise them; returns (distinct labels, numpy can spell it)."""
    left, right = split_arrow(tokenize(pattern))
    operands = [[]]
    for t in left:
        if t == ",":
            operands.append([])
        else:
            operands[-1].append(t)
    labels = set()
    spellable = True
    for items in [parse_expression(op, True, True) for op in operands] + [parse_expression(right, True, False)]:
        for item in items:
            atoms = item[1] if item[0] == "group" else [item[1]]
            labels.update(a[1] for a in atoms if a[0] == "name")
            # (a b), (), (...), unit and anonymous axes are not einsum axes; (a) and (a 1) are.
            if (item[0] == "group" and (len(atoms) != 1 or atoms[0][0] == "...")) or \
                    any(a[0] in ("anon", "unit") for a in atoms):
                spellable = False
    return len(labels), spellable


# ------------------------------------------------------------------------------------------------
# einsum

def run_einsum(request, arrays, optimize):
    if request["dtype"] == "bool":
        raise Reject("unsupportedDtype: einsum on bool")
    subscripts = request.get("subscripts")
    if subscripts is None:
        labels, spellable = check_einsum_pattern(request["pattern"])
        if not spellable:
            raise Reject("unsupportedEinsumAxis: einops einsum takes no groups, unit or anonymous axes")
        # More than 52 labels, counting one per summed ellipsis dimension (PROTOCOL A §2).
        raise Unsupported("numpy.einsum has 52 letters; this pattern needs more labels (%d names)" % labels)
    inputs, output = subscripts.split("->")
    if "..." in inputs and "..." not in output:
        raise Unsupported("numpy.einsum rejects an input ellipsis absent from the output "
                          "(the semantics sum it: SEMANTICS §10.1)")
    return np.asarray(np.einsum(subscripts, *arrays, optimize=optimize))


# ------------------------------------------------------------------------------------------------
# reduce

def run_reduce(request, arrays):
    if len(arrays) != 1:
        raise Reject("a reduce case has exactly one input")
    x = arrays[0]
    kind = request.get("reduction")
    if kind not in REDUCTIONS:
        raise Reject("unknownReduction: %r" % kind)
    dtype = request["dtype"]
    if kind in ("any", "all") and dtype != "bool":
        raise Unsupported("numpy any/all reduce any dtype by truthiness; the semantics need bool")
    if kind not in ("any", "all") and dtype == "bool":
        raise Reject("unsupportedDtype: %s on bool" % kind)
    if kind == "mean" and dtype in ("i32", "i64"):
        raise Reject("unsupportedDtype: einops mean on integers is NotImplementedError")

    left_t, right_t = split_arrow(tokenize(request["pattern"]))
    if "," in left_t or "," in right_t:
        raise Reject("unexpectedToken: ','")
    left = parse_expression(left_t, False, False)
    right = parse_expression(right_t, False, False)

    def has_ellipsis(items):
        return any(a[0] == "..." for it in items for a in (it[1] if it[0] == "group" else [it[1]]))

    if any(it[0] == "group" and any(a[0] == "..." for a in it[1]) for it in left):
        raise Reject("invalidEllipsis: ellipsis inside parentheses on the left")
    if has_ellipsis(right) and not has_ellipsis(left):
        raise Reject("invalidEllipsis: ellipsis on the right only")
    ellipsis = has_ellipsis(left)
    if (not ellipsis and len(left) != x.ndim) or (ellipsis and len(left) - 1 > x.ndim):
        raise Reject("rankMismatch: %d items for rank %d" % (len(left), x.ndim))
    left_names = {a[1] for it in left for a in (it[1] if it[0] == "group" else [it[1]]) if a[0] == "name"}
    for it in right:
        for a in (it[1] if it[0] == "group" else [it[1]]):
            if a[0] == "anon" or (a[0] == "name" and a[1] not in left_names):
                raise Reject("axisMismatch: %r is not an input axis" % (a[1],))

    # The harness never sends a repeated name (a JSON object could not carry it: PROTOCOL A §2).
    supplied = {}
    for name, length in (request.get("axis_lengths") or {}).items():
        if name not in left_names:
            raise Reject("unusedAxisLength: %r" % name)
        supplied[name] = length

    # Elementary axes in input order: (key, length); anonymous axes get a key per occurrence.
    axes = []
    dim = 0
    for position, it in enumerate(left):
        atoms = it[1] if it[0] == "group" else [it[1]]
        if it[0] == "atom" and atoms[0][0] == "...":
            count = x.ndim - (len(left) - 1)
            for k in range(count):
                axes.append((("...", k), x.shape[dim + k]))
            dim += count
            continue
        length = x.shape[dim]
        dim += 1
        known = 1
        unknown = []
        for a in atoms:
            if a[0] == "anon":
                known *= a[1]
            elif a[0] == "name" and a[1] in supplied:
                known *= supplied[a[1]]
            elif a[0] == "name":
                unknown.append(a[1])
        if len(unknown) > 1:
            raise Reject("cannotInferAxis: %s" % unknown)
        if len(unknown) == 1:
            if known == 0:
                raise Reject("cannotInferAxis" if length == 0 else "dimensionMismatch")
            if length % known != 0:
                raise Reject("dimensionMismatch: %d is not divisible by %d" % (length, known))
            inferred = length // known
        elif known != length:
            raise Reject("dimensionMismatch: %d != %d" % (known, length))
        for j, a in enumerate(atoms):
            if a[0] == "anon":
                axes.append((("anon", position, j), a[1]))
            elif a[0] == "name":
                axes.append((a[1], supplied.get(a[1], inferred if a[1] in unknown else None)))

    keys = [k for k, _ in axes]
    y = x.reshape([n for _, n in axes])
    kept_keys = set()
    out_order = []
    out_shape = []
    for it in right:
        atoms = it[1] if it[0] == "group" else [it[1]]
        group_keys = []
        for a in atoms:
            if a[0] == "...":
                group_keys.extend(k for k in keys if isinstance(k, tuple) and k[0] == "...")
            elif a[0] == "name":
                group_keys.append(a[1])
        out_order.extend(group_keys)
        kept_keys.update(group_keys)
        size = 1
        for k in group_keys:
            size *= axes[keys.index(k)][1]
        if it[0] == "group" or atoms[0][0] != "...":
            out_shape.append(size)
        else:  # a bare ellipsis: one output dimension per ellipsis dimension
            out_shape.extend(axes[keys.index(k)][1] for k in group_keys)
    reduced = tuple(i for i, k in enumerate(keys) if k not in kept_keys)
    fibre = 1
    for i in reduced:
        fibre *= axes[i][1]
    if kind == "mean" and fibre == 0:
        raise Unsupported("numpy's mean of an empty fibre is NaN (with a warning); the semantics reject it")
    if reduced:  # nothing reduced: einops passes the values through unchanged
        if kind == "sum":
            y = np.sum(y, axis=reduced, dtype=y.dtype)
        elif kind == "prod":
            y = np.prod(y, axis=reduced, dtype=y.dtype)
        elif kind == "mean":
            y = np.mean(y, axis=reduced)
        elif kind == "min":
            y = np.min(y, axis=reduced)
        elif kind == "max":
            y = np.max(y, axis=reduced)
        elif kind == "any":
            y = np.any(y, axis=reduced)
        else:
            y = np.all(y, axis=reduced)
    remaining = [k for k in keys if k in kept_keys]
    y = np.transpose(np.asarray(y), [remaining.index(k) for k in out_order])
    return y.reshape(out_shape)


# ------------------------------------------------------------------------------------------------
# the protocol

def read_exact(stream, n):
    chunks = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("stdin closed inside a payload")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_inputs(stream, request):
    """Reads every payload (always, so the stream stays in step) and builds the arrays. Returns the
    arrays and, when numpy cannot hold one of them, why (None otherwise): ndarray requires the
    product of the lengths to fit in intp even when a length is 0, so an empty operand whose other
    lengths multiply past 2^63 cannot be built. That is a case numpy cannot be asked, not an answer."""
    dtype = DTYPES.get(request.get("dtype"))
    arrays = []
    unrepresentable = None
    for spec in request.get("inputs", []):
        shape = tuple(int(n) for n in spec["shape"])
        layout = spec.get("layout")
        # math.prod: exact, and np.prod's array round trip cost a sixth of the client's time.
        count = int(layout["storage"]) if layout else math.prod(shape)
        item = dtype.itemsize if dtype is not None else 0
        data = read_exact(stream, count * item)
        if dtype is None:
            continue
        if unrepresentable is not None:
            continue
        try:
            flat = np.frombuffer(data, dtype=dtype, count=count)
            if layout:
                base = flat[int(layout["offset"]):]
                strides = tuple(int(s) * item for s in layout["strides"])
                arrays.append(as_strided(base, shape=shape, strides=strides, writeable=False))
            else:
                arrays.append(flat.reshape(shape))
        except ValueError as e:
            unrepresentable = "numpy cannot hold an input of shape %s: %s" % (list(shape), e)
    return arrays, unrepresentable


def hello(optimize):
    return {"protocol": PROTOCOL,
            "name": "numpy",
            "version": "%s, einsum optimize=%s" % (np.__version__, bool(optimize)),
            "ops": ["einsum", "reduce"],
            "dtypes": list(DTYPES),
            "reductions": list(REDUCTIONS),
            "semantics": "any-order",
            "nan_profile": "propagate",
            # Both factor sums out of products: optimize=True contracts pairwise (tensordot), and
            # optimize=False's stride-0 sum-of-products kernels sum the other operand first:
            # np.einsum(',j->', inf, [0., 1.]) is inf, not the per-term NaN (ORACLE §3).
            "factoring": True,
            "notation": "numpy",
            "accumulate": ACCUMULATE,
            "strided_inputs": True}


# One encoder and decoder for the whole session (json.dumps with an option builds a new one a call).
ENCODE = json.JSONEncoder(allow_nan=False).encode
DECODE = json.JSONDecoder().decode


def response_stream():
    """fd 1 behind a buffer of this client's own. Under PYTHONUNBUFFERED=1 (or python3 -u), which
    many container images set, sys.stdout.buffer is the raw file: every write() a system call of its
    own (a header, then its payload: the harness woke twice per answer) and free to write only part
    of what it is given. A BufferedWriter writes all of it."""
    return io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False), 1 << 16)


def send(out, header, payload=b""):
    """One response: its JSON line and payload in one piece, so that an answer up to the buffer's
    size reaches the harness in one write()."""
    out.write(ENCODE(header).encode("utf-8") + b"\n" + payload)
    out.flush()


def serve(optimize):
    stdin = sys.stdin.buffer
    stdout = response_stream()
    np.seterr(all="ignore")
    while True:
        line = stdin.readline()
        if not line:
            return
        request = DECODE(line.decode("utf-8", "surrogatepass"))  # as json.loads decodes UTF-8 bytes
        if request.get("bye"):
            return
        if request.get("hello"):
            send(stdout, hello(optimize))
            continue
        rid = request.get("id")
        try:
            arrays, unrepresentable = read_inputs(stdin, request)
        except EOFError:
            return
        try:
            if unrepresentable is not None:
                raise Unsupported(unrepresentable)
            if request.get("dtype") not in DTYPES:
                raise Unsupported("dtype %r" % request.get("dtype"))
            if request.get("op") == "einsum":
                result = run_einsum(request, arrays, optimize)
            elif request.get("op") == "reduce":
                result = run_reduce(request, arrays)
            else:
                raise Unsupported("op %r" % request.get("op"))
            out_dtype = DTYPES["bool"] if request.get("reduction") in ("any", "all") else DTYPES[request["dtype"]]
            # np.array keeps a 0-d result 0-d (np.ascontiguousarray would make it 1-d).
            result = np.array(result, dtype=out_dtype, order="C")
            send(stdout, {"id": rid, "status": "ok", "shape": list(result.shape)}, result.tobytes())
        except Unsupported as e:
            send(stdout, {"id": rid, "status": "unsupported", "message": str(e)})
        except Reject as e:
            send(stdout, {"id": rid, "status": "error", "message": str(e)})
        except (ValueError, TypeError, IndexError, MemoryError, ZeroDivisionError) as e:
            send(stdout, {"id": rid, "status": "error", "message": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    serve("--optimize" in sys.argv[1:])
