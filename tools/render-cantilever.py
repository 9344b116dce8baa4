"""Renders the cantilever sample's von Mises stress from femto's output, offscreen, for the README.

usage: xvfb-run -a pvpython tools/render-cantilever.py RESULTS_DIR OUTPUT.png
(RESULTS_DIR: where `femto-app run inputs/cantilever/cantilever.xml` wrote cantilever.pvd)

Debian 12's ParaView renders through X only (no EGL or OSMesa build): without a display, even
`pvpython --force-offscreen-rendering` crashes in XSync. The script therefore starts itself again under
xvfb-run (package xvfb, installed by tools/install-deps.sh) when there is no DISPLAY, so plain
`pvpython tools/render-cantilever.py RESULTS_DIR OUTPUT.png` works too."""
import os
import shutil
import sys

if not os.environ.get("DISPLAY") and not os.environ.get("FEMTO_RENDER_UNDER_XVFB"):
    xvfb, pvpython = shutil.which("xvfb-run"), shutil.which("pvpython")
    if not xvfb or not pvpython:
        sys.exit("render-cantilever.py: no X display and no xvfb-run to make one (apt-get install xvfb)")
    os.environ["FEMTO_RENDER_UNDER_XVFB"] = "1"
    os.execv(xvfb, [xvfb, "-a", pvpython, os.path.abspath(__file__)] + sys.argv[1:])

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
