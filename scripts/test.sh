#!/usr/bin/env bash
# The README's test command: set up, build the release preset, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# setup.sh installed libtorch and numpy: the tests may require every backend to be listed.
EINFUZZ_REQUIRE_ALL_BACKENDS=1 ctest --preset release
