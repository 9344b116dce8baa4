#!/usr/bin/env bash
# Runs on the lent GPU machine, in the copy of the repository (see device-bundle.sh): unpacks the build and its
# libraries, makes the build's absolute paths valid, and runs the given command from the build folder, e.g.
#   tools/device-run.sh ctest -L gpu --output-on-failure
set -euo pipefail
repo=$PWD
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$here" = "$repo" ] || cd "$here"
mkdir -p build .device/libs
tar -C .device -xJf .device/libs.tar.xz
tar -C build -xJf .device/build.tar.xz
# CTest files name the sources and programs by the absolute paths of the machine that built them
built=$(sed -n 's|^# Build directory: \(.*\)/build$|\1|p' build/CTestTestfile.cmake | head -1)
if [ -n "$built" ] && [ "$built" != "$PWD" ] && [ ! -e "$built" ]; then
  mkdir -p "$(dirname "$built")"
  ln -s "$PWD" "$built"
fi
export LD_LIBRARY_PATH="$PWD/.device/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd build
"$@"
