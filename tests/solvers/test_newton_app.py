#!/usr/bin/env python3
"""Newton's choices on nonlinear problems, through femto-app on two samples.

Its line search on a problem with an energy (a symmetric Jacobian) follows the energy's slope along the
correction (fem/solvers/newton.c; FEMTO_NORM_SEARCH=1 searches on the residual norm instead, as before): on the
neo-Hookean cantilever it needs at most 60% of the Newton iterations of the norm search, cuts no load step back
(the norm search cuts two), and gives the same tip displacement (1e-6 relative); the whole load in one load step
converges without a cut-back too (17 Newton iterations; the norm search cut back 6 times and took 222).

It keeps the preconditioner of a nonlinear problem (fem/solvers/newton.h, <newton reuse-preconditioner>) rather
than setting up a new one at every Newton iteration:
  - the neo-Hookean cantilever (20 load steps, p = 2, multigrid with CG; 76 Newton iterations): the same Newton
    iterations and tip displacement (1e-6 relative, the sample's own regression tolerance) either way; with the
    default, at most a quarter as many preconditioner setups as Newton iterations and at most 1.5 times the
    linear iterations (the rule spends at most one solve's worth beyond the first solve of each setup; 828
    against 643 here); without it, one setup per Newton iteration;
  - the k(T) heat bar (one steady solve, GMRES, 4 Newton iterations): a kept preconditioner that stops serving
    is replaced within the solve, so the default takes at most twice the linear iterations of a new setup every
    iteration (a kept one left to run took 542 against 28), and the same temperatures (1e-8 relative);
  - the default run twice: the same linear iterations and setups (the rule counts iterations, not seconds; on
    a GPU, whose atomic assembly rounds differently from run to run, within 5%).
usage: test_newton_app.py FEMTO_APP INPUTS_DIR WORK_DIR [--device cpu|cuda]   (exit 77: no such device)
Standard library only."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from app_checks import Checks, summary  # noqa: E402

app, inputs, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
check = Checks()


def run(sample, xml, base, reuse, tag, env=None, edit=None):
    """The sample's problem with <newton reuse-preconditioner> set (None: the file's own), in a copy; env: more
    environment; edit: (old, new) text of the file replaced."""
    folder = os.path.join(work, f"{sample}-{tag}")
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(os.path.join(inputs, sample), folder)
    path = os.path.join(folder, xml)
    text = open(path).read()
    if edit:
        text = text.replace(*edit)
    if reuse is not None:
        attr = f' reuse-preconditioner="{"true" if reuse else "false"}"'
        if "<newton" in text:
            text = re.sub(r"<newton\b", "<newton" + attr, text, count=1)
        elif "<solver>" in text:
            text = text.replace("<solver>", f"<solver><newton{attr}/>", 1)
        else:
            text = text.replace("</femto>", f"  <solver><newton{attr}/></solver>\n</femto>")
    open(path, "w").write(text)
    r = subprocess.run([app, "run", path, "--device", device, "--output-dir", os.path.join(folder, "out"), "-v"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, **(env or {})))
    if r.returncode == 4 and device == "cuda":
        print(f"skipped: {r.stderr.strip()}")
        sys.exit(77)
    check(r.returncode == 0, f"{sample} ({tag}) runs: exit {r.returncode} {r.stderr.strip()}")
    if r.returncode:
        return {}
    values = summary(os.path.join(folder, "out"), base)
    values["cut back"] = len(re.findall(r"cutting the increment", r.stdout))
    return values


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


os.makedirs(work, exist_ok=True)

keep = run("cantilever-neohookean", "beam.xml", "beam", None, "default")
new = run("cantilever-neohookean", "beam.xml", "beam", False, "every")
again = run("cantilever-neohookean", "beam.xml", "beam", None, "again")
if keep and new and again:
    n_keep, n_new = keep["newton_iterations"], new["newton_iterations"]
    print(f"neo-Hookean beam: kept {keep['preconditioner_setups']:g} setups, {keep['linear_iterations']:g} linear "
          f"iterations, {n_keep:g} Newton; every iteration {new['preconditioner_setups']:g} setups, "
          f"{new['linear_iterations']:g} linear, {n_new:g} Newton")
    check(n_keep == n_new, f"the same Newton iterations either way ({n_keep:g}, {n_new:g})")
    check(close(keep["displacement_z@tip"], new["displacement_z@tip"], 1e-6),
          f"the same tip deflection ({keep['displacement_z@tip']:.9g}, {new['displacement_z@tip']:.9g} m)")
    check(new["preconditioner_setups"] == n_new, "reuse-preconditioner=\"false\": one setup per Newton iteration")
    check(keep["preconditioner_setups"] <= 0.25 * n_keep,
          f"kept: {keep['preconditioner_setups']:g} setups for {n_keep:g} Newton iterations (at most a quarter)")
    check(keep["linear_iterations"] <= 1.5 * new["linear_iterations"],
          f"kept: {keep['linear_iterations']:g} linear iterations, at most 1.5 x {new['linear_iterations']:g}")
    # the CPU's gather assembly is the same to the bit from run to run; the GPU's atomics are not, and a count
    # may then move by an iteration or two
    same = (keep["linear_iterations"] == again["linear_iterations"] and
            keep["preconditioner_setups"] == again["preconditioner_setups"]) if device == "cpu" else \
        close(keep["linear_iterations"], again["linear_iterations"], 0.05)
    check(same, f"the same choices on a second run ({again['linear_iterations']:g} linear iterations, "
          f"{again['preconditioner_setups']:g} setups)")

norm = run("cantilever-neohookean", "beam.xml", "beam", None, "norm", {"FEMTO_NORM_SEARCH": "1"})
energy = again
if norm and energy:
    print(f"neo-Hookean beam: line search on the energy's slope {energy['newton_iterations']:g} Newton iterations, "
          f"{energy['cut back']} cut back; on |R| {norm['newton_iterations']:g}, {norm['cut back']} cut back")
    check(energy["newton_iterations"] <= 0.6 * norm["newton_iterations"],
          f"the energy's slope: {energy['newton_iterations']:g} Newton iterations, at most 0.6 x "
          f"{norm['newton_iterations']:g}")
    check(energy["cut back"] == 0 and norm["cut back"] > 0, "no load step cut back, where the norm search cuts")
    check(close(energy["displacement_z@tip"], norm["displacement_z@tip"], 1e-6),
          f"the same tip deflection ({energy['displacement_z@tip']:.9g}, {norm['displacement_z@tip']:.9g} m)")
one = run("cantilever-neohookean", "beam.xml", "beam", None, "one-step", edit=('load-steps="20"', 'load-steps="1"'))
if one and energy:
    print(f"neo-Hookean beam, the whole load in one step: {one['newton_iterations']:g} Newton iterations, "
          f"{one['cut back']} cut back")
    check(one["cut back"] == 0 and one["newton_iterations"] <= 25,
          "the whole load in one step converges without a cut-back (the search on |R| cut back 6 times)")
    check(close(one["displacement_z@tip"], energy["displacement_z@tip"], 1e-6),
          f"the same tip deflection in one step ({one['displacement_z@tip']:.9g} m)")

keep = run("heat-kt-bar", "bar.xml", "bar", None, "default")
new = run("heat-kt-bar", "bar.xml", "bar", False, "every")
if keep and new:
    print(f"k(T) bar: kept {keep['preconditioner_setups']:g} setups, {keep['linear_iterations']:g} linear "
          f"iterations; every iteration {new['preconditioner_setups']:g} setups, {new['linear_iterations']:g}")
    check(keep["newton_iterations"] == new["newton_iterations"], "the same Newton iterations either way")
    check(keep["linear_iterations"] <= 2 * new["linear_iterations"],
          f"a kept preconditioner that stops serving is replaced within the solve: {keep['linear_iterations']:g} "
          f"linear iterations, at most 2 x {new['linear_iterations']:g}")
    check(keep["preconditioner_setups"] < new["preconditioner_setups"], "fewer setups when kept")
    keys = [k for k in keep if k.startswith("heat_in:") or k.startswith("temperature@")]
    check(keys and all(close(keep[k], new[k], 1e-7) for k in keys),
          "the same heat flows and probe temperatures to 1e-7 (" +
          ", ".join(f"{k} {keep[k]:.10g} / {new.get(k, float('nan')):.10g}" for k in keys) + ")")

check.exit("test_newton_app")
