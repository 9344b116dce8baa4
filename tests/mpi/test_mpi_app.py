#!/usr/bin/env python3
"""femto-app under mpiexec, on the CPU.

usage: test_mpi_app.py CASE FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

CASE sample:SAMPLE/NAME:N  inputs/SAMPLE/NAME.xml run over N ranks gives the expected numbers kept beside it
              (NAME.expected.txt, the rule of tools/check_sample.py), its memory peaks over the ranks (rank 0's,
              the largest rank's, their sum) in the summary, and Krylov iteration counts within 10% of one
              process with the preconditioner the ranks used; the same problem with Jacobi and tight tolerances run
              in one process and over N ranks writes the same summary (timings aside), VTU files (every frame of every physics; over ranks the .pvtu pieces merged by their
              global_node ids) with the same points and the same fields to 1e-9, and probe series to 1e-9.
CASE schemes:N  the transient sample with backward Euler and with Crank-Nicolson (it uses BDF2): one process against
              N ranks as above.
CASE threads:  OpenMP threads over ranks: on N = 2, 3 ranks that share all of this machine's cores (--bind-to none) each
              rank's CPU device takes its share of them, max(1, cores // N), and says so; --threads and
              OMP_NUM_THREADS still choose.
CASE errors:  a bad input ends every rank with exit 2 and one 'femto-app:' sentence, writing nothing; a plot that
              PLplot cannot draw (no driver) is a note and the run ends (exit 0, its results written): the forked
              plotter's exit must not finalise MPI, which waited for the other rank forever.
Standard library, and VTK's Python modules (python3-paraview) for the VTU files."""
import glob
import os
import re
import shutil
import subprocess
import sys

# not compared between one process and N ranks: times, sizes, and the counts that follow the Krylov iterations
# (checked apart, within 10%)
TIMING = re.compile(r"seconds|bytes$|^linear_iterations|^preconditioner_setups$|^warnings$|^plots$")


def run(cmd, **env):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=90,
                              env=dict(os.environ, OMP_NUM_THREADS="1", **env))
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, "timeout", "", "the run did not end within 90 s")


def script_args(doc):
    """(FEMTO_APP, INPUTS, WORK, MPIEXEC words) of a script called FEMTO_APP INPUTS WORK MPIEXEC [FLAGS...], its
    WORK folder emptied; None after printing the usage (doc) when the arguments are missing."""
    if len(sys.argv) < 5:
        print(doc)
        return None
    app, inputs, work, mpi = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return app, inputs, work, mpi


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
    scale = max(abs(v) for k, v in values.items() if re.split(r"[_:@]", k)[0] == family and not TIMING.search(k))
    if family == "force" and values.get("max_displacement", 0) > 0:
        # reactions that all vanish (a body free to expand) are round-off of the load that did the work:
        # 2 W / u_max, W the strain energy
        scale = max(scale, 2 * values.get("strain_energy", 0) / values["max_displacement"])
    return scale


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
    """Points, cell count and point arrays of a .vtu, or of a .pvtu whose pieces repeat shared points: those are
    merged by their global_node ids into one-process order."""
    from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader, vtkXMLUnstructuredGridReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    import numpy as np
    r = vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu") else vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    pd = g.GetPointData()
    arrays = {pd.GetArrayName(i): np.array(vtk_to_numpy(pd.GetArray(i))) for i in range(pd.GetNumberOfArrays())}
    points = np.array(vtk_to_numpy(g.GetPoints().GetData()))
    gid = arrays.pop("global_node", None)
    if gid is not None:
        first = np.zeros(int(gid.max()) + 1, dtype=np.int64)
        first[gid.astype(np.int64)[::-1]] = np.arange(len(gid))[::-1]
        points = points[first]
        arrays = {k: v[first] for k, v in arrays.items()}
    return points, g.GetNumberOfCells(), arrays


PC_XML = {"Jacobi": "jacobi", "multigrid": "multigrid", "Chebyshev-Jacobi": "chebyshev", "none": "none"}


