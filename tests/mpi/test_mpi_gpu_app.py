#!/usr/bin/env python3
"""femto-app over 2 MPI ranks on GPUs: the halo exchange through NCCL on the GPUs' own queues against the one
staged through the host, the coarse level's explicit inverse on every rank against cuDSS's solves gathered to
rank 0, and all against one process.

usage: test_mpi_gpu_app.py FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

The sample inputs/cantilever/cantilever-refined.xml (139,587 dofs, multigrid on 4 levels, two of them on the
meshes before refinement: every level exchanges halos) runs with --device cuda:
- in one process;
- over 2 ranks with FEMTO_NCCL=1: NCCL when the machine has 2 GPUs or more (the run's halo line names it, and
  the multigrid line says that the coarse level is gathered to rank 0 through it), else the staged path, whose
  line says why NCCL was not taken (NCCL refuses two ranks on one GPU);
- over 2 ranks by default: the staged path, its line saying that NCCL was not asked for;
- over 2 ranks with <linear coarse-inverse="yes"> (a copy of the file): each rank keeps its rows of the coarse
  level's explicit inverse, where the default (a steady problem) gathers it to rank 0 for cuDSS's triangular
  solves (the multigrid line says which).
The NCCL and staged runs give the same tip displacement to 1e-13 and the same CG count: the device path adds
the received partial sums in the staged path's order. The explicit inverse gives their CG count and tip to
1e-10.
Each equals one process's tip to 1e-9 and its CG count within 10%. Exit 77 (skipped) without a GPU. Standard
library; the helpers of test_mpi_app.py."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mpi_app import run, script_args, summary  # noqa: E402


def gpus():
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")  # what the runs may use, when set
    return min(n, len([d for d in visible.split(",") if d.strip()])) if visible is not None else n


def tip(s):
    return [v for k, v in sorted(s.items()) if k.startswith("displacement_") and k.endswith("@tip")]


def halo_line(stdout):
    lines = [l.strip() for l in stdout.splitlines() if l.strip().startswith("halo:")]
    return lines[0] if lines else "no halo line"


def main():
    args = script_args(__doc__)
    if args is None:
        return 2
    app, inputs, work, mpi = args
    if not os.path.exists(mpi[0]):  # a GPU machine with the build of another: its own launcher on PATH
        mpi[0] = shutil.which("mpirun") or shutil.which("mpiexec") or mpi[0]
    ngpu = gpus()
    if ngpu == 0:
        print("no GPU: skipped")
        return 77
    xml = os.path.join(inputs, "cantilever", "cantilever-refined.xml")
    cache = os.path.join(work, "cache")

    # the same problem with the coarse level's explicit inverse (the mesh named by its absolute path)
    os.makedirs(work, exist_ok=True)
    inverse = os.path.join(work, "cantilever-inverse.xml")
    with open(xml) as f:
        text = f.read()
    text = text.replace('file="cantilever.geo"', f'file="{os.path.join(os.path.dirname(xml), "cantilever.geo")}"')
    text = text.replace("  <output ", '  <solver><linear coarse-inverse="yes"/></solver>\n  <output ')
    with open(inverse, "w") as f:
        f.write(text)

    def femto(name, n, problem=xml, **env):
        out = os.path.join(work, name)
        cmd = (mpi + ["-n", str(n)] if n > 1 else []) + [app, "run", problem, "--output-dir", out, "--device",
                                                          "cuda", "-v"]
        r = run(cmd, FEMTO_MESH_CACHE=cache, **env)
        s = summary(out) if r.returncode == 0 else None
        if s is None:
            problems.append(f"{name}: exit {r.returncode}: {r.stdout[-600:]}{r.stderr[-600:]}")
        return r, s

    problems = []
    r1, s1 = femto("one", 1)
    rd, sd = femto("nccl", 2, FEMTO_NCCL="1")
    rs, ss = femto("staged", 2)
    rg, sg = femto("inverse", 2, problem=inverse)
    if s1 is None or sd is None or ss is None or sg is None:
        for p in problems:
            print("FAIL " + p)
        return 1
    hd, hs = halo_line(rd.stdout), halo_line(rs.stdout)
    print(f"{ngpu} GPU(s)\n  FEMTO_NCCL=1: {hd}\n  default: {hs}")
    if ngpu >= 2 and not re.search(r"halo: NCCL \d+\.\d+\.\d+ on the GPU's own queue", hd):
        problems.append(f"2 ranks on {ngpu} GPUs did not take NCCL: {hd}")
    if ngpu >= 2 and "gathered to rank 0 from 2 MPI ranks through NCCL" not in rd.stdout:
        problems.append("with NCCL the coarse level was not gathered through it: "
                        f"{[l for l in rd.stdout.splitlines() if 'coarse:' in l]}")
    if ngpu < 2 and "staged through host" not in hd:
        problems.append(f"2 ranks on one GPU did not stage: {hd}")
    if "staged through host" not in hs or "NCCL not asked for (FEMTO_NCCL=1)" not in hs:
        problems.append(f"the default did not stage, or its halo line does not say why: {hs}")
    for name, r, said in (("coarse-inverse='yes'", rg, "applied as its explicit inverse (this rank's rows"),
                          ("coarse-inverse='yes'", rg, "on each of 2 MPI ranks"), ("default", rs, "gathered to rank 0")):
        if said not in r.stdout:
            problems.append(f"{name}: the multigrid line does not say '{said}': "
                            f"{[l for l in r.stdout.splitlines() if 'coarse:' in l]}")
    t1, td, ts, tg = tip(s1), tip(sd), tip(ss), tip(sg)
    scale = max(map(abs, t1))
    if max(abs(a - b) for a, b in zip(tg, ts)) > 1e-10 * scale or sg["linear_iterations"] != ss["linear_iterations"]:
        problems.append(f"the explicit inverse on every rank: tip {tg}, CG {sg['linear_iterations']:g}; gathered "
                        f"solves: {ts}, {ss['linear_iterations']:g}")
    if max(abs(a - b) for a, b in zip(td, ts)) > 1e-13 * scale:
        problems.append(f"tip {td} with NCCL against {ts} staged")
    if sd["linear_iterations"] != ss["linear_iterations"]:
        problems.append(f"CG {sd['linear_iterations']:g} with NCCL against {ss['linear_iterations']:g} staged")
    for name, s in (("nccl", sd), ("staged", ss), ("inverse", sg)):
        if max(abs(a - b) for a, b in zip(tip(s), t1)) > 1e-9 * scale:
            problems.append(f"{name}: tip {tip(s)} over 2 ranks against {t1} in one process")
        if abs(s["linear_iterations"] - s1["linear_iterations"]) > 0.1 * s1["linear_iterations"]:
            problems.append(f"{name}: CG {s['linear_iterations']:g} over 2 ranks against {s1['linear_iterations']:g}")
    print(f"tip {td} over 2 ranks, {t1} in one process; CG {sd['linear_iterations']:g} and "
          f"{s1['linear_iterations']:g}; solve {sd.get('solve_seconds', 0):.3f} s (NCCL) and "
          f"{ss.get('solve_seconds', 0):.3f} s (staged)")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
