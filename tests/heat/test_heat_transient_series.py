#!/usr/bin/env python3
"""A transient heat run's energy accounts and its time series, read back from femto-app's files.

1. A slab heated by a fixed flux q through one face (the others insulated) must store exactly q A t (A: the
   face's area): stored_energy_change, heat_in_total and the flux at the final time are compared with it for
   backward Euler and BDF2, and the energy imbalance must be at the solver's tolerance.
2. The slab sample (sudden surface temperature) must store the energy of Carslaw & Jaeger's series solution,
   rho c A L (mean T - T0), to the time scheme's own error, and close its balance to 1e-8.
3. NAME_probes.csv has one row per output time, a header with units, and its last row equals the summary's
   probe values; NAME_convergence.csv sums to the summary's Newton and linear iteration counts; the PNG plots
   are PNG files of the requested size; <plots enabled="false"/> writes none and a re-run removes the old ones.
4. A steady run writes both CSVs too (one probe row at load factor 1); a bad plot size is one sentence, exit 2.
usage: test_heat_transient_series.py FEMTO_APP INPUTS_DIR WORK_DIR"""
import csv
import math
import os
import re
import struct
import subprocess
import sys

app, inputs, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
mesh = os.path.abspath(os.path.join(inputs, "heat-transient-slab", "slab.msh"))
rho, c, k, area, length = 7850.0, 460.0, 45.0, 1e-4, 0.1
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += not ok


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def run(name, heat, time, output, code=0, args=()):
    xml = f"""<?xml version="1.0"?>
<femto>
  <mesh file="{mesh}"/>
  <heat>
    <initial temperature="293.15"/>
    <material region="slab" conductivity="{k}" density="{rho}" specific-heat="{c}"/>
    {heat}
  </heat>
  {time}
  <output directory="{os.path.join(work, name)}" basename="{name}">
    <vtu enabled="false"/><hdf5 enabled="false"/>
    {output}
  </output>
</femto>
"""
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(xml)
    r = subprocess.run([app, "run", path, "-q", "--device", "cpu", *args], capture_output=True, text=True)
    if r.returncode != code:
        print(r.stdout, r.stderr)
        check(False, f"{name}: exit code {r.returncode}, expected {code}")
        return None, r
    if code:
        return None, r
    summary = {}
    for line in open(os.path.join(work, name, name + "_summary.txt")):
        if not line.startswith("#"):
            f = line.split()
            summary[f[0]] = float(f[1])
    return summary, r


def png_size(path):
    data = open(path, "rb").read(24)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


# 1. fixed flux: stored energy = q A t exactly
q, t_end = 1e4, 600.0
for scheme in ("backward-euler", "bdf2"):
    s, _ = run(f"flux_{scheme}", f'<flux boundary="heated" value="{q}"/>',
               f'<time scheme="{scheme}" start="0" end="{t_end}" step="20" output-every="5"/>', "")
    if s:
        want = q * area * t_end
        check(close(s["stored_energy_change"], want, 1e-9),
              f"{scheme}: stored energy {s['stored_energy_change']:.10g} J = q A t = {want:.10g} J")
        check(close(s["heat_in_total:heated"], want, 1e-9), f"{scheme}: heat_in_total {s['heat_in_total:heated']:.10g} J")
        check(close(s["heat_in:heated"], q * area, 1e-12), f"{scheme}: heat_in at t = 600 s {s['heat_in:heated']:.10g} W")
        check(s["energy_imbalance"] < 1e-9, f"{scheme}: energy imbalance {s['energy_imbalance']:.2e} < 1e-9")

# 2. sudden surface temperature: the series solution's stored energy
alpha, Ts, T0 = k / (rho * c), 373.15, 293.15
Fo = alpha * t_end / length**2
mean = Ts + (T0 - Ts) * sum(8 / ((2 * n + 1)**2 * math.pi**2) * math.exp(-((2 * n + 1) * math.pi / 2)**2 * Fo)
                            for n in range(200))
exact = rho * c * area * length * (mean - T0)
# the schemes' own errors at dt = 10 s: backward Euler (first order) 4e-3, BDF2 2e-5, Crank-Nicolson 1.2e-4
for scheme, rel in (("backward-euler", 6e-3), ("bdf2", 1e-4), ("crank-nicolson", 2e-4)):
    s, _ = run(f"slab_{scheme}", f'<temperature boundary="heated" value="{Ts}"/>',
               f'<time scheme="{scheme}" start="0" end="{t_end}" step="10" output-every="1000"/>', "",
               args=("--order", "2"))
    if s:
        check(close(s["stored_energy_change"], exact, rel),
              f"{scheme}: stored energy {s['stored_energy_change']:.8g} J, series {exact:.8g} J")
        check(close(s["heat_in_total:heated"], s["stored_energy_change"], 1e-8) and s["energy_imbalance"] < 1e-8,
              f"{scheme}: heat through 'heated' {s['heat_in_total:heated']:.10g} J balances it "
              f"(imbalance {s['energy_imbalance']:.1e})")