def variant(work, sample, name, inputs, pc="jacobi", rtol="1e-12", newton_rtol="1e-10", extra="", tag=None):
    """The sample with preconditioner pc (extra: more <linear> attributes; the automatic Krylov choice), no plots,
    its mesh named by absolute path; with rtol (tight by default: linear 1e-12, Newton 1e-10) those tolerances,
    else the sample's own. At the default tolerances the derived fields of one process and N ranks (the heat flux
    near an insulated face) differ by 1e-8 of their largest value; at the tight ones the Krylov counts are set by
    round-off (the gravity beam: 323 iterations in one process, 277 over 3 ranks), so those runs compare answers,
    not counts."""
    text = open(os.path.join(inputs, sample, name + ".xml")).read()
    text = re.sub(r'<mesh file="([^"]+)"', lambda m: f'<mesh file="{os.path.join(inputs, sample, m.group(1))}"', text)
    text = text.replace("xsi:noNamespaceSchemaLocation=\"../../io/problem.xsd\"", "")
    # Newton's tolerance too: it bounds the linear solve's (an absolute floor below its target)
    linear = f'<linear preconditioner="{pc}"' + (f' rtol="{rtol}"' if rtol else "") + f"{extra}/>"
    if rtol:  # Newton's tolerance too: it bounds the linear solve's (an absolute floor below its target)
        linear += "" if "<newton" in text else f'<newton rtol="{newton_rtol}"/>'
        text = text.replace("<newton", f'<newton rtol="{newton_rtol}"', 1)
    if "<solver>" in text:
        text = text.replace("<solver>", "<solver>" + linear, 1)
    else:
        text = text.replace("<output", f"<solver>{linear}</solver>\n  <output", 1)
    text = re.sub(r"(<output[^>]*?)(/?)>", lambda m: m.group(1) + ">" + '<plots enabled="false"/>' +
                  ("</output>" if m.group(2) else ""), text, count=1)
    tag = tag or (pc + ("-tight" if rtol else ""))
    path = os.path.join(work, f"{name}-{tag}.xml")
    open(path, "w").write(text)
    return path


def compare_summaries(s1, s2, n):
    problems = []
    if sorted(s1) != sorted(s2):
        problems.append(f"summary keys differ: {sorted(set(s1) ^ set(s2))}")
    for k in s1:
        if k not in s2 or TIMING.search(k):
            continue
        # an imbalance is a fraction of the largest term, at round-off: equal to 1e-9 absolute
        tol = 1e-9 if "imbalance" in k else 1e-9 * family_scale(s1, k)
        if abs(s1[k] - s2[k]) > tol:
            problems.append(f"summary {k}: {s1[k]:.12g} in one process, {s2[k]:.12g} over {n} ranks")
    return problems


def compare_vtus(one, two, n):
    """Every VTU file of the one-process run against the same file over n ranks: points, cells, fields."""
    problems, files = [], sorted(os.path.basename(f) for f in glob.glob(os.path.join(one, "*.vtu")))
    # over ranks each output time is a .pvtu over pieces NAME_NNNN_pRRRR.vtu
    many = sorted(os.path.basename(f)[:-5] + ".vtu" for f in glob.glob(os.path.join(two, "*.pvtu")))
    if not files or files != many:
        return [f"VTU files differ: {files} in one process, {many} (.pvtu) over {n} ranks"], 0
    for f in files:
        (p1, c1, a1), (p2, c2, a2) = vtu_arrays(os.path.join(one, f)), vtu_arrays(os.path.join(two, f[:-4] + ".pvtu"))
        if c1 != c2 or p1.shape != p2.shape or abs(p1 - p2).max() != 0:
            problems.append(f"{f}: the meshes differ (points or cells)")
        for k, a in a1.items():
            b = a2.get(k)
            if b is None or b.shape != a.shape or abs(a - b).max() > 1e-9 * max(abs(a).max(), 1e-300):
                problems.append(f"{f}: field {k} differs between one process and {n} ranks")
    return problems, len(files)


def compare_probes(one, two, n):
    """The probe series (every output time) to 1e-9 of the largest value of the column's field."""
    problems = []
    for f in sorted(glob.glob(os.path.join(one, "*_probes.csv"))):
        rows = [[l.strip().split(",") for l in open(os.path.join(d, os.path.basename(f))) if l.strip()]
                for d in (one, two)]
        head = [r for r in rows[0] if not re.match(r"[-0-9.]", r[0])]
        nums = [[[float(x) for x in r] for r in t if re.match(r"[-0-9.]", r[0])] for t in rows]
        if head != [r for r in rows[1] if not re.match(r"[-0-9.]", r[0])] or len(nums[0]) != len(nums[1]):
            problems.append(f"{os.path.basename(f)}: columns or rows differ")
            continue
        names = head[0] if head else []
        for c in range(len(nums[0][0]) if nums[0] else 0):
            # a component that vanishes by symmetry is compared at the scale of its field (every column of it)
            field = re.split(r"[_@ ]", names[c])[0]
            family = [i for i in range(len(names)) if re.split(r"[_@ ]", names[i])[0] == field]
            scale = max(abs(r[i]) for r in nums[0] for i in family)
            if max(abs(a[c] - b[c]) for a, b in zip(*nums)) > 1e-9 * max(scale, 1e-300):
                problems.append(f"{os.path.basename(f)}: column {c} differs between one process and {n} ranks")
    return problems


