#!/usr/bin/env python3
"""femto-app under mpiexec (2 ranks), on the CPU.

usage: test_mpi_app.py CASE FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

CASE sample:  a sample from inputs/ run over 2 ranks gives the expected numbers kept beside it (NAME.expected.txt,
              the rule of tools/check_sample.py); the same problem with Jacobi run in one process and over 2 ranks
              writes the same summary (timings aside) and a VTU with the same points and the same fields to 1e-9.
CASE errors:  a bad input ends every rank with exit 2 and one 'femto-app:' sentence, writing nothing; a transient
              problem over ranks is refused with exit 1 and one sentence; a plot that PLplot cannot draw (no driver)
              is a note and the run ends (exit 0, its results written): the forked plotter's exit must not
              finalise MPI, which waited for the other rank forever.
Standard library, and VTK's Python modules (python3-paraview) for the VTU files."""
import glob
import os
import re
import shutil
import subprocess
import sys

SAMPLES = [("heat-wall-3d", "wall"), ("cantilever", "cantilever")]
TIMING = re.compile(r"seconds|bytes$|^linear_iterations|^warnings$|^plots$")


def run(cmd, **env):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=90,
                              env=dict(os.environ, OMP_NUM_THREADS="1", **env))
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, "timeout", "", "the run did not end within 90 s")


def summary(outdir):
    files = glob.glob(os.path.join(outdir, "*_summary.txt"))
    assert len(files) == 1, f"expected one summary in {outdir}, found {files}"
    vals = {}
    for line in open(files[0]):
        if line.strip() and not line.startswith("#"):
            k, v = line.split()[:2]
            vals[k] = float(v)
    return vals


def family_scale(values, key):
    """The largest magnitude among the keys of key's family (force_x:clamp, force_z:clamp, force_imbalance: "force"):
    a reaction that balances to round-off (1e-8 N beside 1e4 N) is compared at the scale of its family."""
    family = re.split(r"[_:@]", key)[0]
    return max(abs(v) for k, v in values.items() if re.split(r"[_:@]", k)[0] == family and not TIMING.search(k))


def expected(path, actual):
    problems = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        key, value, rtol, atol = line.split()[:4]
        value, rtol, atol = float(value), float(rtol), float(atol)
        if key not in actual:
            problems.append(f"{key}: not in the summary")
        elif abs(actual[key] - value) > max(rtol * abs(value), atol):
            problems.append(f"{key}: {actual[key]:.10g}, expected {value:.10g} (rtol {rtol:g}, atol {atol:g})")
    return problems


def vtu_arrays(path):
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    r = vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    pd = g.GetPointData()
    arrays = {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)) for i in range(pd.GetNumberOfArrays())}
    return vtk_to_numpy(g.GetPoints().GetData()), g.GetNumberOfCells(), arrays


def jacobi_variant(work, sample, name, inputs):
    """The sample with CG + Jacobi (what a run over ranks uses), its mesh named by absolute path."""
    src = os.path.join(inputs, sample, name + ".xml")
    text = open(src).read()
    text = re.sub(r'<mesh file="([^"]+)"', lambda m: f'<mesh file="{os.path.join(inputs, sample, m.group(1))}"', text)
    text = text.replace("xsi:noNamespaceSchemaLocation=\"../../io/problem.xsd\"", "")
    text = text.replace("<output", '<solver><linear type="cg" preconditioner="jacobi" rtol="1e-10"/></solver>\n  <output', 1)
    path = os.path.join(work, f"{name}-jacobi.xml")
    open(path, "w").write(text)
    return path


