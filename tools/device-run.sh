#!/usr/bin/env bash
# Runs on the lent GPU machine, in the copy of the repository (see device-bundle.sh): unpacks the build and its
# libraries, makes the build's absolute paths valid, and runs the given command from the build folder, e.g.
#   tools/device-run.sh ctest -L gpu --output-on-failure
set -euo pipefail
repo=$PWD
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$here" = "$repo" ] || cd "$here"
mkdir -p build .device/libs .device/cudss
# cuDSS comes in a call of its own (device-bundle.sh); a later call finds it unpacked
if [ -f .device/cudss.tar.xz ]; then tar -C .device/cudss -xJf .device/cudss.tar.xz; fi
if [ -f .device/libs.tar.xz ]; then tar -C .device -xJf .device/libs.tar.xz; fi
if [ -f .device/build.tar.xz ]; then tar -C build -xJf .device/build.tar.xz; fi
# CTest files name the sources and programs by the absolute paths of the machine that built them
built=""
if [ -f build/CTestTestfile.cmake ]; then
  built=$(sed -n 's|^# Build directory: \(.*\)/build$|\1|p' build/CTestTestfile.cmake | head -1)
fi
if [ -n "$built" ] && [ "$built" != "$PWD" ] && [ ! -e "$built" ]; then
  mkdir -p "$(dirname "$built")"
  ln -s "$PWD" "$built"
fi
export LD_LIBRARY_PATH="$PWD/.device/libs:$PWD/.device/cudss${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# cuBLAS (which cuDSS loads) from the machine's own CUDA toolkit
if [ -d /usr/local/cuda/lib64 ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"; fi
cd build
"$@"
