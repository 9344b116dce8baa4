"""What the femto-app test scripts share: run a case, compare its exit code and messages, count failures.

Messages are compared after the work directory is replaced by @WORK@ and the inputs directory by @INPUTS@, so
that the expected texts are the same on every machine. Standard library only."""
import os
import re
import shutil
import subprocess


class Harness:
    def __init__(self, app, inputs, work):
        self.app, self.inputs, self.work = app, os.path.abspath(inputs), os.path.abspath(work)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.failures = 0

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def report(self, name, problems):
        print(("ok   " if not problems else "FAIL ") + name)
        for p in problems:
            print("  " + p)
        self.failures += bool(problems)

    def case(self, name, args, code, stderr=None, stdout_has=None, no_results_in=None, stdout=None):
        """Runs femto-app with args; stderr: the exact text (str) or a pattern (re.Pattern); stdout: exact."""
        run = subprocess.run([self.app] + args, capture_output=True, text=True)
        err = run.stderr.replace(self.work, "@WORK@").replace(self.inputs, "@INPUTS@").strip()
        problems = []
        if run.returncode != code:
            problems.append(f"exit code {run.returncode}, expected {code}")
        if stderr is not None and (err != stderr if isinstance(stderr, str) else not re.fullmatch(stderr, err)):
            want = stderr if isinstance(stderr, str) else stderr.pattern
            problems.append(f"stderr\n    {err!r}\n  expected\n    {want!r}")
        for needle in [stdout_has] if isinstance(stdout_has, str) else stdout_has or []:
            if needle not in run.stdout:
                problems.append(f"stdout lacks {needle!r}:\n{run.stdout}")
        if stdout is not None and run.stdout != stdout:
            problems.append(f"stdout\n    {run.stdout!r}\n  expected\n    {stdout!r}")
        if no_results_in and os.path.isdir(no_results_in):
            left = [f for f in os.listdir(no_results_in) if re.search(r"\.(vtu|pvd|h5|xdmf|txt)$", f)]
            if left:
                problems.append(f"results left behind after the failure: {left}")
        self.report(name, problems)
        return run

    def finish(self):
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0


def line_of(text, needle):
    """The 1-based line of the first line of text that contains needle."""
    return text.splitlines().index(next(l for l in text.splitlines() if needle in l)) + 1
