#!/usr/bin/env bash
# The whole test suite, from a fresh clone on a fresh Debian machine (as root): installs what is missing,
# builds, and runs every CTest test. Tests labelled `gpu` skip (exit 77) where no CUDA device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
# Tests run in parallel, each with OpenMP threads: idle threads must sleep rather than spin, or they starve
# the other tests of the cores.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
