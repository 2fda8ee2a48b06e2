#!/usr/bin/env python3
"""The ClusterFuzzLite check accepts the repository's files and refuses each kind of drift: every case
copies the files the check reads into a temporary tree, breaks one thing, and expects the problem."""
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_cflite_workflows as check  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Drift(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        shutil.copytree(ROOT / ".github", self.tmp / ".github")
        shutil.copytree(ROOT / ".clusterfuzzlite", self.tmp / ".clusterfuzzlite")
        (self.tmp / "fuzz").mkdir()
        for p in (ROOT / "fuzz").iterdir():
            if p.is_file():
                shutil.copy(p, self.tmp / "fuzz" / p.name)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, rel, old, new):
        path = self.tmp / rel
        text = path.read_text()
        self.assertIn(old, text, f"{rel} no longer contains {old!r}: update the test")
        path.write_text(text.replace(old, new, 1))

    def problems(self):
        return "\n".join(check.validate(self.tmp))

    def test_the_repository_is_valid(self):
        self.assertEqual(self.problems(), "")

    def test_a_target_without_options(self):
        (self.tmp / "fuzz/fuzz_case.options").unlink()
        self.assertIn("fuzz_case is built but has no fuzz/fuzz_case.options", self.problems())

    def test_a_workflow_that_does_not_parse(self):
        (self.tmp / ".github/workflows/cflite_build.yml").write_text("jobs: [\n")
        self.assertIn("cflite_build.yml: does not parse", self.problems())


# One drift per row: (test name, file, text, replacement, a fragment of the expected problem).
EDITS = [
    ("test_a_sanitizer_missing_from_a_matrix", ".github/workflows/cflite_pr.yml", "          - undefined\n", "",
     "sanitizer matrix"),
    ("test_a_sanitizer_project_yaml_adds", ".clusterfuzzlite/project.yaml", "  - undefined\n",
     "  - undefined\n  - memory\n", "project.yaml declares"),
    ("test_pr_fuzzing_time", ".github/workflows/cflite_pr.yml", "fuzz-seconds: 600", "fuzz-seconds: 60",
     "mode 'code-change' and fuzz-seconds 600"),
    ("test_batch_schedule", ".github/workflows/cflite_batch.yml", "'0 0/6 * * *'", "'0 0 * * *'",
     "not every 6 hours"),
    ("test_coverage_job", ".github/workflows/cflite_cron.yml", "mode: 'coverage'", "mode: 'prune'",
     "no coverage job"),
    ("test_a_named_fuzzer_that_is_not_built", ".github/workflows/cflite_pr.yml", "output-sarif: true",
     "output-sarif: true\n          # fuzz_nonexistent", "names fuzzer fuzz_nonexistent"),
]


def drift_test(rel, old, new, expected):
    def test(self):
        self.edit(rel, old, new)
        self.assertIn(expected, self.problems())
    return test


for _name, *_edit in EDITS:
    setattr(Drift, _name, drift_test(*_edit))


if __name__ == "__main__":
    unittest.main()
