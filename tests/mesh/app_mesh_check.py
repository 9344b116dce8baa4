#!/usr/bin/env python3
"""femto-app and meshes: the mesh cache, --force, and inputs that used to hang or lose words.

usage: app_mesh_check.py FEMTO_APP WORK_DIR CASE, CASE one of
  cache      a .geo problem run twice: the second run says `mesh: cached`, spends less time on the mesh and writes
             the same summary; with FEMTO_MESH_CACHE=off the run meshes again, writes no cache and the same
             summary; changing the size attribute meshes again; without FEMTO_MESH_CACHE the cache is made in
             .femto-cache beside the .geo
  force      a tiny size is refused before meshing with the estimate and a pointer to --force; --force is in
             --help and accepted by check
  fifo       a problem file and a mesh file that are FIFOs are refused at once with one sentence
  long-path  an error about a 4,400-character output path is printed whole, as one sentence (4,100 characters and
             more; the old message buffer cut it at 2,048)
Standard library only."""
import os
import re
import shutil
import stat
import subprocess
import sys
import time

app, work, which = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = 0

SQUARE = """// unit square of triangles, 'left' at x = 0 and 'right' at x = 1
Point(1) = {0, 0, 0}; Point(2) = {1, 0, 0}; Point(3) = {1, 1, 0}; Point(4) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};
Physical Surface("plate") = {1}; Physical Curve("left") = {4}; Physical Curve("right") = {2};
"""
BOX = """// unit cube of tetrahedra (Gmsh's parallel 3D mesher when femto-app meshes it)
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Physical Volume("plate") = {1};
Physical Surface("left") = {1}; Physical Surface("right") = {2};
"""


def problem(name, geo, size, region="plate"):
    """A steady heat problem on `geo` (temperatures 300 K left, 400 K right) without VTU or HDF5 output."""
    path = os.path.join(work, name + ".xml")
    with open(path, "w") as f:
        f.write(f"""<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{geo}" size="{size}"/>
  <heat>
    <material region="{region}" conductivity="2" source="1000"/>
    <temperature boundary="left" value="300"/>
    <temperature boundary="right" value="400"/>
  </heat>
  <output directory="{work}/out-{name}" basename="{name}">
    <vtu enabled="false"/>
    <hdf5 enabled="false"/>
  </output>
</femto>
""")
    return path