def sample_case(app, inputs, work, mpi):
    failures = 0
    for sample, name in SAMPLES:
        problems = []
        out = os.path.join(work, f"{name}-2")
        r = run(mpi + ["-n", "2", app, "run", os.path.join(inputs, sample, name + ".xml"), "--output-dir", out,
                       "--device", "cpu"])
        if r.returncode != 0:
            problems.append(f"2 ranks: exit {r.returncode}: {r.stdout}{r.stderr}")
        elif "with multigrid preconditioning, over 2 MPI ranks" not in r.stdout:  # the samples' default
            problems.append("2 ranks: the sample did not run with its default, multigrid")
        else:
            problems += expected(os.path.join(inputs, sample, name + ".expected.txt"), summary(out))
        xml = jacobi_variant(work, sample, name, inputs)
        one, two = os.path.join(work, f"{name}-jacobi-1"), os.path.join(work, f"{name}-jacobi-2")
        r1 = run([app, "run", xml, "--output-dir", one, "-q", "--device", "cpu"])
        r2 = run(mpi + ["-n", "2", app, "run", xml, "--output-dir", two, "-q", "--device", "cpu"])
        if r1.returncode or r2.returncode:
            problems.append(f"Jacobi runs: exit {r1.returncode} and {r2.returncode}: {r1.stderr}{r2.stderr}")
        else:
            s1, s2 = summary(one), summary(two)
            if sorted(s1) != sorted(s2):
                problems.append(f"summary keys differ: {sorted(set(s1) ^ set(s2))}")
            for k in s1:
                if k not in s2 or TIMING.search(k):
                    continue
                # an imbalance is a fraction of the largest term, at round-off: equal to 1e-9 absolute
                tol = 1e-9 if "imbalance" in k else 1e-9 * family_scale(s1, k)
                if abs(s1[k] - s2[k]) > tol:
                    problems.append(f"summary {k}: {s1[k]:.12g} in one process, {s2[k]:.12g} over 2 ranks")
            its1, its2 = s1["linear_iterations"], s2["linear_iterations"]
            if abs(its1 - its2) > 0.1 * its1:
                problems.append(f"CG iterations {its2:g} over 2 ranks, {its1:g} in one process (10% allowed)")
            (p1, c1, a1), (p2, c2, a2) = [vtu_arrays(glob.glob(os.path.join(d, "*_0000.vtu"))[0]) for d in (one, two)]
            if c1 != c2 or p1.shape != p2.shape or abs(p1 - p2).max() != 0:
                problems.append("the VTU meshes differ (points or cells)")
            for k, a in a1.items():
                b = a2.get(k)
                if b is None or b.shape != a.shape or abs(a - b).max() > 1e-9 * max(abs(a).max(), 1e-300):
                    problems.append(f"VTU field {k} differs between one process and 2 ranks")
            print(f"{name}: CG {its1:g} iterations in one process, {its2:g} over 2 ranks; "
                  f"{len(a1)} VTU fields compared")
        print(("ok   " if not problems else "FAIL ") + f"{sample} over 2 ranks")
        for p in problems:
            print("  " + p)
        failures += bool(problems)
    return failures


def errors_case(app, inputs, work, mpi):
    failures = 0
    bad = os.path.join(work, "bad.xml")
    open(bad, "w").write(open(os.path.join(inputs, "heat-wall-3d", "wall.xml")).read()
                         .replace('region="brick"', 'region="concrete"')
                         .replace('file="wall.msh"', f'file="{os.path.join(inputs, "heat-wall-3d", "wall.msh")}"'))
    transient = glob.glob(os.path.join(inputs, "heat-transient-slab", "*.xml"))[0]
    for name, xml, code, needle in [("bad region", bad, 2, "has no region named 'concrete'"),
                                    ("transient", transient, 1, "transient run over 2 MPI ranks is not supported")]:
        out = os.path.join(work, "out-" + name.replace(" ", "-"))
        r = run(mpi + ["-n", "2", app, "run", xml, "--output-dir", out, "--device", "cpu"])
        ours = [l for l in r.stderr.splitlines() if l.startswith("femto-app:")]
        problems = [f"{out} was written"] if os.path.exists(out) and os.listdir(out) else []
        if r.returncode != code:
            problems.append(f"exit {r.returncode}, expected {code}")
        if len(ours) != 1 or needle not in ours[0]:
            problems.append(f"expected one 'femto-app:' line with '{needle}', got {ours}")
        print(("ok   " if not problems else "FAIL ") + name + (f": {ours[0]}" if ours else ""))
        for p in problems:
            print("  " + p)
        failures += bool(problems)
    # no PLplot driver: every plot fails in its forked child
    wall = os.path.join(inputs, "heat-wall-3d", "wall.xml")
    out = os.path.join(work, "out-no-plots")
    r = run(mpi + ["-n", "2", app, "run", wall, "--output-dir", out, "--device", "cpu", "-v"],
            PLPLOT_DRV_DIR=os.path.join(work, "no-drivers"))
    problems = [] if r.returncode == 0 else [f"exit {r.returncode}: {r.stderr.strip()[-300:]}"]
    if "plots: cannot draw" not in r.stdout:
        problems.append("no note that the plot could not be drawn")
    if not glob.glob(os.path.join(out, "*_summary.txt")):
        problems.append("no summary written")
    print(("ok   " if not problems else "FAIL ") + "plots failing in their forked child over 2 ranks")
    for p in problems:
        print("  " + p)
    return failures + bool(problems)


def main():
    cases = {"sample": sample_case, "errors": errors_case}
    if len(sys.argv) < 6 or sys.argv[1] not in cases:
        print(__doc__)
        return 2
    work = sys.argv[4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return 1 if cases[sys.argv[1]](sys.argv[2], os.path.abspath(sys.argv[3]), work, sys.argv[5:]) else 0


if __name__ == "__main__":
    sys.exit(main())
