#!/usr/bin/env bash
# One GPU session's work, run from the build folder by tools/device-run.sh (see tools/device-bundle.sh for the
# calls that bring cuDSS, the libraries and the build). Everything that comes back is in at most 8 files under
# $OUT: session.log (this script's trace), ctest-gpu.log, samples-gpu.log, bench.md (the solver benchmark's
# tables), bench.json and operator.md (femto-bench's operator rows). Each step has its own time limit, so a hang costs that step only.
#   usage: tools/device-run.sh ../tools/gpu-session.sh [STEP...]   (steps: tests samples op3 detgather coarsecpu inverse transient bench overheads hxt cudss operator optet patch variants ophex cpuop cantilever mpigpu qdata seed mgcg cpuload strongcpu weakgpu abweak abnccl mgprof mgprofcpu layoutcpu weaklen wall abwall; default: tests samples bench)
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
src=$(sed -n 's|^# Source directory: ||p' CTestTestfile.cmake | head -1)
exec > >(tee -a "$out/session.log") 2>&1
steps=${*:-tests samples bench}
echo "femto GPU session: $(date -u +%FT%TZ), $(./femto-app --version)"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
nproc
# strongcpu, cpuload: BoomerAMG on the order-1 level, or femto's own choice on a refined mesh (STRONG_REFINE)
strong_coarse=${STRONG_REFINE:+auto}
strong_coarse=${strong_coarse:-boomeramg}
bench() { # NAME ARGS...: one solver-benchmark run appended to bench.md (FEMTO_PROGRAM: a variant built by hand, femto-app-*)
  local name=$1; shift
  echo "== bench $name: $*"
  echo -e "\n### $name\n" >> "$out/bench.md"
  timeout "${BENCH_LIMIT:-300}" python3 "$src/bench/solver-bench.py" --femto "./${FEMTO_PROGRAM:-femto-app}" --markdown "$out/bench-one.md" \
      --json "$out/bench-one.json" "$@" 2>&1 | tail -n 12
  cat "$out/bench-one.md" >> "$out/bench.md" 2>/dev/null
  cat "$out/bench-one.json" >> "$out/bench.json" 2>/dev/null
  rm -f "$out/bench-one.md" "$out/bench-one.json"
}
for step in $steps; do
  t0=$(date +%s)
  case $step in
  tests)
    OMP_WAIT_POLICY=PASSIVE timeout 420 ctest -L gpu -j4 --timeout 200 --output-on-failure > "$out/ctest-gpu.log" 2>&1
    echo "== tests: rc=$?"; tail -n 30 "$out/ctest-gpu.log" ;;
  samples)
    for xml in "$src"/inputs/*/*.xml; do
      name=$(basename "$xml" .xml); expected="$(dirname "$xml")/$name.expected.txt"
      [ -f "$expected" ] || continue
      echo "== $name" >> "$out/samples-gpu.log"
      timeout 120 python3 "$src/tools/check_sample.py" ./femto-app "$xml" "$expected" "samples-gpu/$name" --device cuda \
        >> "$out/samples-gpu.log" 2>&1 || echo "FAILED: $name" | tee -a "$out/samples-gpu.log"
    done
    echo "== samples: $(grep -c '^ok' "$out/samples-gpu.log") checks ok, $(grep -c '^FAIL' "$out/samples-gpu.log") failed" ;;
  bench) # BENCH_FULL=1 adds the 6M-dof beam, p = 1, the separate kernels and Jacobi
    bench cantilever-p2 --device cuda --problem cantilever-tet --order 2 --sizes 100k,750k${BENCH_FULL:+,6M}
    bench heat-cube --device cuda --problem heat-cube
    bench cantilever-p3 --device cuda --problem cantilever-tet --order 3 --sizes 750k
    bench cantilever-hex --device cuda --problem cantilever-hex --order 2 --sizes 750k
    if [ -n "${BENCH_FULL:-}" ]; then
      bench cantilever-p1-p3 --device cuda --problem cantilever-tet --order 1 --sizes 750k
      FEMTO_GPU_FUSED=0 bench cantilever-p2-unfused --device cuda --problem cantilever-tet --order 2 --sizes 750k
      bench cantilever-p2-jacobi --device cuda --problem cantilever-tet --order 2 --sizes 750k --preconditioner jacobi
    fi
    OMP_WAIT_POLICY=PASSIVE bench cpu-2-threads --device cpu --threads 2 --problem cantilever-tet --order 2 --sizes 33k
    OMP_WAIT_POLICY=PASSIVE bench cpu-16-threads --device cpu --threads 16 --problem cantilever-tet --order 2 --sizes 33k,100k ;;
  hxt) # meshing the heat cube's .geo the first time with Gmsh's parallel HXT (the file asks for serial Delaunay)
    o=overheads; mkdir -p $o/hxt && grep -v "Algorithm3D" "$src"/bench/problems/cube.geo > $o/hxt/cube.geo
    sed 's/enabled="false"/enabled="true"/g' "$src"/bench/problems/heat-cube.xml > $o/hxt/heat-cube.xml
    for run in first cached; do
      echo "== hxt $run"
      /usr/bin/time -f "wall %e s" timeout 300 ./femto-app run $o/hxt/heat-cube.xml --device cuda -v 2>&1 |
        grep -E "^mesh|^time:|^phases:|^memory|^done|wall|error"
    done ;;
  cudss) # the coarse factorisation's setup: cuDSS's reordering on one host thread or all, and its algorithms
    o=overheads; mkdir -p $o && cp "$src"/bench/problems/*.geo "$src"/bench/problems/*.xml $o/
    for v in "all" "one" "alg1" "alg2" "alg3"; do
      echo "== cudss $v"
      case $v in
        one) env -u CUDSS_THREADING_LIB timeout 200 ./femto-app run $o/heat-cube.xml --device cuda -v 2>&1 | grep -E "preconditioner:|^time:" ;;
        alg*) FEMTO_CUDSS_REORDERING=${v#alg} timeout 200 ./femto-app run $o/heat-cube.xml --device cuda -v 2>&1 | grep -E "preconditioner:|^time:|Newton  1" ;;
        *) timeout 200 ./femto-app run $o/heat-cube.xml --device cuda -v 2>&1 | grep -E "preconditioner:|^time:" ;;
      esac
    done ;;
  operator) # femto-bench's operator rows (issue 13) on ~1M-element meshes; FB_LIMIT seconds per command
    for args in "--shapes tet --op-orders 2 --elements 1000000" "--shapes tet --op-orders 1,3" \
                "--shapes hex --physics heat --op-orders 1,2,3" "--shapes hex --physics elasticity --op-orders 1,2,3"; do
      echo "== femto-bench $args"
      timeout "${FB_LIMIT:-200}" ./femto-bench --gpu-only --rows operator $args --markdown "$out/fb-one.md" 2>&1 | tail -n 4
      { echo -e "\n### femto-bench $args\n"; cat "$out/fb-one.md"; } >> "$out/operator.md" 2>/dev/null
      rm -f "$out/fb-one.md"
    done ;;
  op3) # issue 13's rows of order 3 on triangles and tetrahedra (heat and linear elasticity): the patch and constant-
       # table kernels (the default) against the kernels on shared tables they replaced; OP3_RUNS="PROGRAM:VAR=VALUE,..."
       # runs (default: femto-bench as it is, then with FEMTO_GPU_PATCH=0, then with FEMTO_GPU_CONST_TABLES=0 too);
       # OP3_SHAPES, OP3_ORDERS, OP3_PHYSICS: other rows (e.g. hex,quad and 1,2,3,4,5,6)
    for run in ${OP3_RUNS:-femto-bench:FEMTO_VARIANT=default femto-bench:FEMTO_GPU_PATCH=0 femto-bench:FEMTO_GPU_PATCH=0,FEMTO_GPU_CONST_TABLES=0}; do
      prog=${run%%:*}; vars=${run#*:}
      echo "== op3 $prog $vars"
      env ${vars//,/ } timeout "${FB_LIMIT:-300}" ./$prog --gpu-only --rows operator --shapes ${OP3_SHAPES:-tet,tri} --op-orders ${OP3_ORDERS:-3} \
        --physics ${OP3_PHYSICS:-heat,elasticity} --elements 1000000 --markdown "$out/fb-one.md" 2>&1 | tail -n 1
      { echo -e "\n### $prog $vars\n"; cat "$out/fb-one.md"; } >> "$out/op3.md" 2>/dev/null
      rm -f "$out/fb-one.md"
    done ;;
  detgather) # deterministic gather assembly on element patches (gpu/fused_simplex.cu, fused_tensor.cu): the fused
             # operator tests, the operator rows with patches and with the E-vector (FEMTO_GPU_PATCH=0), alternating,
             # then whole femto-app runs of the cantilever, its neo-Hookean form and the heat cube both ways (abwall)
    ctest -R "gpu_fused|emulated" -j4 --output-on-failure > "$out/ctest-fused.log" 2>&1
    grep -E "tests passed|Failed|FAIL" "$out/ctest-fused.log" | head -20
    OP3_SHAPES=${OP3_SHAPES:-tet,tri,hex} OP3_ORDERS=${OP3_ORDERS:-2,3} OP3_PHYSICS=${OP3_PHYSICS:-heat,elasticity} \
      OP3_RUNS="femto-bench:FEMTO_VARIANT=patches femto-bench:FEMTO_GPU_PATCH=0 femto-bench:FEMTO_VARIANT=patches2" \
      bash "$0" op3
    AB_VARIANTS="patches:./femto-app evector:env,FEMTO_GPU_PATCH=0,./femto-app" \
      AB_PROBLEMS="${AB_PROBLEMS:-cantilever-tet cantilever-neo heat-cube}" AB_RUNS=${AB_RUNS:-2} bash "$0" abwall ;;
  optet) # issue 13's headline rows: p = 2 tetrahedra at ~1M elements, every GPU configuration, and the CG rows;
         # then the register kernel with one thread per element for elasticity too (FEMTO_GPU_SIMPLEX_SPLIT=0)
    echo "== femto-bench optet"
    timeout "${FB_LIMIT:-300}" ./femto-bench --gpu-only --rows operator,cg --shapes tet --op-orders 2 --elements 1000000 \
      --markdown "$out/optet.md" 2>&1 | tail -n 3
    echo "== femto-bench optet, FEMTO_GPU_SIMPLEX_SPLIT=0"
    FEMTO_GPU_SIMPLEX_SPLIT=0 timeout "${FB_LIMIT:-300}" ./femto-bench --gpu-only --rows operator --shapes tet --op-orders 2 \
      --physics elasticity,neo-hookean --elements 1000000 --markdown "$out/optet-nosplit.md" 2>&1 | tail -n 3 ;;
  cantilever) # the 747k-dof p = 2 cantilever's solve with each fused kernel layout, and with the separate kernels
    bench cantilever-p2 --device cuda --problem cantilever-tet --order 2 --sizes 750k
    FEMTO_GPU_SIMPLEX_SPLIT=0 bench cantilever-p2-one-thread --device cuda --problem cantilever-tet --order 2 --sizes 750k
    FEMTO_GPU_FUSED=0 bench cantilever-p2-separate --device cuda --problem cantilever-tet --order 2 --sizes 750k ;;
  mpigpu) # issue 15: the p = 2 cantilever over MPI ranks, one GPU each (Jacobi: multigrid is not distributed yet)
    o=overheads; mkdir -p $o && cp "$src"/bench/problems/cantilever-tet.* $o/
    sed 's|  <output |  <solver><linear preconditioner="jacobi" max-iterations="20000"/></solver>\n  <output |' \
      $o/cantilever-tet.xml > $o/cantilever-jacobi.xml
    nvidia-smi -L
    ./femto-app run $o/cantilever-jacobi.xml --device cuda -q > /dev/null 2>&1 # meshes once (the cache)
    for n in 1 2; do
      echo "== mpigpu $n rank(s)"
      (sleep 3; nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader) &
      smi=$! # (a bare `wait` would also wait for this script's tee)
      /usr/bin/time -f "wall %e s" timeout 120 mpirun --allow-run-as-root --oversubscribe -n $n ./femto-app run \
        $o/cantilever-jacobi.xml --device cuda -v 2>&1 | grep -E "^device|^time:|Newton  1|over|tip|error|wall"
      wait $smi
    done ;;
  qdata) # issue 13's heat rows with the compact q-point data (D = k w det J J^-1 J^-T) and without (FEMTO_QDATA=0);
         # tet p = 2 also without the register kernel's patches (FEMTO_GPU_PATCH=0)
    for v in "FEMTO_QDATA=0" "FEMTO_QDATA=1" "FEMTO_GPU_PATCH=0"; do
      for args in "--shapes hex --op-orders 1,2,3,4,5,6" "--shapes tet --op-orders 2"; do
        [ "$v" = "FEMTO_GPU_PATCH=0" ] && [ "${args#*tet}" = "$args" ] && continue
        echo "== femto-bench qdata $v $args"
        env $v timeout "${FB_LIMIT:-200}" ./femto-bench --gpu-only --rows operator --physics heat $args --elements 1000000 \
          --markdown "$out/fb-one.md" 2>&1 | tail -n 2
        { echo -e "\n### $v femto-bench heat $args\n"; cat "$out/fb-one.md"; } >> "$out/qdata.md" 2>/dev/null
        rm -f "$out/fb-one.md"
      done
    done ;;
  patch) # the register kernel on element patches (gpu/fused_simplex.cu) against one thread per element alone
         # (FEMTO_GPU_PATCH=0), and the patches with one thread per element for the vector physics too
    for v in "FEMTO_GPU_PATCH=0" "FEMTO_GPU_PATCH=1" "FEMTO_GPU_SIMPLEX_SPLIT=0"; do
      echo "== femto-bench patch $v"
      env $v timeout "${FB_LIMIT:-300}" ./femto-bench --gpu-only --rows operator --shapes tet,tri --op-orders 1,2 \
        --elements 1000000 --markdown "$out/patch-${v%%=*}-${v#*=}.md" 2>&1 | tail -n 2
    done ;;
  variants) # femto-bench and variants of it built by hand (femto-bench-*, see device-bundle.sh), alternating, on
            # the heat operator rows of triangles and tetrahedra: VARIANT_RUNS="PROGRAM:SHAPES[:VAR=VALUE] ..." (default:
            # every femto-bench* twice, forward then backward; VAR=VALUE: an environment setting for that run); all rows
            # go to variants.md under "### PROGRAM SHAPES [VAR=VALUE]"
    runs=${VARIANT_RUNS:-}
    if [ -z "$runs" ]; then
      progs=$(ls femto-bench femto-bench-* 2>/dev/null)
      runs="$(for p in $progs; do echo "$p:tet,tri"; done) $(for p in $(echo $progs | tr ' ' '\n' | tac); do echo "$p:tet"; done)"
    fi
    for run in $runs; do
      set -- ${run//:/ }
      echo "== $1 on $2 ${3:-}"
      env ${3:-FEMTO_VARIANT=} timeout "${FB_LIMIT:-300}" ./$1 --gpu-only --rows operator --shapes $2 --op-orders 1,2 --physics heat \
        --elements 1000000 --markdown "$out/variant-one.md" 2>&1 | tail -n 1
      { echo -e "\n### $1 $2 ${3:-}\n"; cat "$out/variant-one.md"; } >> "$out/variants.md" 2>/dev/null
      rm -f "$out/variant-one.md"
    done ;;
  seed) # the seed's kernel table (issue 13: every row >= 5x the GV100's), the specialised kernels and the generic ones;
        # SEED_RUNS="PROGRAM:VAR=VALUE ..." other runs in this order (e.g. femto-bench-base:FEMTO_GPU_SPECIAL=1)
    for run in ${SEED_RUNS:-femto-bench:FEMTO_GPU_SPECIAL=1 femto-bench:FEMTO_GPU_SPECIAL=0}; do
      prog=${run%%:*}; v=${run#*:}
      echo "== $prog seed $v"
      env $v timeout "${FB_LIMIT:-300}" ./$prog --gpu-only --rows kernels --elements 1000000 \
        --markdown "$out/fb-one.md" 2>&1 | tail -n 2
      { echo -e "\n### $prog $v\n"; cat "$out/fb-one.md"; } >> "$out/seed.md" 2>/dev/null
      rm -f "$out/fb-one.md"
    done ;;
  inverse) # the coarse level's explicit inverse (gpu/cudss.cu): the unit test's lines, with its cost by cuSOLVER and cuDSS
    timeout 200 ./test_coarse gpu cudss-inverse 2>&1 | tail -n 25 ;;
  transient) # the coarse level's explicit inverse where it pays: bench/problems/heat-cube-transient.xml (50 steps, one
    # preconditioner), coarse-inverse auto (the inverse) against "no", AB_RUNS rounds alternating
    sed 's|<output |<solver><linear coarse-inverse="no"/></solver>\n  <output |' "$src/bench/problems/heat-cube-transient.xml" \
      > "$src/bench/problems/heat-cube-transient-no.xml"
    for i in $(seq 1 "${AB_RUNS:-2}"); do
      for v in "" -no; do
        echo "== transient $i heat-cube-transient$v"
        timeout 280 ./femto-app run "$src/bench/problems/heat-cube-transient$v.xml" --device cuda --output-dir "$out/transient" > "$out/transient.txt" 2>&1
        grep -E "dofs|^time:|solver:" "$out/transient.txt"; grep -o "coarse: .*; setup [0-9.]* s" "$out/transient.txt"
      done
    done
    rm -f "$src/bench/problems/heat-cube-transient-no.xml" ;;
  mgcg) # where a multigrid CG iteration goes (femto-bench's CG rows with their launch columns)
    echo "== femto-bench mgcg"
    timeout "${FB_LIMIT:-300}" ./femto-bench --gpu-only --rows cg --cg-pc multigrid --markdown "$out/mgcg.md" 2>&1 | tail -n 3 ;;
  cpuload) # issue 15: the host's own share of CPU strong scaling. One problem of about STRONG_SIZE / 16 dofs (LOAD_SIZE,
    # default 125k) solved alone on core 0, then LOAD_COPIES (default 16) copies of it at once, one per core, no MPI:
    # the ratio of the solve times is what a loaded chip takes from each core, whatever femto's exchanges do
    n=${LOAD_COPIES:-16}
    # LOAD_PROFILE=1: each run also writes FEMTO_MG_PROFILE's lines, and each level's V-cycle ms are listed after
    one() { FEMTO_MG_PROFILE=${LOAD_PROFILE:+$out/loadprof-$1-$2.txt} taskset -c "$1" timeout 280 python3 "$src/bench/solver-bench.py" --femto ./femto-app --device cpu --threads 1 \
      --problem cantilever-tet --order 2 --sizes ${LOAD_SIZE:-125k} ${STRONG_REFINE:+--refine $STRONG_REFINE} \
      --coarse-solver ${COARSE:-$strong_coarse} 2>&1 | grep -E "^\| cantilever" | cut -d'|' -f5-13; }
    echo "== cpuload: alone on core 0"; OMP_WAIT_POLICY=PASSIVE one 0 alone
    echo "== cpuload: $n copies at once, one per core"
    pids=() # (a bare wait would also wait for the log's tee)
    for i in $(seq 0 $((n - 1))); do OMP_WAIT_POLICY=PASSIVE one "$i" loaded > "$out/cpuload-$i.txt" & pids+=($!); done
    wait "${pids[@]}"
    cat "$out"/cpuload-*.txt; rm -f "$out"/cpuload-*.txt
    if [ -n "${LOAD_PROFILE:-}" ]; then
      for f in "$out"/loadprof-*.txt; do echo "$(basename "$f" .txt): $(sed -n 's/.*level \([0-9]\) (\([0-9]*\) owned.*total \([0-9.]*\)/\1:\2:\3/p' "$f" | tr '\n' ' ')"; done
      rm -f "$out"/loadprof-*.txt
    fi ;;
  strongcpu) # issue 15: strong scaling on the host's cores, 1 thread per rank, ~2M-dof p = 2 cantilever, COARSE on the
    # order-1 level (default boomeramg); STRONG_REFINE=N: the mesh made by N refinements (multigrid then goes on to
    # the meshes before them, and femto's own coarse choice, auto, serves unless COARSE names one)
    # one solver-bench per rank count, so that a run cut by its time limit loses only itself
    for n in ${RANKS:-1 2 4 8 16}; do
      OMP_WAIT_POLICY=PASSIVE bench strong-cpu-$n --device cpu --threads 1 --ranks $n --problem cantilever-tet --order 2 \
        --sizes ${STRONG_SIZE:-2M} --coarse-solver ${COARSE:-$strong_coarse} ${STRONG_REFINE:+--refine $STRONG_REFINE} \
        --mpiexec mpirun --mpiexec-flags "--oversubscribe --bind-to core"
    done ;;
  weakgpu) # issue 15: weak scaling 1 -> N GPUs (one rank each), WEAK_SIZE dofs per GPU, COARSE on the order-1 level,
    # WEAK_REFINE: the mesh made by that many refinements (multigrid then goes on to the meshes before them);
    # WEAK_THREADS: host threads per rank (default: femto's, each rank's share of the cores)
    # (default auto: femto's own choice, cuDSS, gathered to rank 0 over ranks; boomeramg: the parallel AMG on the host)
    nvidia-smi -L
    for n in ${RANKS:-1 2}; do
      bench weak-gpu-$n --device cuda --ranks $n --weak --problem ${WEAK_PROBLEM:-cantilever-hex} --order 2 \
        --sizes ${WEAK_SIZE:-5M} --coarse-solver ${COARSE:-auto} --refine ${WEAK_REFINE:-0} ${WEAK_THREADS:+--threads $WEAK_THREADS} --mpiexec mpirun \
        --mpiexec-flags "--oversubscribe --bind-to none"
    done ;;
  abweak) # issue 15: weak-scaling runs of several builds alternating in one call (AB_VARIANTS as in abwall, of
    # femto-app binaries only; AB_RUNS rounds; WEAK_SIZE, WEAK_REFINE as in weakgpu), then the refined cantilever
    # sample on 1 and 2 ranks (its tip displacement must agree)
    for i in $(seq 1 "${AB_RUNS:-2}"); do
      for v in ${AB_VARIANTS:-"new:./femto-app"}; do
        for n in 1 2; do
          echo "== abweak ${v%%:*} $i, $n rank(s)"
          timeout 280 python3 "$src/bench/solver-bench.py" --femto "${v#*:}" --device cuda --ranks $n --weak \
            --problem cantilever-hex --order 2 --sizes ${WEAK_SIZE:-5.6M} --refine ${WEAK_REFINE:-2} --mpiexec mpirun \
            --mpiexec-flags "--oversubscribe --bind-to none" 2>&1 | grep -E "^\| cantilever|rror" | cut -d'|' -f5-13
        done
      done
    done
    o=overheads; mkdir -p $o && cp "$src"/inputs/cantilever/cantilever.geo $o/
    sed 's|cantilever.msh"|cantilever.geo" refine="2"|; s|xsi:noNamespaceSchemaLocation="[^"]*"||' \
      "$src"/inputs/cantilever/cantilever.xml > $o/cantilever-r2.xml
    for n in 1 2; do
      echo "== refined cantilever sample on $n rank(s), cuda"
      mpirun --allow-run-as-root --oversubscribe -n $n ./femto-app run $o/cantilever-r2.xml --device cuda \
        --output-dir $o/r2-$n 2>&1 | grep -E "probe 'tip'|preconditioner:|^load|rror" | cut -c1-160
    done ;;
  abnccl) # issue 15: the halo through NCCL on the GPUs' queues against the staged one (FEMTO_NCCL=0): the refined
    # cantilever sample on 2 ranks (its halo line and tip), then weak-scaling runs alternating (AB_RUNS rounds of one
    # 1-rank run and 2-rank runs with NCCL and staged; WEAK_SIZE, WEAK_REFINE as in weakgpu)
    o=overheads; mkdir -p $o && cp "$src"/inputs/cantilever/cantilever.geo $o/
    sed 's|cantilever.msh"|cantilever.geo" refine="2"|; s|xsi:noNamespaceSchemaLocation="[^"]*"||' \
      "$src"/inputs/cantilever/cantilever.xml > $o/cantilever-r2.xml
    for nccl in 1 0; do
      echo "== refined cantilever sample on 2 ranks, cuda, FEMTO_NCCL=$nccl"
      FEMTO_NCCL=$nccl timeout 120 mpirun --allow-run-as-root --oversubscribe -n 2 ./femto-app run $o/cantilever-r2.xml \
        --device cuda -v --output-dir $o/r2-nccl$nccl 2>&1 | grep -E "probe 'tip'|preconditioner:|halo:|^load|solve|rror|NCCL" | cut -c1-200
    done
    for i in $(seq 1 "${AB_RUNS:-2}"); do
      for v in "1 1" "2 1" "2 0"; do
        set -- $v
        echo "== abnccl $i, $1 rank(s), FEMTO_NCCL=$2"
        FEMTO_NCCL=$2 timeout 280 python3 "$src/bench/solver-bench.py" --femto ./femto-app --device cuda --ranks $1 --weak \
          --problem cantilever-hex --order 2 --sizes ${WEAK_SIZE:-5.6M} --refine ${WEAK_REFINE:-2} --mpiexec mpirun \
          --mpiexec-flags "--oversubscribe --bind-to none" 2>&1 | grep -E "^\| cantilever|rror" | cut -d'|' -f5-13
      done
    done ;;
  weaklen) # issue 15: weak scaling with every GPU's share exactly the one-GPU problem (solver-bench --weak-length: the
    # beam R times longer, the same cells), 1 rank against 2 ranks with NCCL (FEMTO_NCCL=1) and staged, AB_RUNS rounds
    for i in $(seq 1 "${AB_RUNS:-2}"); do
      # ranks:FEMTO_NCCL:FEMTO_OVERLAP:coarse-inverse[:program], the program femto-app unless named (a variant
      # built by hand for a comparison, femto-app-*)
      for v in ${WEAKLEN_VARIANTS:-1:0:2:auto 2:1:2:auto 2:0:2:auto}; do
        set -- ${v//:/ }
        echo "== weaklen $i, $1 rank(s), FEMTO_NCCL=$2 FEMTO_OVERLAP=$3 coarse-inverse=${4:-auto} ${5:-femto-app}"
        FEMTO_OVERLAP=$3 FEMTO_NCCL=$2 timeout 280 python3 "$src/bench/solver-bench.py" --femto "./${5:-femto-app}" --device cuda --ranks $1 --weak-length \
          --coarse-inverse ${4:-auto} --keep \
          --problem cantilever-hex --order 2 --sizes ${WEAK_SIZE:-5.6M} --refine ${WEAK_REFINE:-2} --mpiexec mpirun \
          --mpiexec-flags "--oversubscribe --bind-to none" > "$out/weaklen-one.txt" 2>&1
        grep -E "^\| cantilever|rror" "$out/weaklen-one.txt" | cut -d'|' -f5-13
        kept=$(sed -n 's/^solver-bench: *kept //p' "$out/weaklen-one.txt")
        [ -n "$kept" ] && { grep -ho "coarse: .*; setup [0-9.]* s" "$kept/stdout.txt" | head -1; rm -rf "$kept"; }
      done
    done ;;
  mgprof) # issue 15: where a V-cycle's time goes per level (FEMTO_MG_PROFILE: the device synchronised around each
    # part) on the weak-scaling beam (--weak-length), MGPROF_VARIANTS of ranks:FEMTO_NCCL:coarse-inverse; the files
    # come back as prof-R-N-I.txt
    for v in ${MGPROF_VARIANTS:-1:0:auto 1:0:no 2:0:auto 2:0:no}; do
      set -- ${v//:/ }
      echo "== mgprof $1 rank(s), FEMTO_NCCL=$2 coarse-inverse=$3"
      rm -f "$out/prof-$1-$2-$3.txt"
      FEMTO_MG_PROFILE="$out/prof-$1-$2-$3.txt" FEMTO_NCCL=$2 timeout 280 python3 "$src/bench/solver-bench.py" --femto ./femto-app \
        --device cuda --ranks $1 --weak-length --coarse-inverse $3 --problem cantilever-hex --order 2 --sizes ${WEAK_SIZE:-5.6M} \
        --refine ${WEAK_REFINE:-2} --mpiexec mpirun --mpiexec-flags "--oversubscribe --bind-to none" 2>&1 | grep -E "^\| cantilever|rror" | cut -d'|' -f5-13
      cat "$out/prof-$1-$2-$3.txt"
    done ;;
  layoutcpu) # issue 15: the host's cores split between MPI ranks and OpenMP threads (LAYOUTS of ranks:threads,
    # each rank's threads on cores of its own), on the strong-scaling problem (as strongcpu)
    for v in ${LAYOUTS:-16:1 8:2 4:4 2:8 1:16}; do
      set -- ${v//:/ }
      echo "== layoutcpu $1 rank(s) x $2 thread(s)"
      OMP_WAIT_POLICY=PASSIVE timeout 280 python3 "$src/bench/solver-bench.py" --femto ./femto-app --device cpu --threads $2 \
        --ranks $1 --problem cantilever-tet --order 2 --sizes ${STRONG_SIZE:-2M} --coarse-solver ${COARSE:-auto} \
        ${STRONG_REFINE:+--refine $STRONG_REFINE} --mpiexec mpirun --mpiexec-flags "--oversubscribe --map-by slot:PE=$2 --bind-to core" \
        2>&1 | grep -E "^\| cantilever|rror" | cut -d'|' -f5-13
    done ;;
  absummary) # issue 15: setup, output fields and summary over MPI ranks, builds alternating (AB_VARIANTS, default
    # femto-app-old femto-app: an earlier build, then this one); the
    # strong-scaling problem (as strongcpu) on RANKS (default 16) ranks of one thread, AB_RUNS rounds (default 2);
    # ABS_FLAGS: mpirun's flags (default --oversubscribe --bind-to core); ABS_THREADS= (empty): femto's own
    # threads instead of --threads 1
    for i in $(seq 1 "${AB_RUNS:-2}"); do
      for v in ${AB_VARIANTS:-femto-app-old femto-app}; do
        for n in ${RANKS:-16}; do
          rm -f "$out/abs.json"
          OMP_WAIT_POLICY=PASSIVE timeout 280 python3 "$src/bench/solver-bench.py" --femto ./$v --device cpu ${ABS_THREADS---threads 1} \
            --ranks $n --problem cantilever-tet --order 2 --sizes ${STRONG_SIZE:-2M} --coarse-solver ${COARSE:-auto} \
            ${STRONG_REFINE:+--refine $STRONG_REFINE} --mpiexec mpirun --mpiexec-flags "${ABS_FLAGS:---oversubscribe --bind-to core}" \
            --json "$out/abs.json" > /dev/null 2>&1
          python3 - "$out/abs.json" "$v" "$n" <<'PY' || echo "absummary $v $n ranks: no result"
import json, sys
run = json.load(open(sys.argv[1]))[0]
s = run.get("summary", {})
keys = ["total_seconds", "mesh_seconds", "setup_seconds", "preconditioner_setup_seconds", "summary_seconds",
        "output_seconds", "solve_seconds", "linear_iterations", "max_von_mises", "strain_energy", "host_peak_bytes",
        "host_peak_largest_rank_bytes", "host_peak_all_ranks_bytes", "device_peak_bytes"]
print("absummary %s %s ranks: %s" % (sys.argv[2], sys.argv[3], " ".join("%s=%s" % (k, s.get(k)) for k in keys)))
PY
        done
      done
    done ;;
  ranksetup) # issue 15: what the setup does over RANKS (default "1 16") ranks: -v's preconditioner, time, phases
    # and memory lines of the strong-scaling problem (as strongcpu, one thread a rank), femto-app or RANKSETUP_APP;
    # RANKSETUP_GPU=1: the weak-scaling beam on the GPUs instead (as weaklen, staged halo)
    for n in ${RANKS:-1 16}; do
      echo "== ranksetup $n rank(s)"
      printf '#!/bin/sh\nexec "%s" "$@" -v\n' "$PWD/${RANKSETUP_APP:-femto-app}" > ranksetup-app.sh && chmod +x ranksetup-app.sh
      if [ -n "${RANKSETUP_GPU:-}" ]; then
        problem="--device cuda --weak-length --problem cantilever-hex --order 2 --sizes ${WEAK_SIZE:-5.6M} --refine ${WEAK_REFINE:-2}"
        flags="--oversubscribe --bind-to none"
      else
        problem="--device cpu --threads 1 --problem cantilever-tet --order 2 --sizes ${STRONG_SIZE:-2M} --coarse-solver ${COARSE:-auto}"
        problem="$problem ${STRONG_REFINE:+--refine $STRONG_REFINE}"
        flags="--oversubscribe --bind-to core"
      fi
      OMP_WAIT_POLICY=PASSIVE timeout 280 python3 "$src/bench/solver-bench.py" --femto "$PWD/ranksetup-app.sh" --ranks $n \
        $problem --mpiexec mpirun --mpiexec-flags "$flags" --keep > "$out/ranksetup-one.txt" 2>&1
      kept=$(sed -n 's/^solver-bench: *kept //p' "$out/ranksetup-one.txt")
      [ -n "$kept" ] && { grep -E "preconditioner:|^time:|^phases:|^memory:|^halo:|^mesh |^timing:" "$kept/stdout.txt"; rm -rf "$kept"; } ||
        tail -n 5 "$out/ranksetup-one.txt"
    done ;;
  coarsecpu) # issue 15: the strong-scaling problem (as strongcpu, STRONG_REFINE) with each coarse solver of COARSES
    # (default "mumps cholmod": MUMPS over the ranks, CHOLMOD gathered to rank 0) over RANKS (default 16), then one
    # rank with femto's own choice; per run -v's preconditioner and time lines and each level's ms per V-cycle
    # (FEMTO_MG_PROFILE, min .. max over the ranks); CPU_ROUNDS (default 1) repeats the whole list; COARSECPU_ONE=0
    # leaves the one-rank run out
    for round in $(seq 1 "${CPU_ROUNDS:-1}"); do
      for run in $(for c in ${COARSES:-mumps cholmod}; do for n in ${RANKS:-16}; do echo "$c:$n"; done; done
                 [ "${COARSECPU_ONE:-1}" = 0 ] || echo auto:1); do
        c=${run%%:*}; n=${run#*:}
        echo "== coarsecpu round $round: $n rank(s), coarse $c"
        printf '#!/bin/sh\nexec "%s" "$@" -v\n' "$PWD/femto-app" > coarsecpu-app.sh && chmod +x coarsecpu-app.sh
        rm -f "$out/prof-coarse.txt"
        OMP_WAIT_POLICY=PASSIVE FEMTO_MG_PROFILE="$out/prof-coarse.txt" timeout 280 python3 "$src/bench/solver-bench.py" \
          --femto "$PWD/coarsecpu-app.sh" --ranks "$n" --device cpu --threads 1 --problem cantilever-tet --order 2 \
          --sizes ${STRONG_SIZE:-2M} --coarse-solver "$c" ${STRONG_REFINE:+--refine $STRONG_REFINE} --mpiexec mpirun \
          --mpiexec-flags "--oversubscribe --bind-to core" --keep > "$out/coarsecpu-one.txt" 2>&1
        kept=$(sed -n 's/^solver-bench: *kept //p' "$out/coarsecpu-one.txt")
        grep -E "^\| cantilever" "$out/coarsecpu-one.txt" | cut -d'|' -f5-13
        [ -n "$kept" ] && { grep -E "preconditioner:|^time:" "$kept/stdout.txt" | sed 's/operator: .*//'; rm -rf "$kept"; } ||
          tail -n 5 "$out/coarsecpu-one.txt"
        awk -F'[ ,:]+' '/level/ { for (i = 1; i <= NF; i++) { if ($i == "level") l = $(i + 1); if ($i == "total") {
            v = $(i + 1) + 0; if (!(l in lo) || v < lo[l]) lo[l] = v; if (v > hi[l]) hi[l] = v } } }
          END { for (l in lo) printf "level %s total: %.3f .. %.3f ms\n", l, lo[l], hi[l] }' "$out/prof-coarse.txt" | sort
      done
    done ;;
  mgprofcpu) # issue 15: where a V-cycle's time goes per level and rank on the CPU strong-scaling problem (as strongcpu,
    # RANKS default "1 16"), then the per-level spread over ranks (min and max of each part); files prof-cpu-N.txt
    for n in ${RANKS:-1 16}; do
      echo "== mgprofcpu $n rank(s)"
      rm -f "$out/prof-cpu-$n.txt"
      OMP_WAIT_POLICY=PASSIVE FEMTO_MG_PROFILE="$out/prof-cpu-$n.txt" timeout 280 python3 "$src/bench/solver-bench.py" \
        --femto ./femto-app --device cpu --threads 1 --ranks $n --problem cantilever-tet --order 2 --sizes ${STRONG_SIZE:-2M} \
        --coarse-solver ${COARSE:-auto} ${STRONG_REFINE:+--refine $STRONG_REFINE} --mpiexec mpirun \
        --mpiexec-flags "--oversubscribe --bind-to core" 2>&1 | grep -E "^\| cantilever|rror" | cut -d'|' -f5-13
      awk -F'[ ,:]+' '/level/ { l = $6; for (i = 1; i <= NF; i++) if ($i ~ /^(smooth|restrict|prolong|post|total)$/) {
          k = l " " $i; v = $(i + 1) + 0; if (!(k in lo) || v < lo[k]) lo[k] = v; if (v > hi[k]) hi[k] = v } }
        END { for (k in lo) printf "level %s: %.3f .. %.3f ms\n", k, lo[k], hi[k] }' "$out/prof-cpu-$n.txt" | sort
    done ;;
  ophex) # the sum-factorised fused kernel (gpu/fused_tensor.cu): hexahedral heat p = 1...6 and elasticity p = 1...3
    for args in "--physics heat --op-orders 1,2,3,4,5,6" "--physics elasticity,neo-hookean --op-orders 1,2,3"; do
      echo "== femto-bench ophex $args"
      timeout "${FB_LIMIT:-300}" ./femto-bench --gpu-only --rows operator --shapes hex $args --elements 1000000 \
        --markdown "$out/fb-one.md" 2>&1 | tail -n 3
      { echo -e "\n### femto-bench hex $args\n"; cat "$out/fb-one.md"; } >> "$out/ophex.md" 2>/dev/null
      rm -f "$out/fb-one.md"
    done ;;
  cpuop) # CPU operator rows on all host threads: the generic element loops (FEMTO_CPU_FUSED=0) and the fused CPU operator
    for fused in 0 1; do
      echo "== femto-bench cpuop FEMTO_CPU_FUSED=$fused"
      OMP_WAIT_POLICY=PASSIVE FEMTO_CPU_FUSED=$fused timeout "${FB_LIMIT:-300}" ./femto-bench --cpu-only --threads "$(nproc)" \
        --elements 200000 --rows operator --shapes tet,hex --physics heat,elasticity --op-orders 2 \
        --markdown "$out/cpuop-$fused.md" 2>&1 | tail -n 3
    done ;;
  overheads) # where a whole run's time goes (issue 14): phases with -v, the mesh meshed then cached, output on/off
    o=overheads; mkdir -p $o && cp "$src"/bench/problems/*.geo "$src"/bench/problems/*.xml $o/
    sed 's/enabled="false"/enabled="true"/g' $o/heat-cube.xml > $o/heat-cube-out.xml
    sed 's/enabled="false"/enabled="true"/g' $o/cantilever-tet.xml > $o/cantilever-tet-out.xml
    for xml in heat-cube heat-cube heat-cube-out cantilever-tet cantilever-tet cantilever-tet-out; do
      echo "== overheads $xml"
      /usr/bin/time -f "wall %e s, max rss %M kB" timeout 300 ./femto-app run $o/$xml.xml --device cuda -v 2>&1 |
        grep -E "^mesh|^time:|^phases:|^done|preconditioner:|wall|error|Newton  1"
    done ;;
  wall) # issue 14: the 747k cantilever's whole run from the cached mesh, timed from outside the process too (its
    # start: loading the shared libraries; its end: releasing memory), and femto-app --version alone
    o=overheads; mkdir -p $o && cp "$src"/bench/problems/cantilever-tet.* $o/
    ./femto-app run $o/cantilever-tet.xml --device cuda > /dev/null 2>&1 # meshes once, or finds the cache
    for i in 1 2 3 4 5; do
      echo "== wall cantilever-tet $i"
      s=$(date +%s.%N)
      ./femto-app run $o/cantilever-tet.xml --device cuda -v 2>&1 | grep -E "^time:|^phases:|^done|preconditioner:"
      echo "process wall $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}') s"
      sed -n 's/^\(solve_seconds\|preconditioner_setup_seconds\|total_seconds\) \([^ ]*\).*/\1 \2/p' \
        $o/results/cantilever-tet_summary.txt | tr '\n' ' '; echo
    done
    s=$(date +%s.%N); for i in 1 2 3 4 5; do ./femto-app --version > /dev/null; done
    echo "femto-app --version: $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", (b - a) / 5}') s" ;;
  abwall) # issue 14: whole runs from the cached mesh, output off, alternating builds or settings in one call;
    # AB_VARIANTS="LABEL:COMMAND ..." (commas for spaces, e.g. "base:./femto-app-base new:./femto-app
    # nowarm:env,FEMTO_CUDSS_WARMUP=0,./femto-app"), AB_RUNS rounds, AB_PROBLEMS (cantilever-tet heat-cube)
    o=overheads; mkdir -p $o && cp "$src"/bench/problems/*.geo "$src"/bench/problems/*.xml $o/
    # cantilever-neo: the same beam neo-Hookean under 1e6 Pa (19 Newton steps); -every: a new preconditioner at
    # every Newton step (<newton reuse-preconditioner="false">)
    sed 's/model="linear"/model="neo-hookean"/; s/z="-1e5"/z="-1e6"/' $o/cantilever-tet.xml > $o/cantilever-neo.xml
    sed 's|</elasticity>|</elasticity>\n  <solver><newton reuse-preconditioner="false"/></solver>|' \
      $o/cantilever-neo.xml > $o/cantilever-neo-every.xml
    # cantilever-hex5m: the hexahedral p = 2 beam at 5,468,067 dofs (issue 15's one-GPU size)
    sed 's/size="0.01"/size="0.00357143"/' $o/cantilever-hex.xml > $o/cantilever-hex5m.xml
    # -rN: the same fine mesh (hexahedra: exactly; tetrahedra: about as many cells) made by N refinements of a
    # coarser one, so that multigrid goes on to the coarser meshes; -p: the p-levels alone (levels="2")
    sed 's/size="0.01"/size="0.00714286" refine="1"/' $o/cantilever-hex.xml > $o/cantilever-hex5m-r1.xml
    sed 's/size="0.01"/size="0.01428571" refine="2"/' $o/cantilever-hex.xml > $o/cantilever-hex5m-r2.xml
    sed 's/size="0.0065"/size="0.013" refine="1"/' $o/cantilever-tet.xml > $o/cantilever-tet-r1.xml
    for r in cantilever-tet-r1 cantilever-hex5m-r1; do
      sed 's|</elasticity>|</elasticity>\n  <solver><linear levels="2"/></solver>|' $o/$r.xml > $o/$r-p.xml
    done
    variants=${AB_VARIANTS:-"new:./femto-app"}
    for xml in ${AB_PROBLEMS:-cantilever-tet heat-cube}; do
      ./femto-app run $o/$xml.xml --device cuda > /dev/null 2>&1 # meshes once, or finds the cache
      for i in $(seq 1 "${AB_RUNS:-4}"); do
        for v in $variants; do
          label=${v%%:*}; cmd=${v#*:}; cmd=${cmd//,/ }
          s=$(date +%s.%N)
          $cmd run $o/$xml.xml --device cuda -v > $o/ab.log 2>&1
          wall=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
          echo "== $xml $label $i: process $wall s; $(grep -E '^time:' $o/ab.log)"
          grep -E "preconditioner:|^phases:|solver:|^load|^memory:" $o/ab.log | sed 's/^ */   /'
        done
      done
    done ;;
  esac
  echo "== step $step took $(( $(date +%s) - t0 )) s"
done
