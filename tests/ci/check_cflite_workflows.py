#!/usr/bin/env python3
"""Validates the ClusterFuzzLite integration: .github/workflows/cflite_*.yml against
.clusterfuzzlite/project.yaml, .clusterfuzzlite/build.sh and the fuzz targets of fuzz/.

Usage: check_cflite_workflows.py [REPO_ROOT]   (exit 0: valid; 1: the problems are printed)

What it holds the files to (ClusterFuzzLite's GitHub Actions guide, and issue 16):
* every workflow parses as YAML, reads permissions: read-all, and runs the v1 actions;
* cflite_pr.yml: pull requests, mode code-change, 600 s;
* cflite_batch.yml: a schedule every 6 hours, mode batch, 3600 s;
* cflite_cron.yml: a daily schedule with a prune job and a coverage job (sanitizer coverage);
* cflite_build.yml: pushes to main, upload-build: true;
* the sanitizer matrices of the PR, batch and build workflows are exactly project.yaml's sanitizers,
  every build step's language is project.yaml's, and each run step fuzzes the sanitizer it built;
* the fuzzers build.sh builds (one per fuzz/<name>.options) are exactly fuzz/CMakeLists.txt's
  EINFUZZ_FUZZ_TARGETS, each with its .cpp and .dict, and every fuzzer a workflow names is one of them.
"""
import re
import sys
from pathlib import Path

import yaml

BUILD = "google/clusterfuzzlite/actions/build_fuzzers@v1"
RUN = "google/clusterfuzzlite/actions/run_fuzzers@v1"


def triggers(workflow):
    # YAML 1.1 reads the key `on` as the boolean true.
    return workflow.get("on", workflow.get(True)) or {}


def steps_using(job, action):
    return [s for s in job.get("steps", []) if s.get("uses") == action]


def matrix_sanitizers(job):
    return (job.get("strategy", {}).get("matrix", {}) or {}).get("sanitizer")


def built_fuzzers(root, problems):
    """The fuzzers build.sh builds (fuzz/*.options), checked against fuzz/CMakeLists.txt."""
    build_sh = (root / ".clusterfuzzlite/build.sh").read_text()
    if 'for f in "$src"/fuzz/*.options' not in build_sh:
        problems.append("build.sh: no longer builds one fuzzer per fuzz/<name>.options; update this check")
    options = {p.stem for p in (root / "fuzz").glob("*.options")}
    cmake = (root / "fuzz/CMakeLists.txt").read_text()
    m = re.search(r"set\(EINFUZZ_FUZZ_TARGETS([^)]*)\)", cmake)
    declared = set(m.group(1).split()) if m else set()
    if not m:
        problems.append("fuzz/CMakeLists.txt: no set(EINFUZZ_FUZZ_TARGETS ...)")
    for name in sorted(options - declared):
        problems.append(f"fuzz/{name}.options: build.sh copies {name}, but EINFUZZ_FUZZ_TARGETS does not build it")
    for name in sorted(declared - options):
        problems.append(f"fuzz/CMakeLists.txt: {name} is built but has no fuzz/{name}.options, so build.sh skips it")
    for name in sorted(options & declared):
        for ext in ("cpp", "dict"):
            if not (root / f"fuzz/{name}.{ext}").is_file():
                problems.append(f"fuzz/{name}.{ext}: missing (build.sh needs it for {name})")
    return options & declared


def check_job(path, name, job, project, want_matrix, problems):
    where = f"{path.name}: job {name}"
    builds = steps_using(job, BUILD)
    if len(builds) != 1:
        problems.append(f"{where}: {len(builds)} build_fuzzers@v1 steps, want 1")
        return None
    build = builds[0].get("with", {})
    if build.get("language") != project["language"]:
        problems.append(f"{where}: language {build.get('language')!r}, project.yaml says {project['language']!r}")
    if want_matrix:
        sanitizers = matrix_sanitizers(job)
        if sorted(sanitizers or []) != sorted(project["sanitizers"]):
            problems.append(f"{where}: sanitizer matrix {sanitizers}, project.yaml declares {project['sanitizers']}")
        if build.get("sanitizer") != "${{ matrix.sanitizer }}":
            problems.append(f"{where}: build_fuzzers does not build the matrix's sanitizer")
    runs = steps_using(job, RUN)
    for run in runs:
        if run.get("with", {}).get("sanitizer") != build.get("sanitizer"):
            problems.append(f"{where}: run_fuzzers sanitizer {run.get('with', {}).get('sanitizer')!r} "
                            f"is not the one built ({build.get('sanitizer')!r})")
    return [r.get("with", {}) for r in runs], build


