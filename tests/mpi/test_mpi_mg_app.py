#!/usr/bin/env python3
"""femto-app's p-multigrid over 2 MPI ranks, on the CPU.

usage: test_mpi_mg_app.py FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

- The cantilever sample (p = 2) meshed from its .geo at two sizes (refine 0 and 1: 8 times the cells) runs with
  its default preconditioner, p-multigrid, whose setup line says the coarse solver is BoomerAMG; the CG count on
  the finer mesh is at most 1.5 times the coarser mesh's (mesh independence; measured 26 and 24).
- The same problem naming CHOLMOD as the coarse solver runs too, with one note that over ranks BoomerAMG
  replaces it (CHOLMOD runs in one process).
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


def two_ranks(app, mpi, work, xml, name):
    out = os.path.join(work, name)
    r = run(mpi + ["-n", "2", app, "run", xml, "--output-dir", out, "--device", "cpu"],
            FEMTO_MESH_CACHE=os.path.join(work, "cache"))
    return r, (summary(out) if r.returncode == 0 else None)


def main():
    args = script_args(__doc__)
    if args is None:
        return 2
    app, inputs, work, mpi = args
    problems, its = [], {}
    for refine in (0, 1):
        name = f"cantilever-refine{refine}"
        r, s = two_ranks(app, mpi, work, variant(work, inputs, name, refine), name)
        if s is None:
            problems.append(f"{name}: exit {r.returncode}: {r.stdout[-500:]}{r.stderr[-500:]}")
            continue
        setup = [l for l in r.stdout.splitlines() if "preconditioning" in l]
        if len(setup) != 1 or "with multigrid preconditioning, over 2 MPI ranks (coarse solver BoomerAMG)" \
                not in setup[0]:
            problems.append(f"{name}: the setup line does not say multigrid with BoomerAMG: {setup}")
        its[refine] = s["linear_iterations"]
        print(f"{name}: CG {its[refine]:g} iterations over 2 ranks")
    if len(its) == 2 and its[1] > 1.5 * its[0]:
        problems.append(f"CG iterations grow from {its[0]:g} to {its[1]:g} with 8 times the cells (1.5x allowed)")
    r, s = two_ranks(app, mpi, work, variant(work, inputs, "cantilever-cholmod", 0, "cholmod"), "cholmod")
    note = "note: over 2 MPI ranks the coarse solver is BoomerAMG (CHOLMOD runs in one process)"
    if s is None or r.stdout.count(note) != 1:
        problems.append(f"CHOLMOD named over 2 ranks: exit {r.returncode}, expected one '{note}': {r.stdout[-500:]}")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