def write(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def expect(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {what}")
    return cond


def femto(args, env_cache=None, timeout=120):
    env = dict(os.environ)
    env.pop("FEMTO_MESH_CACHE", None)
    if env_cache is not None:
        env["FEMTO_MESH_CACHE"] = env_cache
    run = subprocess.run([app] + args, capture_output=True, text=True, env=env, timeout=timeout)
    return run


def mesh_line(out):
    return next((line for line in out.splitlines() if line.startswith("mesh ")), "")


def mesh_seconds(out):
    m = re.search(r"^time: mesh ([0-9.]+) s", out, re.M)
    return float(m.group(1)) if m else None


def summary(name):
    """The summary's numbers, without the times the run took (`*_seconds`) and its peak host memory (`host_peak_*`:
    Gmsh's meshing raises it; reading a cached mesh does not)."""
    with open(os.path.join(work, f"out-{name}", f"{name}_summary.txt")) as f:
        return [line for line in f if not line.startswith("#") and "_seconds " not in line
                and not line.startswith("host_peak_")]


def run_ok(args, env_cache, what):
    run = femto(args, env_cache)
    expect(run.returncode == 0, f"{what}: exit code {run.returncode}: {run.stderr.strip()}")
    print(f"{what}: {mesh_line(run.stdout)}; {mesh_seconds(run.stdout)} s")
    return run


def case_cache():
    cache = os.path.join(work, "cache")
    for name, text in (("square", SQUARE), ("box", BOX)):
        geo = write(name + ".geo", text)
        xml = problem(name, geo, 0.05 if name == "square" else 0.2)
        first = run_ok(["run", xml, "--device", "cpu"], cache, f"{name}, first run")
        first_summary = summary(name)
        second = run_ok(["run", xml, "--device", "cpu"], cache, f"{name}, second run")
        expect(mesh_line(first.stdout).endswith("cached)") is False and "mesh: meshed by Gmsh" in first.stdout,
               f"{name}: the first run says it meshed: {mesh_line(first.stdout)!r}")
        expect(mesh_line(second.stdout).endswith("; mesh: cached"),
               f"{name}: the second run says `mesh: cached`: {mesh_line(second.stdout)!r}")
        expect(mesh_seconds(second.stdout) < mesh_seconds(first.stdout),
               f"{name}: mesh time {mesh_seconds(second.stdout)} s cached, {mesh_seconds(first.stdout)} s meshed")
        expect(summary(name) == first_summary, f"{name}: the cached run's summary differs from the first run's")
        if name == "square":  # a 2D mesh is the same whenever Gmsh makes it; a parallel 3D one need not be
            off = run_ok(["run", xml, "--device", "cpu"], "off", f"{name}, cache off")
            expect("mesh: meshed by Gmsh" in off.stdout, f"{name}: FEMTO_MESH_CACHE=off meshes again")
            expect(summary(name) == first_summary, f"{name}: the uncached run's summary differs")
    # (the coarse solver's orderings, order-KEY.perm, live in the same folder: fem/solvers/order_cache.h)
    entries = sorted(e for e in os.listdir(cache) if not re.fullmatch(r"order-[0-9a-f]{16}\.perm", e))
    expect(len(entries) == 2 and all(re.fullmatch(r"(square|box)-[0-9a-f]{16}\.femesh", e) for e in entries),
           f"one entry per script in the cache folder: {entries}")
    resized = problem("square", os.path.join(work, "square.geo"), 0.04)
    run = run_ok(["check", resized], cache, "square, new size")
    expect("mesh: meshed by Gmsh" in run.stdout, "a new size attribute meshes again")
    run = run_ok(["check", resized], None, "square, default cache folder")
    expect(os.path.isdir(os.path.join(work, ".femto-cache")), "without FEMTO_MESH_CACHE the cache is beside the .geo")


def case_force():
    geo = write("box.geo", BOX)
    xml = problem("box", geo, 1e-5)
    start = time.monotonic()
    run = femto(["check", xml], "off")
    err = run.stderr.strip()
    expect(run.returncode == 2 and "\n" not in err and f"meshing '{geo}' would make about 4.5e+15 cells" in err
           and err.endswith("use a larger size, or --force to mesh anyway"), f"tiny size: {run.returncode} {err!r}")
    expect(time.monotonic() - start < 10, "the refusal comes before meshing")
    print(err)
    expect("--force" in femto(["--help"]).stdout, "--force is in --help")
    expect("--force" in femto(["run", "--help"]).stdout, "--force is in run --help")
    run = femto(["check", problem("fine", geo, 0.3), "--force"], "off")
    expect(run.returncode == 0, f"check --force: exit code {run.returncode}: {run.stderr.strip()}")


def case_fifo():
    for name, args, want in (("problem.xml", ["check"], "it is a FIFO (named pipe), not a regular file"),
                             ("mesh.msh", ["info"], "is not a regular file")):
        path = os.path.join(work, name)
        os.mkfifo(path)
        start = time.monotonic()
        try:
            run = femto(args + [path], "off", timeout=20)
        except subprocess.TimeoutExpired:
            expect(False, f"{name}: femto-app waits on the FIFO")
            continue
        err = run.stderr.strip()
        expect(run.returncode == 2 and "\n" not in err and want in err and path in err, f"{name}: {err!r}")
        expect(time.monotonic() - start < 5, f"{name}: refused at once")
        print(err)


def case_long_path():
    geo = write("square.geo", SQUARE)
    xml = problem("square", geo, 0.25)
    long_dir = os.path.join(work, *(["d" * 250] * 17))  # about 4,400 characters
    run = femto(["run", xml, "--output-dir", long_dir], "off")
    err = run.stderr.strip()
    # more than twice the 2,048 bytes that used to cut it; the directory is quoted up to the 4,095 bytes that a
    # problem's output directory holds
    expect(run.returncode == 2 and "\n" not in err and len(err) > 4100 and long_dir[:4000] in err,
           f"exit code {run.returncode}, {len(err)} characters on one line")
    expect(err.endswith(os.strerror(36)), f"the sentence ends with the reason: ...{err[-80:]!r}")
    print(f"{len(err)} characters: {err[:60]}...{err[-60:]}")


{"cache": case_cache, "force": case_force, "fifo": case_fifo, "long-path": case_long_path}[which]()
sys.exit(1 if failures else 0)
