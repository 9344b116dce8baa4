#!/usr/bin/env bash
# Runs on the lent GPU machine, in the copy of the repository (see device-bundle.sh): unpacks the build and its
# libraries, makes the build's absolute paths valid, and runs the given command from the build folder, e.g.
#   tools/device-run.sh ctest -L gpu --output-on-failure
set -euo pipefail
repo=$PWD
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$here" = "$repo" ] || cd "$here"
mkdir -p build .device/libs .device/cudss
# cuDSS and the libraries come in calls of their own (device-bundle.sh); a later call on the warm machine finds
# them unpacked. A tarball is unpacked once (a marker newer than it says so).
unpack() { # TARBALL DIR
  if [ -f "$1" ] && { [ ! -f "$1.unpacked" ] || [ "$1" -nt "$1.unpacked" ]; }; then
    tar -C "$2" -xJf "$1" && touch "$1.unpacked"
  fi
}
# cuDSS cut in two (device-bundle.sh): joined once both pieces have come
if [ -f .device/cudss.tar.xz.1 ] && [ -f .device/cudss.tar.xz.2 ]; then
  cat .device/cudss.tar.xz.1 .device/cudss.tar.xz.2 > .device/cudss.tar.xz && rm -f .device/cudss.tar.xz.1 .device/cudss.tar.xz.2
fi
unpack .device/cudss.tar.xz .device/cudss
unpack .device/libs.tar.xz .device
unpack .device/build.tar.xz build
if [ -f .device/ompi.tar.xz ]; then # Open MPI's runtime, for BoomerAMG (hypre is MPI-based)
  mkdir -p /tmp/ompi && unpack .device/ompi.tar.xz /tmp/ompi && . /tmp/ompi/env.sh
fi
# CTest files name the sources and programs by the absolute paths of the machine that built them
built=""
if [ -f build/CTestTestfile.cmake ]; then
  built=$(sed -n 's|^# Build directory: \(.*\)/build$|\1|p' build/CTestTestfile.cmake | head -1)
fi
if [ -n "$built" ] && [ "$built" != "$PWD" ] && [ ! -e "$built" ]; then
  mkdir -p "$(dirname "$built")"
  ln -s "$PWD" "$built"
fi
# cuDSS's threading layer (its reordering on all host threads), where it came with cuDSS
if [ -f .device/cudss/libcudss_mtlayer_gomp.so.0 ]; then export CUDSS_THREADING_LIB="$PWD/.device/cudss/libcudss_mtlayer_gomp.so.0"; fi
export LD_LIBRARY_PATH="$PWD/.device/libs:$PWD/.device/cudss${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# cuBLAS (which cuDSS loads) from the machine's own CUDA toolkit
if [ -d /usr/local/cuda/lib64 ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"; fi
# NCCL (the halo between GPUs, gpu/nccl.cu: loaded at run time) from the machine's Python wheel when its CUDA has none
if [ ! -e /usr/local/cuda/lib/libnccl.so.2 ] && [ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]; then
  nccl=$(find /opt /usr/local/lib /usr/lib/python3 -name libnccl.so.2 2>/dev/null | head -1)
  if [ -n "$nccl" ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$nccl")"; fi
fi
cd build
"$@"