def expect_run(path, runs, mode, seconds, problems):
    got = [(r.get("mode"), r.get("fuzz-seconds")) for r in runs]
    if (mode, seconds) not in got:
        problems.append(f"{path.name}: no run_fuzzers step with mode {mode!r} and fuzz-seconds {seconds} (has {got})")


def check_fuzzing_jobs(path, workflow, project, mode, seconds, problems):
    """Every job builds the project's sanitizer matrix and runs the fuzzers in `mode` for `seconds`."""
    for job_name, job in workflow["jobs"].items():
        checked = check_job(path, job_name, job, project, True, problems)
        if checked:
            expect_run(path, checked[0], mode, seconds, problems)


def validate(root):
    root = Path(root)
    problems = []
    project = yaml.safe_load((root / ".clusterfuzzlite/project.yaml").read_text())
    if not project or "language" not in project or not project.get("sanitizers"):
        return ["project.yaml: needs language and sanitizers"]
    fuzzers = built_fuzzers(root, problems)
    docker = (root / ".clusterfuzzlite/Dockerfile").read_text()
    if "COPY .clusterfuzzlite/build.sh $SRC/" not in docker:
        problems.append("Dockerfile: does not copy build.sh to $SRC/")

    workflows = {}
    for name in ("cflite_pr.yml", "cflite_batch.yml", "cflite_build.yml", "cflite_cron.yml"):
        path = root / ".github/workflows" / name
        if not path.is_file():
            problems.append(f".github/workflows/{name}: missing")
            continue
        try:
            workflow = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            problems.append(f"{name}: does not parse: {e}")
            continue
        if not isinstance(workflow, dict) or not isinstance(workflow.get("jobs"), dict):
            problems.append(f"{name}: no jobs")
            continue
        if workflow.get("permissions") != "read-all":
            problems.append(f"{name}: permissions is {workflow.get('permissions')!r}, want read-all")
        for token in sorted(set(re.findall(r"\bfuzz_[a-z_]+\b", path.read_text()))):
            if token not in fuzzers:
                problems.append(f"{name}: names fuzzer {token}, which build.sh does not build")
        workflows[name] = (path, workflow)

    if "cflite_pr.yml" in workflows:
        path, w = workflows["cflite_pr.yml"]
        if "pull_request" not in triggers(w):
            problems.append("cflite_pr.yml: not triggered by pull_request")
        check_fuzzing_jobs(path, w, project, "code-change", 600, problems)
    if "cflite_batch.yml" in workflows:
        path, w = workflows["cflite_batch.yml"]
        crons = [s.get("cron", "") for s in triggers(w).get("schedule", []) or []]
        if not any(re.fullmatch(r"\S+ (\*|0)/6 \* \* \*", c) for c in crons):
            problems.append(f"cflite_batch.yml: schedule {crons} is not every 6 hours")
        check_fuzzing_jobs(path, w, project, "batch", 3600, problems)
    if "cflite_build.yml" in workflows:
        path, w = workflows["cflite_build.yml"]
        branches = (triggers(w).get("push") or {}).get("branches", [])
        if "main" not in branches:
            problems.append(f"cflite_build.yml: not triggered by pushes to main (branches {branches})")
        for job_name, job in w["jobs"].items():
            checked = check_job(path, job_name, job, project, True, problems)
            if checked and checked[1].get("upload-build") is not True:
                problems.append(f"cflite_build.yml: job {job_name} does not upload its build")
    if "cflite_cron.yml" in workflows:
        path, w = workflows["cflite_cron.yml"]
        crons = [s.get("cron", "") for s in triggers(w).get("schedule", []) or []]
        if not any(re.fullmatch(r"\d+ \d+ \* \* \*", c) for c in crons):
            problems.append(f"cflite_cron.yml: schedule {crons} is not daily")
        modes = {}
        for job_name, job in w["jobs"].items():
            checked = check_job(path, job_name, job, project, False, problems)
            if checked:
                for r in checked[0]:
                    modes[r.get("mode")] = (r.get("sanitizer"), checked[1].get("sanitizer"))
        if "prune" not in modes:
            problems.append("cflite_cron.yml: no prune job")
        if modes.get("coverage") != ("coverage", "coverage"):
            problems.append("cflite_cron.yml: no coverage job built and run with sanitizer coverage")
    return problems


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    problems = validate(root)
    for p in problems:
        print(f"cflite: {p}")
    if problems:
        return 1
    print(f"cflite: 4 workflows valid against project.yaml and the {len(built_fuzzers(root, []))} fuzzers build.sh builds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