# 3. the series files of a transient run
probes = '<probe name="hot" x="0" y="0.005" z="0.005"/><probe name="cold" x="0.1" y="0.005" z="0.005"/>'
name = "series"
s, r = run(name, f'<flux boundary="heated" value="{q}"/>',
           '<time scheme="bdf2" start="0" end="600" step="20" output-every="4"/>',
           '<plots width="640" height="480"/>' + probes)
folder = os.path.join(work, name)
if s:
    rows = list(csv.reader(open(os.path.join(folder, name + "_probes.csv"))))
    check(rows[0] == ["time [s]", "temperature@hot [K]", "temperature@cold [K]"], f"probes header {rows[0]}")
    times = [float(row[0]) for row in rows[1:]]
    want = [0.0] + [80.0 * i for i in range(1, 8)] + [600.0]  # every 4th step of 30, the last always
    check(times == want, f"probe rows at the output times {times}")
    check(all(close(float(v), s[key], 1e-11) for v, key in zip(rows[-1][1:], ("temperature@hot", "temperature@cold"))),
          f"last probe row {rows[-1][1:]} = the summary's probe values")
    conv = list(csv.DictReader(open(os.path.join(folder, name + "_convergence.csv"))))
    check(list(conv[0].keys()) == ["step", "time [s]", "newton_iteration", "residual_norm", "linear_iterations",
                                   "seconds [s]", "accepted"], f"convergence header {list(conv[0].keys())}")
    newton = sum(1 for row in conv if int(row["newton_iteration"]) > 0)
    linear = sum(int(row["linear_iterations"]) for row in conv)
    steps = sorted({int(row["step"]) for row in conv})
    check(newton == s["newton_iterations"] and linear == s["linear_iterations"] and steps == list(range(1, 31)),
          f"convergence rows: {newton} Newton and {linear} linear iterations, steps {steps[0]}..{steps[-1]}")
    check(float(conv[-1]["time [s]"]) == 600.0 and float(conv[-1]["residual_norm"]) < float(conv[-2]["residual_norm"]),
          "the last solve at t = 600 s reduced its residual")
    for plot in ("probes", "convergence"):
        size = png_size(os.path.join(folder, f"{name}_{plot}.png"))
        check(size == (640, 480), f"{name}_{plot}.png is a PNG of 640 x 480 ({size})")
    check(s["plots"] == 2, f"summary counts {s['plots']:.0f} plots")
    # the same run without plots: the CSVs stay, the previous run's PNGs go (they belonged to its result set)
    s, r = run(name, f'<flux boundary="heated" value="{q}"/>',
               '<time scheme="bdf2" start="0" end="600" step="20" output-every="4"/>', '<plots enabled="false"/>' + probes)
    left = sorted(f for f in os.listdir(folder) if not f.startswith("."))
    check(left == [name + "_convergence.csv", name + "_probes.csv", name + "_summary.txt"] and s and s["plots"] == 0,
          f"plots off: {left}")

# 4. a steady run: one probe row at load factor 1, a convergence file; a bad size
s, r = run("steady", f'<temperature boundary="heated" value="{Ts}"/><flux boundary="insulated" value="-500"/>', "",
           probes)
if s:
    rows = list(csv.reader(open(os.path.join(work, "steady", "steady_probes.csv"))))
    check(rows[0][0] == "load_factor" and len(rows) == 2 and float(rows[1][0]) == 1.0
          and close(float(rows[1][2]), s["temperature@cold"], 1e-11), f"steady probes {rows}")
    conv = list(csv.DictReader(open(os.path.join(work, "steady", "steady_convergence.csv"))))
    check(len(conv) == s["newton_iterations"] + 1 and conv[0]["newton_iteration"] == "0", f"steady convergence: {len(conv)} rows")
_, r = run("bad", f'<flux boundary="heated" value="{q}"/>', '<time scheme="bdf2" start="0" end="60" step="20"/>',
           '<plots width="10"/>', code=2)
check(re.fullmatch(r'femto-app: .*bad\.xml:12: width="10" on <plots>: .*expected 200 <= width <= 4000\n?', r.stderr)
      is not None, f"bad plot width: {r.stderr.strip()}")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
