#!/usr/bin/env bash
# The README's main job: set up, build, then a 60-second fuzz campaign over every built-in backend
# (`einfuzz fuzz`): a live progress line, a summary table, and one group per root cause, either
# known (stored in corpus/divergences/) or new (stored in corpus/found/ and printed with the one
# command that reproduces it). Extra arguments go to `einfuzz fuzz` (e.g. ./scripts/run.sh
# --seconds 600 --jobs 2). Exit status: 0 nothing new, 1 a new group, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "\$ build/einfuzz fuzz $*"
exec build/einfuzz fuzz "$@"
