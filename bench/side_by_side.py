#!/usr/bin/python3
"""Issue 15's table in one command: every line measured with two einfuzz trees side by side.

Each measurement runs the OLD and the NEW binary alternately, ROUNDS times, on one core (`taskset -c
CORE`), and prints per line both series and the ratio of their medians (a larger ratio: NEW is
faster). Both trees are release builds (`cmake --preset release`, benchmarks on); OLD may lack
bench_gemm (then today's bench/bench_gemm.cpp, compiled against OLD's libraries, can be given with
--old-gemm) or the sanitized fuzzer (--old-asan/--new-asan: `.clusterfuzzlite/build.sh`'s
fuzz_einsum_diff, as .ci/run builds it; both or neither), and a libFuzzer build without sanitizers
(--old-nosan/--new-nosan: build.sh with the same $CFLAGS less `-fsanitize=address,undefined
-fno-sanitize-recover=undefined`). `--only live` runs only the live libFuzzer lines (no release
trees needed: give --old and --new any directory).

    python3 bench/side_by_side.py --old /tmp/old/build --new build --rounds 5 > table.md

Lines: the GEMM bench at 256^3 (fused and its SSE2 kernel against Eigen), the small-case bench
(fused against the hand-written loop), the kernels it does not reach (einfuzz_bench_kernels; OLD may
lack it: --old-kernels), the campaigns (fused; fused,shuffle with all dtypes and
with the dtypes 8278533 drew; eigen; xtensor; the default `all` on one core and on two), the
Python loop against fused,shuffle, fuzz_einsum_diff's replay of a fixed corpus without sanitizers
and, with --old-asan/--new-asan, under ASan + UBSan plus CI's 60 s live run (the two side by side,
one per core, cores swapped each round); with --old-nosan/--new-nosan the same live run without
sanitizers. Only ratios measured in one run mean anything: the
machine, its load and its clock are shared by both columns.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, core, env=None, check=False, stderr=subprocess.DEVNULL):
    """(user CPU seconds of the process and its children, wall seconds, stdout) of `cmd` on `core`."""
    full = ["taskset", "-c", str(core)] + cmd
    before = os.times()
    start = time.monotonic()
    p = subprocess.run(full, stdout=subprocess.PIPE, stderr=stderr, env=env, text=True)
    wall = time.monotonic() - start
    after = os.times()
    if check and p.returncode != 0:
        sys.exit(f"side_by_side: {' '.join(full)} exited with {p.returncode}")
    return after.children_user - before.children_user, wall, p.stdout


def alternate(rounds, old_cmd, new_cmd, measure):
    """`measure(output, user, wall)` of each command, the two alternated `rounds` times."""
    series = {"old": [], "new": []}
    for _ in range(rounds):
        for side, cmd in (("old", old_cmd), ("new", new_cmd)):
            series[side].append(measure(*cmd()))
    return series


def group(title, command):
    """A group's heading, the command its lines run (one core unless said), and its table's head."""
    print(f"\n{title}:\n\n    {command}\n")
    print("| what | OLD | NEW | NEW's advantage |")
    print("|---|---|---|---|", flush=True)


def row(what, series, higher_is_better, unit=""):
    """One markdown line: both series, their medians and the ratio of the medians (NEW's advantage)."""
    old, new = statistics.median(series["old"]), statistics.median(series["new"])
    ratio = (new / old) if higher_is_better else (old / new)
    num = lambda x: f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"
    fmt = lambda xs: ", ".join(num(x) for x in xs)
    unit = f" {unit}" if unit else ""
    print(f"| {what} | {fmt(series['old'])} (median {num(old)}{unit}) | "
          f"{fmt(series['new'])} (median {num(new)}{unit}) | **{ratio:.2f}×** |", flush=True)


def campaign_rows(args, core):
    old, new = os.path.join(args.old, "einfuzz"), os.path.join(args.new, "einfuzz")
    user = lambda out, u, w: u
    lines = [
        ("campaign `fused`, 20000 cases, user s", ["--backend", "fused"], []),
        ("campaign `fused,shuffle`, 20000 cases, user s", ["--backend", "fused,shuffle"], []),
        ("the same, NEW drawing 8278533's dtypes (`--dtypes f32,f64,i32,i64,bool`)", ["--backend", "fused,shuffle"],
         ["--dtypes", "f32,f64,i32,i64,bool"]),
        ("campaign `eigen`, user s", ["--backend", "eigen"], []),
        ("campaign `xtensor`, user s", ["--backend", "xtensor"], []),
    ]
    group("Campaigns, user CPU seconds (`--backend B` as each line says)",
          "einfuzz fuzz --cases 20000 --no-store --quiet --seed 1 --backend B")
    for what, common, new_only in lines:
        base = ["fuzz", "--cases", "20000", "--no-store", "--quiet", "--seed", "1"] + common
        s = alternate(args.rounds, lambda: run([old] + base, core), lambda: run([new] + base + new_only, core), user)
        row(what, s, False, "s")
    # The default campaign: cases per second by its own report (start-up excluded), one and two cores.
    for cores in (str(core), "0,1"):
        def all_rate(binary):
            def go():
                with tempfile.NamedTemporaryFile(suffix=".json") as f:
                    run([binary, "fuzz", "--cases", "5000", "--no-store", "--quiet", "--report", f.name], cores)
                    r = json.load(open(f.name))
                    return r["cases"] / r["seconds"], 0, 0
            return go
        s = alternate(args.rounds, all_rate(old), all_rate(new), lambda rate, u, w: rate)
        row(f"default `all` campaign, 5000 cases, its report's cases/s, `taskset -c {cores}` "
            "(`einfuzz fuzz --cases 5000 --no-store --quiet --report R`)", s, True, "cases/s")


def python_row(args, core):
    """fused,shuffle's rate (wall clock, start-up included) over the Python loop's, per round."""
    # Debian's python3, whose numpy and torch scripts/setup.sh installed (not necessarily this one).
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    loop = [python, os.path.join(HERE, "python_loop.py"), "--cases", "5000", "--seed", "1"]
    ratios = {"old": [], "new": []}
    for _ in range(args.rounds):
        _, _, out = run(loop, core, stderr=subprocess.STDOUT)
        py = float(re.search(r"\(([\d.]+) cases/s\)", out).group(1))
        for side, tree in (("old", args.old), ("new", args.new)):
            _, wall, _ = run([os.path.join(tree, "einfuzz"), "fuzz", "--backend", "fused,shuffle", "--cases", "5000",
                              "--seed", "1", "--no-store", "--quiet"], core)
            ratios[side].append(5000 / wall / py)
    group("The Python baseline: fused,shuffle's cases/s (wall clock, start-up included) over the loop's, "
          "each from one round", "python3 bench/python_loop.py --cases 5000 --seed 1   # and einfuzz fuzz "
          "--backend fused,shuffle --cases 5000 --seed 1 --no-store --quiet")
    row("`fused,shuffle` ÷ the numpy + torch loop (no oracle)", ratios, True)


def bench_minima(binary, core, flags):
    """{benchmark name: the least CPU time of its repetitions} of one Google Benchmark run."""
    _, _, out = run([binary, "--benchmark_format=json"] + flags, core, check=True)
    by = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration":
            by[b["run_name"]] = min(by.get(b["run_name"], float("inf")), b["cpu_time"])
    return by


def bench_rows(args, core):
    def mins(binary, flt, extra):
        return bench_minima(binary, core, [f"--benchmark_filter={flt}"] + extra)
    flt = "(diagonal|trace|broadcast|four_operands)/(fused|naive)/f(32|64)/0$"
    extra = ["--benchmark_repetitions=10", "--benchmark_enable_random_interleaving=true", "--benchmark_min_time=0.03"]
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, tree in (("old", args.old), ("new", args.new)):
            runs[side].append(mins(os.path.join(tree, "bench", "einfuzz_bench"), flt, extra))
    group("Small cases: fused's time over the hand-written loop's (minima of 10 interleaved repetitions; "
          "lower is better, so NEW's advantage is OLD ÷ NEW)", f"einfuzz_bench --benchmark_filter='{flt}' " + " ".join(extra))
    for p in ("diagonal", "trace", "broadcast", "four_operands"):
        for t in ("f32", "f64"):
            s = {side: [r[f"{p}/fused/{t}/0"] / r[f"{p}/naive/{t}/0"] for r in runs[side]] for side in runs}
            row(f"{p} {t} */0", s, False)


def gemm_rows(args, core):
    old_gemm = args.old_gemm or os.path.join(args.old, "bench", "einfuzz_bench_gemm")
    if not os.path.exists(old_gemm):
        print(f"\nGEMM: skipped, {old_gemm} does not exist (pass --old-gemm)")
        return
    def table(binary):
        _, _, out = run([binary, "--benchmark_filter=^(matmul|batched)/.*/256$", "--benchmark_min_time=0.3"], core,
                        check=True)
        rows = {}
        for line in out.splitlines():
            m = re.match(r"^((?:matmul|batched)/f(?:32|64)/256)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
            if m:
                rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
        return rows
    group("GEMM: fused's GFLOP/s over Eigen's Tensor contraction in the same run, 256^3, one thread",
          "einfuzz_bench_gemm --benchmark_filter='^(matmul|batched)/.*/256$' --benchmark_min_time=0.3")
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        runs["old"].append(table(old_gemm))
        runs["new"].append(table(os.path.join(args.new, "bench", "einfuzz_bench_gemm")))
    for case in ("matmul/f32/256", "matmul/f64/256", "batched/f32/256", "batched/f64/256"):
        for i, kernel in ((0, "fused (AVX2 dispatch)"), (1, "fused's SSE2 kernel")):
            s = {side: [r[case][i] / r[case][2] for r in runs[side]] for side in runs}
            row(f"{kernel} ÷ Eigen, {case}", s, True)


def kernel_rows(args, core):
    """einfuzz_bench_kernels (three-operand broadcast lanes, --tile 4): NEW's time against OLD's."""
    old_bin = args.old_kernels or os.path.join(args.old, "bench", "einfuzz_bench_kernels")
    if not os.path.exists(old_bin):
        print(f"\nKernels: skipped, {old_bin} does not exist (pass --old-kernels)")
        return
    extra = ["--benchmark_repetitions=10", "--benchmark_enable_random_interleaving=true", "--benchmark_min_time=0.03"]
    new_bin = os.path.join(args.new, "bench", "einfuzz_bench_kernels")
    runs = alternate(args.rounds, lambda: (old_bin,), lambda: (new_bin,), lambda b: bench_minima(b, core, extra))
    group("Kernels einfuzz_bench does not reach: fused's time in ns (minima of 10 interleaved repetitions; "
          "NEW's advantage is OLD ÷ NEW)", "einfuzz_bench_kernels " + " ".join(extra))
    for name in sorted(runs["old"][0]):
        row(name, {side: [r[name] for r in runs[side]] for side in runs}, False, "ns")


def fuzz_rows(args, core):
    with tempfile.TemporaryDirectory() as corpus:
        subprocess.run([sys.executable, os.path.join(HERE, "fuzz_corpus.py"), corpus,
                        os.path.join(HERE, "..", "fuzz", "seeds", "fuzz_einsum_diff")], check=True)
        five = [corpus] * 5
        user = lambda out, u, w: u
        s = alternate(args.rounds, lambda: run([os.path.join(args.old, "fuzz", "fuzz_einsum_diff")] + five, core),
                      lambda: run([os.path.join(args.new, "fuzz", "fuzz_einsum_diff")] + five, core), user)
        group("libFuzzer target fuzz_einsum_diff (CORPUS: bench/fuzz_corpus.py's 3010 inputs)",
              "fuzz_einsum_diff CORPUS CORPUS CORPUS CORPUS CORPUS      # release replay binary\n"
              "    fuzz_einsum_diff -rss_limit_mb=2048 CORPUS/*            # .ci/run's ASan + UBSan build")
        row("replay without sanitizers, 15050 runs, user s", s, False, "s")
        if args.old_asan and args.new_asan:
            files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
            asan = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1")
            s = alternate(args.rounds, lambda: run([args.old_asan, "-rss_limit_mb=2048"] + files, core, asan),
                          lambda: run([args.new_asan, "-rss_limit_mb=2048"] + files, core, asan), user)
            row("under ASan + UBSan, each file once, user s", s, False, "s")
    live_rows(args, core)


def live_rows(args, core):
    """CI's 60 s live run, under ASan + UBSan and without sanitizers, for the binaries given."""
    group("libFuzzer target fuzz_einsum_diff, live",
          "fuzz_einsum_diff -seed=R -max_total_time=60 -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 "
          "<.options> -dict=... DIR fuzz/seeds/fuzz_einsum_diff")
    if args.old_asan and args.new_asan:
        live_row(args, args.old_asan, args.new_asan, "under ASan + UBSan")
    if args.old_nosan and args.new_nosan:
        live_row(args, args.old_nosan, args.new_nosan, "without sanitizers")


def live_row(args, old_binary, new_binary, label):
    """CI's 60 s live run of two libFuzzer binaries at once, one per core, cores swapped per round."""
    rates = {"old": [], "new": []}

    def flags(binary):
        """The target's .options beside it (`.clusterfuzzlite/build.sh`'s $OUT), as .ci/run passes them."""
        where = os.path.dirname(binary)
        keys = (l.split("=", 1) for l in open(os.path.join(where, "fuzz_einsum_diff.options")) if "=" in l)
        out = [f"-{k.strip()}={v.strip()}" for k, v in keys if k.strip() != "dict"]
        return out + [f"-dict={os.path.join(where, 'fuzz_einsum_diff.dict')}"]

    for r in range(args.rounds):
        procs, dirs, logs = {}, {}, {}
        for side, binary, c in (("old", old_binary, r % 2), ("new", new_binary, 1 - r % 2)):
            dirs[side] = tempfile.TemporaryDirectory()
            # A file, not a pipe: libFuzzer logs every new input, and a full pipe would stall it.
            logs[side] = tempfile.TemporaryFile(mode="w+")
            seeds = os.path.join(HERE, "..", "fuzz", "seeds", "fuzz_einsum_diff")
            procs[side] = subprocess.Popen(
                ["taskset", "-c", str(c), binary, f"-seed={args.first_seed + r}", "-max_total_time=60", "-timeout=25",
                 "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={dirs[side].name}/"]
                + flags(binary) + [dirs[side].name, seeds],
                stdout=subprocess.DEVNULL, stderr=logs[side], env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
        for side, p in procs.items():
            p.wait()
            logs[side].seek(0)
            m = re.search(r"stat::average_exec_per_sec:\s*(\d+)", logs[side].read())
            rates[side].append(float(m.group(1)) if m else float("nan"))
            logs[side].close()
            dirs[side].cleanup()
    row(f"{label}, CI's 60 s run from the seeds with each binary's own .options and dictionary "
        "(`-seed=` the round's), both at once "
        "on one core each, cores swapped per round: exec/s", rates, True, "exec/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the OLD release build directory")
    ap.add_argument("--new", required=True, help="the NEW release build directory")
    ap.add_argument("--old-gemm", help="bench_gemm built against OLD (when OLD has none)")
    ap.add_argument("--old-kernels", help="bench_kernels built against OLD (when OLD has none)")
    ap.add_argument("--old-asan", help="OLD's sanitized libFuzzer fuzz_einsum_diff")
    ap.add_argument("--new-asan", help="NEW's sanitized libFuzzer fuzz_einsum_diff")
    ap.add_argument("--old-nosan", help="OLD's libFuzzer fuzz_einsum_diff built without sanitizers")
    ap.add_argument("--new-nosan", help="NEW's libFuzzer fuzz_einsum_diff built without sanitizers")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1, help="libFuzzer's -seed= of the first live round (then +1 a round)")
    ap.add_argument("--core", type=int, default=1, help="the core single-core runs are pinned to")
    ap.add_argument("--only", default="gemm,bench,kernels,campaign,python,fuzz", help="comma-separated groups to run")
    args = ap.parse_args()
    print(f"OLD {args.old}, NEW {args.new}; {args.rounds} rounds, one core: `taskset -c {args.core}`.")
    groups = {"gemm": gemm_rows, "bench": bench_rows, "campaign": campaign_rows, "kernels": kernel_rows,
              "python": python_row,
              "fuzz": fuzz_rows, "live": live_rows}
    for name in args.only.split(","):
        groups[name](args, args.core)


if __name__ == "__main__":
    main()
