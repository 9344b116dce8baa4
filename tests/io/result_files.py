"""Reading femto's result files back in the end-to-end tests (test_results_e2e.py, test_result_sets.py): a VTK XML
file with VTK's own reader, a point array as numpy, the .pvd's list, the summary's numbers; and the checks' tally.
Needs Debian's python3-paraview (vtkmodules) and numpy."""
import os
import shutil
import sys
import xml.etree.ElementTree as ET

from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLGenericDataObjectReader

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from app_checks import Checks  # noqa: E402,F401  (the checks' tally, shared with the standard-library tests)


def empty_folder(path):
    """The folder `path`, made anew (absolute)."""
    path = os.path.abspath(path)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def read_vtk(path):
    """The data set in a VTK XML file (.vtu here), read by vtkXMLGenericDataObjectReader."""
    r = vtkXMLGenericDataObjectReader()
    r.SetFileName(path)
    r.Update()
    return r.GetOutput()


def point_array(grid, name):
    a = grid.GetPointData().GetArray(name)
    return None if a is None else vtk_to_numpy(a)


def pvd_files(folder, name):
    """(time, VTU path) of every data set NAME.pvd lists."""
    root = ET.parse(os.path.join(folder, f"{name}.pvd")).getroot()
    return [(float(d.get("timestep")), os.path.join(folder, d.get("file"))) for d in root.iter("DataSet")]


def summary(folder, name):
    """NAME_summary.txt as {key: value}."""
    values = {}
    for line in open(os.path.join(folder, f"{name}_summary.txt")):
        if not line.startswith("#") and line.strip():
            k, v = line.split()[:2]
            values[k] = float(v)
    return values
