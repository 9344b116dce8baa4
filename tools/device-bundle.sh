#!/usr/bin/env bash
# Packs what a run on a lent GPU machine needs into .device/ (git-ignored), for the `device` tool's `carry`:
#   .device/libs.tar.xz   the shared libraries the programs load (Gmsh and its OpenCASCADE closure, libxml2,
#                         HDF5, ...) minus glibc's own, which the GPU machine has in a newer version;
#   .device/build.tar.xz  the build folder's programs and CTest files (no objects).
# The machine has nvcc, cmake and HDF5 but neither Gmsh nor libxml2 headers, so femto is built here for sm_90.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device
if [ ! -f .device/libs.tar.xz ] || [ "${1:-}" = "--libs" ]; then
  rm -rf .device/libs && mkdir -p .device/libs
  for exe in build/femto-app build/femto-bench build/test_*; do [ -x "$exe" ] && ldd "$exe"; done |
    awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libutil)\.so|ld-linux' |
    xargs -I{} cp -L {} .device/libs/
  tar -C .device -cJf .device/libs.tar.xz libs
  rm -rf .device/libs
fi
tar -C build --exclude=CMakeFiles --exclude='*.a' --exclude='*.o' --exclude='Testing' --exclude='*_rates' \
    -cJf .device/build.tar.xz .
du -h .device/*.tar.xz