def one_and_n(app, xml, work, mpi, n, label):
    """xml in one process and over n ranks: the same summary, VTU files and probe series."""
    one, many = os.path.join(work, f"{label}-1"), os.path.join(work, f"{label}-{n}")
    r1 = run([app, "run", xml, "--output-dir", one, "-q", "--device", "cpu"])
    r2 = run(mpi + ["-n", str(n), app, "run", xml, "--output-dir", many, "-q", "--device", "cpu"])
    if r1.returncode or r2.returncode:
        return [f"{label}: exit {r1.returncode} in one process, {r2.returncode} over {n} ranks: {r1.stderr}{r2.stderr}"]
    s1, s2 = summary(one), summary(many)
    problems = compare_summaries(s1, s2, n)
    vtu_problems, nvtu = compare_vtus(one, many, n)
    print(f"{label}: {nvtu} VTU files compared")
    return problems + vtu_problems + compare_probes(one, many, n)


def verdict(what, problems):
    print(("ok   " if not problems else "FAIL ") + what)
    for p in problems:
        print("  " + p)
    return bool(problems)


def memory_keys(s, n):
    """Over n ranks the summary's peaks: rank 0's, the largest rank's (at least rank 0's) and the sum over the
    ranks (more than the largest: every rank holds something)."""
    try:
        own, most, total = s["host_peak_bytes"], s["host_peak_largest_rank_bytes"], s["host_peak_all_ranks_bytes"]
        dev, dev_most = s["device_peak_bytes"], s["device_peak_largest_rank_bytes"]
    except KeyError as e:
        return [f"summary: no {e.args[0]}"]
    if not (0 < own <= most < total <= n * most and 0 < dev <= dev_most):
        return [f"memory peaks over {n} ranks: rank 0 {own:g} B, largest {most:g} B, all {total:g} B; device "
                f"rank 0 {dev:g} B, largest {dev_most:g} B"]
    return []


def sample_case(app, inputs, work, mpi, sample, name, n):
    problems = []
    out = os.path.join(work, f"{name}-{n}")
    r = run(mpi + ["-n", str(n), app, "run", os.path.join(inputs, sample, name + ".xml"), "--output-dir", out,
                   "--device", "cpu"])
    pcs = sorted(set(re.findall(r"with (\S+) preconditioning", r.stdout)))
    if r.returncode != 0 or len(pcs) != 1 or pcs[0] not in PC_XML:
        problems.append(f"{n} ranks: exit {r.returncode}, preconditioners {pcs}: {r.stdout}{r.stderr}")
    else:
        problems += expected(os.path.join(inputs, sample, name + ".expected.txt"), summary(out))
        problems += memory_keys(summary(out), n)
        # Krylov counts at the sample's tolerances, in one process with the preconditioner the ranks used: the
        # sample's own, for multigrid with the same coarse solver, which over ranks is gathered to rank 0
        # (fem/solvers/coarse_gather.h), so that the preconditioner is the one-process one; issue 15's 10%
        one = os.path.join(work, f"{name}-1")
        r1 = run([app, "run", variant(work, sample, name, inputs, PC_XML[pcs[0]], None),
                  "--output-dir", one, "-q", "--device", "cpu"])
        if r1.returncode:
            problems.append(f"one process with {pcs[0]}: exit {r1.returncode}: {r1.stderr}")
        else:
            its1, its2 = summary(one)["linear_iterations"], summary(out)["linear_iterations"]
            print(f"{name}: {its1:g} Krylov iterations with {pcs[0]} in one process, {its2:g} over {n} ranks")
            allowed = 0.1 * its1
            if abs(its1 - its2) > allowed:
                problems.append(f"Krylov iterations {its2:g} over {n} ranks, {its1:g} in one process "
                                f"({allowed:g} allowed)")
    problems += one_and_n(app, variant(work, sample, name, inputs), work, mpi, n, f"{name}-jacobi")
    return verdict(f"{sample}/{name} over {n} ranks", problems)


