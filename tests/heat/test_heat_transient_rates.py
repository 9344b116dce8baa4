#!/usr/bin/env python3
"""Transient conduction in a slab against the series solution, through femto-app's own time stepping.

The slab sample (inputs/heat-transient-slab) is run with element order 3 (spatial error far below the time
error) and time steps 60, 30, 15 s to t = 600 s; the temperature of the insulated face is compared with
Carslaw & Jaeger's series. Backward Euler must converge at rate 1 and BDF2 at rate 2 (within 0.15);
Crank-Nicolson (with two backward-Euler start-up steps) at rate 2.
usage: test_heat_transient_rates.py FEMTO_APP INPUTS_DIR WORK_DIR"""
import math
import os
import re
import subprocess
import sys

app, inputs, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
alpha, L, t_end, Ts, T0 = 45 / (7850 * 460), 0.1, 600.0, 373.15, 293.15
Fo = alpha * t_end / L**2
exact = Ts + (T0 - Ts) * sum(4 * (-1)**n / ((2 * n + 1) * math.pi) * math.exp(-((2 * n + 1) * math.pi / 2)**2 * Fo)
                             for n in range(60))
template = open(os.path.join(inputs, "heat-transient-slab", "slab.xml")).read()
mesh = os.path.abspath(os.path.join(inputs, "heat-transient-slab", "slab.msh"))
failures = 0
for scheme, rate_expected in (("backward-euler", 1), ("bdf2", 2), ("crank-nicolson", 2)):
    errors = []
    for dt in (60.0, 30.0, 15.0):
        xml = re.sub(r'<mesh file="[^"]*"/>', f'<mesh file="{mesh}"/>', template)
        xml = re.sub(r'<time [^>]*/>', f'<time scheme="{scheme}" start="0" end="600" step="{dt}" output-every="1000"/>', xml)
        xml = re.sub(r'<output [^>]*/>', '<output directory="." basename="slab"><vtu enabled="false"/><hdf5 enabled="false"/></output>', xml)
        path = os.path.join(work, f"slab_{scheme}_{int(dt)}.xml")
        open(path, "w").write(xml)
        out = os.path.join(work, f"{scheme}_{int(dt)}")
        run = subprocess.run([app, "run", path, "--order", "3", "--output-dir", out, "-q", "--device", "cpu"],
                             capture_output=True, text=True)
        if run.returncode:
            print(run.stdout, run.stderr)
            sys.exit(1)
        summary = dict(l.split()[:2] for l in open(os.path.join(out, "slab_summary.txt")) if not l.startswith("#"))
        errors.append(abs(float(summary["temperature_min"]) - exact))
    rates = [math.log2(errors[i] / errors[i + 1]) for i in range(2)]
    print(f"{scheme:15s} errors {errors[0]:.3e} {errors[1]:.3e} {errors[2]:.3e} K, rates {rates[0]:.2f} {rates[1]:.2f}")
    if rate_expected and abs(rates[-1] - rate_expected) > 0.15:
        print(f"FAIL {scheme}: rate {rates[-1]:.2f}, expected {rate_expected} +- 0.15")
        failures += 1
print(f"exact temperature of the insulated face at t = 600 s: {exact:.9f} K")
sys.exit(1 if failures else 0)
