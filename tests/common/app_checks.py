"""What the standard-library tests of femto-app share (run by the first python3 on PATH, which may lack
Debian's modules; tests/io/result_files.py is the same for the tests that read results with VTK): the checks'
tally and the summary file's numbers."""
import os
import subprocess
import sys


class Checks:
    """check(cond, what) prints ok/FAIL and counts failures; check.exit(name) ends the test with its status
    (without a name: the count of failures alone)."""

    def __init__(self):
        self.failures = 0

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        self.failures += not cond
        return cond

    def exit(self, name=None):
        if name:
            print(f"{name}: " + ("all checks passed" if not self.failures else f"{self.failures} check(s) failed"))
        else:
            print(f"{self.failures} failure(s)")
        sys.exit(1 if self.failures else 0)


def summary(folder, name):
    """FOLDER/NAME_summary.txt as {key: value}, its numeric values only."""
    values = {}
    for line in open(os.path.join(folder, f"{name}_summary.txt")):
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("#"):
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return values


def run_app(check, app, xml, device, cache, *args):
    """femto-app run XML --device DEVICE ARGS, the mesh cache in the folder `cache`: the finished process, or None
    after a failed check (a nonzero exit). On a machine without the device (exit 4 with --device cuda) the whole
    test ends as skipped (exit 77)."""
    env = dict(os.environ, FEMTO_MESH_CACHE=cache)
    r = subprocess.run([app, "run", xml, "--device", device, *args], capture_output=True, text=True, env=env)
    if r.returncode == 4 and device == "cuda":
        print(f"skipped: {r.stderr.strip()}")
        sys.exit(77)
    if r.returncode != 0:
        check(False, f"{os.path.basename(xml)}: femto-app exited {r.returncode}: {r.stderr.strip()}")
        return None
    return r