def schemes_case(app, inputs, work, mpi, n):
    """The transient sample (BDF2) with backward Euler and with Crank-Nicolson, whose explicit half is a residual
    of the previous step: one process against n ranks."""
    failures = 0
    for scheme in ("backward-euler", "crank-nicolson"):
        text = open(variant(work, "heat-transient-slab", "slab", inputs)).read()
        assert 'scheme="bdf2"' in text, "the transient sample no longer uses BDF2"
        xml = os.path.join(work, f"slab-{scheme}.xml")
        open(xml, "w").write(text.replace('scheme="bdf2"', f'scheme="{scheme}"'))
        problems = one_and_n(app, xml, work, mpi, n, f"slab-{scheme}")
        failures += verdict(f"heat-transient-slab with {scheme} over {n} ranks", problems)
    return failures


def errors_case(app, inputs, work, mpi):
    failures = 0
    bad = os.path.join(work, "bad.xml")
    open(bad, "w").write(open(os.path.join(inputs, "heat-wall-3d", "wall.xml")).read()
                         .replace('region="brick"', 'region="concrete"')
                         .replace('file="wall.msh"', f'file="{os.path.join(inputs, "heat-wall-3d", "wall.msh")}"'))
    for name, xml, code, needle in [("bad region", bad, 2, "has no region named 'concrete'")]:
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


def threads_case(app, inputs, work, mpi):
    """The 'device:' line of -v over ranks that all see every core of this machine."""
    cores = len(os.sched_getaffinity(0))
    xml = os.path.join(inputs, "thermal-bar", "bar.xml")
    failures = 0
    for n, extra, env, want, note in [(2, [], {}, max(1, cores // 2), True),
                                      (3, [], {}, max(1, cores // 3), True),
                                      (2, ["--threads", "3"], {}, 3, False),
                                      (2, [], {"OMP_NUM_THREADS": "3"}, 3, False)]:
        environ = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        environ.update(env)
        out = os.path.join(work, f"out-{n}-{len(extra)}-{len(env)}")
        cmd = mpi + ["--bind-to", "none", "-n", str(n), app, "run", xml, "--output-dir", out, "--device", "cpu",
                     "-v"] + extra
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=environ)
            line = next((l for l in r.stdout.splitlines() if l.startswith("device:")), "")
        except subprocess.TimeoutExpired:
            r, line = None, ""
        m = re.match(r"device: CPU, ([0-9]+) threads?", line)
        got = int(m[1]) if m else None
        problems = [] if r is not None and r.returncode == 0 else ["the run failed or did not end within 90 s"]
        if got != want:
            problems.append(f"{got} threads a rank, expected {want} ({cores} cores, {n} ranks)")
        if note != ("share of its machine's cores" in line):
            problems.append("the line " + ("does not say" if note else "says") + " that the threads are a share")
        what = f"{n} ranks on {cores} cores{' ' + ' '.join(extra) if extra else ''}" + \
               (f" OMP_NUM_THREADS={env['OMP_NUM_THREADS']}" if env else "")
        print(("ok   " if not problems else "FAIL ") + what + ": " + line)
        for p in problems:
            print("  " + p)
        failures += bool(problems)
    return failures


def main():
    case = sys.argv[1].split(":") if len(sys.argv) >= 6 else [""]
    sample = re.fullmatch(r"sample:([^/:]+)/([^/:]+):([0-9]+)", sys.argv[1]) if len(sys.argv) >= 6 else None
    schemes = re.fullmatch(r"schemes:([0-9]+)", sys.argv[1]) if len(sys.argv) >= 6 else None
    if case not in (["errors"], ["threads"]) and not sample and not schemes:
        print(__doc__)
        return 2
    app, inputs, work, mpi = sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4], sys.argv[5:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if sample:
        return 1 if sample_case(app, inputs, work, mpi, sample[1], sample[2], int(sample[3])) else 0
    if schemes:
        return 1 if schemes_case(app, inputs, work, mpi, int(schemes[1])) else 0
    if case == ["threads"]:
        return 1 if threads_case(app, inputs, work, mpi) else 0
    return 1 if errors_case(app, inputs, work, mpi) else 0


if __name__ == "__main__":
    sys.exit(main())
