#!/usr/bin/env bash
# On a machine with a GPU, from the build folder (tools/device-run.sh puts us there): every test labelled
# `gpu`, then every sample solved on the GPU and checked against its expected numbers. Logs go to $OUT (or
# ./gpu-logs). Exit status: the number of failed parts.
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
src=$(sed -n 's|^# Source directory: ||p' CTestTestfile.cmake | head -1)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
failed=0
OMP_WAIT_POLICY=PASSIVE ctest -L gpu --output-on-failure -j4 2>&1 | tee "$out/ctest-gpu.log" | tail -25
[ "${PIPESTATUS[0]}" = 0 ] || failed=$((failed + 1))
for xml in "$src"/inputs/*/*.xml; do
  name=$(basename "$xml" .xml)
  expected="$(dirname "$xml")/$name.expected.txt"
  [ -f "$expected" ] || continue
  echo "== $(basename "$(dirname "$xml")")/$name on the GPU" | tee -a "$out/samples-gpu.log"
  python3 "$src/tools/check_sample.py" ./femto-app "$xml" "$expected" "samples-gpu/$name" --device cuda \
    >> "$out/samples-gpu.log" 2>&1 || { failed=$((failed + 1)); echo "FAILED: $name" | tee -a "$out/samples-gpu.log"; }
done
grep -c "^ok" "$out/samples-gpu.log" | sed 's/^/sample checks passed on the GPU: /'
grep -E "FAIL" "$out/samples-gpu.log" || true
exit $failed
