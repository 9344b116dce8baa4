#!/usr/bin/env bash
# Packs what a run on a lent GPU machine needs into .device/ (git-ignored), for the `device` tool's `carry`:
#   .device/libs.tar.xz   the shared libraries the programs load (Gmsh and its OpenCASCADE closure, libxml2,
#                         HDF5, ...) minus glibc's own, which the GPU machine has in a newer version;
#   .device/build.tar.xz  the build folder's programs (femto-app, the benchmarks, the GPU tests' programs) and CTest
#                         files;
#   .device/cudss.tar.xz  libcudss.so.0 (and its threading layer) when the build links cuDSS: about 60 MiB compressed,
#                         more than a call may carry beside the working tree, so it is also cut in two:
#                         .device/cudss.tar.xz.1 (carry it alone, run tools/device-run.sh true; it stays on the warm
#                         machine), then libs, then build, ompi and .device/cudss.tar.xz.2, which device-run.sh
#                         joins to the first piece.
# The machine has nvcc, cmake and HDF5 but neither Gmsh nor libxml2 headers, so femto is built here for sm_90.
# Libraries of the CUDA toolkit (cuBLAS, which cuDSS loads, is 600 MB) are not packed: the machine has CUDA 13.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device
# The path a library is loaded by: its folder and soname (Gmsh and cuDSS are found by the build's link name)
soname_path() { echo "$(dirname "$1")/$(objdump -p "$1" | awk '/SONAME/ {print $2}')"; }
if [ ! -f .device/libs.tar.xz ] || [ "${1:-}" = "--libs" ]; then
  rm -rf .device/libs && mkdir -p .device/libs
  # Gmsh is loaded at run time (io/gmsh_load.h), not linked: its library and closure are packed too
  gmsh=$(sed -n 's/^GMSH_LIBRARY:FILEPATH=//p' build/CMakeCache.txt)
  { for exe in build/femto-app build/femto-bench build/test_*; do [ -x "$exe" ] && ldd "$exe"; done
    [ -n "$gmsh" ] && echo "libgmsh => $(soname_path "$gmsh") (0)" && ldd "$gmsh"; } |
    awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libutil)\.so|ld-linux|^/usr/local/cuda|libcudss' |
    xargs -I{} cp -L {} .device/libs/
  tar -C .device -cJf .device/libs.tar.xz libs
  rm -rf .device/libs
fi
cudss=$(sed -n 's/^CUDSS_LIBRARY:FILEPATH=//p' build/CMakeCache.txt) # loaded at run time (gpu/cudss_load.cu)
[ -n "$cudss" ] && [ -f "$cudss" ] && cudss=$(soname_path "$cudss") || cudss=""
if [ -n "$cudss" ] && { [ ! -f .device/cudss.tar.xz ] || [ "${1:-}" = "--libs" ]; }; then
  mt=""; [ -f "$(dirname "$cudss")/libcudss_mtlayer_gomp.so.0" ] && mt=libcudss_mtlayer_gomp.so.0
  tar -C "$(dirname "$cudss")" -cJf .device/cudss.tar.xz "$(basename "$cudss")" $mt
fi
if [ -f .device/cudss.tar.xz ] && { [ ! -f .device/cudss.tar.xz.2 ] || [ .device/cudss.tar.xz -nt .device/cudss.tar.xz.2 ]; }; then
  head -c 58000000 .device/cudss.tar.xz > .device/cudss.tar.xz.1
  tail -c +58000001 .device/cudss.tar.xz > .device/cudss.tar.xz.2
fi
# The build: the programs, and of the test programs those of the GPU-labelled tests (each links the CUDA kernels'
# fatbins, about 9 MB; all of them would not fit the 64 MiB a call may carry), the CTest files and the cache.
programs=$(cd build && ctest -L gpu -N -V 2>/dev/null | sed -n 's|^[0-9]*: Test command: /[^ ]*/build/\([^ /]*\).*|\1|p' |
           sort -u)
(cd build && find . -name CTestTestfile.cmake -o -name CMakeCache.txt | sed 's|^\./||'
   # femto-app-*, femto-bench-*: variants built by hand for a comparison (not made by the build)
 for p in femto-app femto-app-* femto-bench femto-bench-* femto-mesh-bench femto-partition-bench $programs; do [ -x "$p" ] && echo "$p"; done) |
  sort -u > .device/build-files.txt
tar -C build -cJf .device/build.tar.xz -T .device/build-files.txt
du -h .device/*.tar.xz
