#!/usr/bin/env bash
# The README's test command: set up, build the release preset, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --preset release
