#!/usr/bin/env python3
"""Every stored divergence shrinks into a stored group: `einfuzz shrink FILE --backend B --known DIR`
on the backend that found it (origin.backend, under origin.profile when it has one) prints
`group: known F` for some stored file F, most often FILE itself.

A campaign that meets a stored root cause shrinks its failure and looks the shrunk case's group
signature up among the stored ones. If the shrinker takes a stored case to a signature nobody stored
(a new shrink step, a changed candidate order), the campaign reports a known root cause as a NEW
group and the README's main job exits 1 on a correct checkout. This test finds that the day the
shrinker changes. A file that shrinks into another file's group (an illustration kept for its
README row: the shrinker would never stop on it) is listed, not failed.
The predicate needs the libraries themselves (a smaller case the checker rejects may be one numpy
rejects too), so the test runs where numpy and torch are: a backend that is not built or not
installed is a skip, never a pass (and a failure under EINFUZZ_REQUIRE_ALL_BACKENDS=1, which
scripts/test.sh sets).

usage: known_fixpoint_test.py EINFUZZ DIVERGENCES_DIR [--shard K/N]
exit 0 every stored case shrinks into a stored group, 1 one does not (or a file is not a stored
divergence, or a backend is missing under EINFUZZ_REQUIRE_ALL_BACKENDS=1), 77 no stored case could be tried.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("einfuzz")
    ap.add_argument("divergences")
    ap.add_argument("--shard", default="0/1", help="K/N: only the files i with i mod N == K (sorted)")
    args = ap.parse_args()
    k, n = (int(x) for x in args.shard.split("/"))
    files = sorted(pathlib.Path(args.divergences).glob("*.case.json"))
    if not files:
        print(f"no *.case.json under {args.divergences}", file=sys.stderr)
        return 1
    mine = [f for i, f in enumerate(files) if i % n == k]
    available = subprocess.run([args.einfuzz, "backends"], capture_output=True, text=True).stdout
    failed, tried, landed, skipped, elsewhere = [], 0, 0, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for f in mine:
            origin = json.loads(f.read_text()).get("origin", {})
            backend = origin.get("backend")
            if not backend or "verdict" not in origin:
                failed.append(f"{f}: origin lacks backend or verdict (not a stored divergence)")
                continue
            if not any(line.split() and line.split()[0] == backend for line in available.splitlines()):
                skipped.append(f"{f.name} ({backend} is not available)")
                continue
            cmd = [args.einfuzz, "shrink", str(f), "--backend", backend, "--known", args.divergences,
                   "--out", os.path.join(tmp, "shrunk.case.json")]
            if "profile" in origin:
                cmd += ["--profile", origin["profile"]]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            tried += 1
            group = [line for line in r.stderr.splitlines() if line.startswith("group: ")]
            if r.returncode == 0 and len(group) == 1 and group[0].startswith("group: known "):
                landed += 1
                other = pathlib.Path(group[0][len("group: known "):])
                if other.name != f.name:
                    elsewhere.append(f"{f.name} shrinks into the group of {other.name}")
                continue
            failed.append(f"{f.name} on {backend}: exit {r.returncode}, {group or 'no group line'}\n"
                          f"    reproduce: {' '.join(cmd[:-2])}\n    " + r.stderr.strip().replace("\n", "\n    "))
    if skipped and os.environ.get("EINFUZZ_REQUIRE_ALL_BACKENDS") == "1":
        failed += [f"{s}, and EINFUZZ_REQUIRE_ALL_BACKENDS=1" for s in skipped]
        skipped = []
    for s in skipped:
        print(f"skipped: {s}")
    for e in elsewhere:
        print(e)
    for m in failed:
        print(f"SHRINKS TO AN UNSTORED GROUP: {m}")
    print(f"{landed} of {len(mine)} stored divergences shrink into a stored group, "
          f"{len(elsewhere)} of them into another file's (shard {args.shard}; {len(skipped)} skipped)")
    if failed:
        return 1
    return 77 if tried == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
