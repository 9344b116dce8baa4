#!/usr/bin/env python3
"""`cmake --install`: the samples without what running them leaves behind, the schema where they point at it.

usage: test_install.py CMAKE SOURCE_DIR BUILD_DIR WORK_DIR
1. cmake/install-samples.cmake on a copy of a sample that has been run in place (a results/ folder, a
   summary, a .pvd and a hidden temporary file beside the problem): only the sample's own files arrive, and the
   problem's schema location is rewritten for the installed tree.
2. A real `cmake --install BUILD --prefix WORK/prefix`: femto-app, share/femto/problem.xsd identical to
   io/problem.xsd and to `femto-app schema`; every installed sample names a schema location that exists, is
   valid against it (xmllint, when present) and passes the installed `femto-app check`; no results folder.
Standard library only."""
import filecmp
import os
import shutil
import subprocess
import sys

cmake, source, build, work = sys.argv[1], *map(os.path.abspath, sys.argv[2:5])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = 0


def check(name, problems):
    global failures
    print(("ok   " if not problems else "FAIL ") + name)
    for p in problems:
        print("  " + str(p))
    failures += bool(problems)


# 1. a sample that was run in place
fake = os.path.join(work, "src", "heat-fin-2d")
shutil.copytree(os.path.join(source, "inputs", "heat-fin-2d"), fake)
os.makedirs(os.path.join(fake, "results"))
for name in ["results/fin_0000.vtu", "results/fin.h5", "fin_summary.txt", "fin.pvd", ".fin.h5.tmp.4242"]:
    open(os.path.join(fake, name), "w").write("generated")
dest = os.path.join(work, "dest")
run = subprocess.run([cmake, f"-DSOURCE={os.path.dirname(fake)}", f"-DDESTINATION={dest}", "-P",
                      os.path.join(source, "cmake", "install-samples.cmake")], capture_output=True, text=True)
check("install-samples.cmake runs", [run.stderr] if run.returncode else [])
got = sorted(os.listdir(os.path.join(dest, "heat-fin-2d"))) if os.path.isdir(dest) else []
want = ["README.md", "fin.expected.txt", "fin.geo", "fin.msh", "fin.xml"]
check(f"only the sample's own files are installed: {got}", [] if got == want else [f"expected {want}"])
if "fin.xml" in got:
    text = open(os.path.join(dest, "heat-fin-2d", "fin.xml")).read()
    check("the installed problem points at ../../problem.xsd",
          [] if 'xsi:noNamespaceSchemaLocation="../../problem.xsd"' in text else [text[:400]])

# 2. the real installation
prefix = os.path.join(work, "prefix")
run = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True)
check("cmake --install", [run.stderr] if run.returncode else [])
share = os.path.join(prefix, "share", "femto")
app = os.path.join(prefix, "bin", "femto-app")
xsd = os.path.join(share, "problem.xsd")
check("share/femto/problem.xsd is io/problem.xsd",
      [] if os.path.isfile(xsd) and filecmp.cmp(xsd, os.path.join(source, "io", "problem.xsd"), shallow=False)
      else ["missing or different"])
printed = subprocess.run([app, "schema"], capture_output=True, text=True).stdout
check("femto-app schema prints the installed schema", [] if printed == open(xsd).read() else ["differs"])
left = [os.path.join(d, n) for d, dirs, files in os.walk(share) for n in dirs + files
        if n == "results" or n.startswith(".") or n.endswith((".vtu", ".pvd", ".h5", ".xdmf", "_summary.txt"))]
check("nothing generated under share/femto", left)
xmllint = shutil.which("xmllint")
samples = sorted(os.path.join(d, n) for d, _, files in os.walk(os.path.join(share, "inputs")) for n in files
                 if n.endswith(".xml"))
check(f"{len(samples)} samples installed", [] if len(samples) >= 10 else ["fewer than the repository's 10"])
for xml in samples:
    name = os.path.relpath(xml, share)
    text = open(xml).read()
    location = text.split('xsi:noNamespaceSchemaLocation="', 1)[-1].split('"', 1)[0]
    where = os.path.normpath(os.path.join(os.path.dirname(xml), location))
    problems = [] if where == xsd else [f"schema location {location!r} is {where}, not {xsd}"]
    if xmllint:
        lint = subprocess.run([xmllint, "--noout", "--schema", xsd, xml], capture_output=True, text=True)
        problems += [lint.stderr.strip()] if lint.returncode else []
    ok = subprocess.run([app, "check", xml, "-q"], capture_output=True, text=True)
    problems += [ok.stderr.strip()] if ok.returncode else []
    check(f"{name}: schema found, valid, femto-app check passes", problems)
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
