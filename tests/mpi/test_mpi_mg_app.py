#!/usr/bin/env python3
"""femto-app's p-multigrid over 2 MPI ranks, on the CPU.

usage: test_mpi_mg_app.py FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

- The cantilever sample (p = 2) meshed from its .geo at two sizes (refine 0 and 1: 8 times the cells) runs with
  its default preconditioner, p-multigrid, whose preconditioner line says the coarse level is factorised by MUMPS
  over the 2 ranks (CHOLMOD gathered to rank 0, what one process uses at this size, where femto is built without
  MUMPS: `femto-app --version` says which); the CG count on the finer mesh is at most 1.5 times the coarser
  mesh's (mesh independence; measured 11 and 10) and equal to one process's within 10%. On the refined mesh
  multigrid goes on to the mesh before the refinement (3 levels, its order-1 level the same global size as in one
  process: each rank holds whole parent cells), and the tip displacement equals one process's to 1e-9. Over 3
  ranks the unrefined mesh is too small to split the refined one by: the p-levels alone, the same tip.
- The same problem naming BoomerAMG runs it over both ranks (not gathered) and gives the same displacement at the
  probe to the solver's tolerance; naming CHOLMOD gathers it to rank 0, with the CG count and the tip (to 1e-9)
  of the default.
Standard library; the helpers of test_mpi_app.py."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mpi_app import run, script_args, summary  # noqa: E402


def variant(work, inputs, name, refine, coarse=None):
    """The cantilever sample meshed from its .geo with `refine` refinements (and the coarse solver named)."""
    sample = os.path.join(inputs, "cantilever")
    text = open(os.path.join(sample, "cantilever.xml")).read()
    geo = os.path.join(sample, "cantilever.geo")
    text = re.sub(r'<mesh file="[^"]+"/>', f'<mesh file="{geo}" refine="{refine}"/>', text)
    text = text.replace('xsi:noNamespaceSchemaLocation="../../io/problem.xsd"', "")
    if coarse:
        text = text.replace("<output", f'<solver><linear coarse-solver="{coarse}"/></solver>\n  <output', 1)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(text)
    return path


def coarse_line(stdout):
    lines = [l for l in stdout.splitlines() if l.strip().startswith("preconditioner:")]
    return lines[0] if len(lines) == 1 else f"{len(lines)} preconditioner lines"


def ranks(app, mpi, work, xml, name, n=2):
    out = os.path.join(work, name)
    cmd = (mpi + ["-n", str(n)] if n > 1 else []) + [app, "run", xml, "--output-dir", out, "--device", "cpu", "-v"]
    r = run(cmd, FEMTO_MESH_CACHE=os.path.join(work, "cache"))
    return r, (summary(out) if r.returncode == 0 else None)


def tip(s):
    return [v for k, v in sorted(s.items()) if k.startswith("displacement_") and k.endswith("@tip")]


def main():
    args = script_args(__doc__)
    if args is None:
        return 2
    app, inputs, work, mpi = args
    problems, its = [], {}
    mumps = "MUMPS" in run([app, "--version"]).stdout
    expected = ("coarse: MUMPS", "over 2 MPI ranks") if mumps else ("coarse: CHOLMOD", "gathered to rank 0 from 2 MPI ranks")
    for refine in (0, 1):
        name = f"cantilever-refine{refine}"
        xml = variant(work, inputs, name, refine)
        r, s = ranks(app, mpi, work, xml, name)
        r1, s1 = ranks(app, mpi, work, xml, name + "-one", 1)
        if s is None or s1 is None:
            problems.append(f"{name}: exit {r.returncode} / {r1.returncode}: {r.stdout[-500:]}{r.stderr[-500:]}")
            continue
        line = coarse_line(r.stdout)
        if any(e not in line for e in expected):
            problems.append(f"{name}: the coarse level is not {' '.join(expected)}: {line}")
        if refine:
            h = re.search(r"multigrid, 3 levels \(p = 2, 1, then p = 1 on the mesh before its last refinement: (\d+) dofs",
                          r.stdout)
            h1 = re.search(r"before its last refinement: (\d+) dofs", r1.stdout)
            if not h or not h1 or h.group(1) != h1.group(1):
                problems.append(f"{name}: no level on the mesh before refinement over 2 ranks, or not one process's: "
                                f"{line} / {coarse_line(r1.stdout)}")
            if not tip(s) or max(abs(a - b) for a, b in zip(tip(s), tip(s1))) > 1e-9 * max(map(abs, tip(s1))):
                problems.append(f"{name}: tip {tip(s)} over 2 ranks against {tip(s1)} in one process")
        its[refine] = s["linear_iterations"]
        print(f"{name}: CG {its[refine]:g} iterations over 2 ranks, {s1['linear_iterations']:g} in one process")
        if abs(its[refine] - s1["linear_iterations"]) > 0.1 * s1["linear_iterations"]:
            problems.append(f"{name}: CG {its[refine]:g} over 2 ranks against {s1['linear_iterations']:g} in one "
                            "process (10% allowed)")
    # over 3 ranks the unrefined mesh's 80 cells are too few to split the refined one by (fem/partition.h's 32 a
    # rank): the mesh's own parts, the p-levels alone, the one-process answer
    xml = variant(work, inputs, "cantilever-refine1", 1)
    r3, s3 = ranks(app, mpi, work, xml, "cantilever-refine1-3", 3)
    r1, s1 = ranks(app, mpi, work, xml, "cantilever-refine1-one", 1)
    if s3 is None or s1 is None or "p-multigrid, 2 levels" not in coarse_line(r3.stdout) or not tip(s3) or \
            max(abs(a - b) for a, b in zip(tip(s3), tip(s1))) > 1e-9 * max(map(abs, tip(s1))):
        problems.append(f"refined once over 3 ranks: {coarse_line(r3.stdout) if s3 else r3.returncode}, tip "
                        f"{tip(s3) if s3 else None} against {tip(s1) if s1 else None}")
    else:
        print(f"refined once over 3 ranks: the p-levels alone, CG {s3['linear_iterations']:g}, the tip of one process")
    if len(its) == 2 and its[1] > 1.5 * its[0]:
        problems.append(f"CG iterations grow from {its[0]:g} to {its[1]:g} with 8 times the cells (1.5x allowed)")
    r, s = ranks(app, mpi, work, variant(work, inputs, "cantilever-boomeramg", 0, "boomeramg"), "boomeramg")
    r0, s0 = ranks(app, mpi, work, variant(work, inputs, "cantilever-refine0", 0), "cantilever-refine0")
    line = coarse_line(r.stdout)
    if s is None or "coarse: BoomerAMG" not in line or "gathered" in line:
        problems.append(f"BoomerAMG named over 2 ranks: exit {r.returncode}, {line}: {r.stdout[-300:]}")
    elif s0 is None or not tip(s) or max(abs(a - b) for a, b in zip(tip(s), tip(s0))) > 1e-6 * max(map(abs, tip(s0))):
        problems.append(f"BoomerAMG named over 2 ranks: tip {tip(s)} against {tip(s0) if s0 else None}")
    else:
        print(f"BoomerAMG over 2 ranks: CG {s['linear_iterations']:g} iterations, tip {tip(s)}")
    r, s = ranks(app, mpi, work, variant(work, inputs, "cantilever-cholmod", 0, "cholmod"), "cholmod")
    line = coarse_line(r.stdout)
    if s is None or "coarse: CHOLMOD" not in line or "gathered to rank 0 from 2 MPI ranks" not in line:
        problems.append(f"CHOLMOD named over 2 ranks: exit {r.returncode}, {line}: {r.stdout[-300:]}")
    elif s0 is None or s["linear_iterations"] != s0["linear_iterations"] or not tip(s) or \
            max(abs(a - b) for a, b in zip(tip(s), tip(s0))) > 1e-9 * max(map(abs, tip(s0))):
        problems.append(f"CHOLMOD named over 2 ranks: CG {s['linear_iterations']:g}, tip {tip(s)} against the "
                        f"default's {s0['linear_iterations'] if s0 else None}, {tip(s0) if s0 else None}")
    else:
        print(f"CHOLMOD gathered to rank 0: CG {s['linear_iterations']:g} iterations, the default's tip")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
