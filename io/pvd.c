/* ParaView's data collection (.pvd): the list of (time, file) pairs that makes a series of VTU files one
 * time-dependent data set. Times are written with 17 significant digits so that they read back exactly. */
#include "output.h"

#include "fem/error.h"
#include "fileutil.h"

int pvd_write(const char *path, int n, const double *times, char *const *files)
{
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    fileout_printf(
        &fo, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\">\n  <Collection>\n");
    for (int i = 0; i < n; i++) {
        fileout_printf(&fo, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", times[i]);
        fileout_xml_text(&fo, files[i]);
        fileout_printf(&fo, "\"/>\n");
    }
    fileout_printf(&fo, "  </Collection>\n</VTKFile>\n");
    return fileout_commit(&fo);
}
