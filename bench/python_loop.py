#!/usr/bin/python3
"""A hand-written numpy + torch differential loop (issue 15's Python baseline), printing cases/s.

It is the kind of script people write before they reach for a harness: draw a random small
matmul or reduction, run it in numpy and in torch, compare with allclose. It has no oracle, no
shrinking and no report, so it does less per case than `einfuzz fuzz`; docs/performance.md compares
the two on one machine:

    taskset -c 1 /usr/bin/python3 bench/python_loop.py --cases 20000 --seed 1
"""

import argparse
import random
import time

import numpy as np
import torch


def one_case(rng: random.Random, nprng: np.random.Generator) -> bool:
    """One random case on both libraries; True when they agree."""
    dtype = rng.choice([np.float32, np.float64])
    if rng.random() < 0.7:
        # a matmul-like einsum on small shapes (lengths 0..8, as einfuzz's default max_length)
        a, b, c = (rng.randint(0, 8) for _ in range(3))
        x = nprng.standard_normal((a, b)).astype(dtype)
        y = nprng.standard_normal((b, c)).astype(dtype)
        expected = np.einsum("ab,bc->ac", x, y)
        actual = torch.einsum("ab,bc->ac", torch.from_numpy(x), torch.from_numpy(y)).numpy()
    else:
        # a reduction over one axis of a small rank-2 or rank-3 tensor
        shape = tuple(rng.randint(1, 8) for _ in range(rng.randint(2, 3)))
        axis = rng.randrange(len(shape))
        x = nprng.standard_normal(shape).astype(dtype)
        kind = rng.choice(["sum", "prod", "mean", "max", "min"])
        expected = getattr(np, kind)(x, axis=axis)
        t = getattr(torch, kind if kind not in ("max", "min") else "a" + kind)(torch.from_numpy(x), dim=axis)
        actual = t.numpy()
    return expected.shape == actual.shape and np.allclose(expected, actual, rtol=1e-4, atol=1e-5, equal_nan=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one core, as the einfuzz campaign it is compared with
    rng = random.Random(args.seed)
    nprng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    disagreements = sum(0 if one_case(rng, nprng) else 1 for _ in range(args.cases))
    seconds = time.perf_counter() - start
    print(f"python loop: {args.cases} cases in {seconds:.2f} s ({args.cases / seconds:.1f} cases/s), "
          f"{disagreements} disagreements")


if __name__ == "__main__":
    main()
