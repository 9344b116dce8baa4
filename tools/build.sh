#!/usr/bin/env bash
# Configures and builds femto in ./build (the CUDA backend too when nvcc is present).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
