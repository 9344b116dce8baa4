"""Renders the cantilever sample's von Mises stress from femto's output, offscreen, for the README.

usage: pvpython tools/render-cantilever.py RESULTS_DIR OUTPUT.png
(RESULTS_DIR: where `femto-app run inputs/cantilever/cantilever.xml` wrote cantilever.pvd)

Debian 12's ParaView renders through X only (no EGL or OSMesa build): without a display, even
`pvpython --force-offscreen-rendering` crashes in XSync. So when there is no DISPLAY the script starts a virtual
X server, Xvfb (package xvfb, installed by tools/install-deps.sh), renders in a child pvpython pointed at it,
and stops the server however the child ends. Two details matter on a busy machine:
  -displayfd  Xvfb picks a free display number itself, so two renders starting at once cannot collide (as
              `xvfb-run -a` can);
  -noreset    pvpython probes the display with a first connection and closes it; an X server resets when its
              last client leaves, and the render window connecting during that reset fails ("bad X server
              connection", abort) — in 8 of 12 tries with four renders at once, in none with -noreset."""
import os
import shutil
import subprocess
import sys


def start_xvfb():
    """Starts Xvfb on a display number of its choosing; returns the process and ":N" (None when it failed)."""
    r, w = os.pipe()
    try:
        server = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-noreset", "-nolisten", "tcp", "-screen", "0",
                                   "1280x1024x24"], pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        sys.exit("render-cantilever.py: no X display, and no Xvfb to make one (apt-get install xvfb)")
    finally:
        os.close(w)
    number = b""
    while not number.endswith(b"\n"):  # Xvfb writes the number once it accepts connections
        chunk = os.read(r, 16)
        if not chunk:
            break
        number += chunk
    os.close(r)
    return server, ":" + number.decode().strip() if number.strip() else None


def render_on_xvfb():
    """Runs this script again in pvpython with DISPLAY on a fresh Xvfb; returns its exit code."""
    server, display = start_xvfb()
    try:
        if not display:
            print("render-cantilever.py: Xvfb did not start", file=sys.stderr)
            return 1
        child = subprocess.run([shutil.which("pvpython") or "pvpython", os.path.abspath(__file__)] + sys.argv[1:],
                               env=dict(os.environ, DISPLAY=display))
        return 1 if child.returncode < 0 else child.returncode
    finally:
        server.terminate()
        server.wait(timeout=30)


if not os.environ.get("DISPLAY"):
    sys.exit(render_on_xvfb())

from paraview.simple import (ColorBy, GetActiveViewOrCreate, GetColorTransferFunction, GetScalarBar,
                             PVDReader, ResetCamera, SaveScreenshot, Show, Text, WarpByVector)

results, png = sys.argv[1], sys.argv[2]
reader = PVDReader(FileName=f"{results}/cantilever.pvd")
reader.UpdatePipeline()
warp = WarpByVector(Input=reader, Vectors=["POINTS", "displacement"], ScaleFactor=50.0)
view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [1200, 560]
view.UseColorPaletteForBackground = 0
view.Background = [1.0, 1.0, 1.0]
view.OrientationAxesVisibility = 1
display = Show(warp, view)
display.SetRepresentationType("Surface With Edges")
display.EdgeColor = [0.25, 0.25, 0.25]
ColorBy(display, ("POINTS", "von_mises"))
lut = GetColorTransferFunction("von_mises")
lut.ApplyPreset("Turbo", True)
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "von Mises stress [Pa]"
bar.ComponentTitle = ""
bar.TitleColor = bar.LabelColor = [0.1, 0.1, 0.1]
title = Text(Text="femto: steel cantilever, 10 kN end load, p = 2 (displacement x 50)")
tdisplay = Show(title, view)
tdisplay.Color = [0.1, 0.1, 0.1]
tdisplay.FontSize = 14
view.CameraPosition = [0.35, -1.6, 0.75]
view.CameraFocalPoint = [0.56, 0.05, -0.06]
view.CameraViewUp = [0.0, 0.0, 1.0]
view.CameraParallelProjection = 1
ResetCamera(view)
view.CameraParallelScale = 0.34
SaveScreenshot(png, view, ImageResolution=[1200, 560])
print(f"wrote {png}")
