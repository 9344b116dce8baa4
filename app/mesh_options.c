/* How femto-app reads meshes: the problem's mesh attributes, Gmsh's parallel 3D mesher on the run's threads,
 * --force, and the mesh cache, which FEMTO_MESH_CACHE moves ("FOLDER") or turns off ("off"). */
#include "app.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

MeshReadOptions app_mesh_options(const AppOptions *o, const Problem *pb, MeshReadResult *result) {
    MeshReadOptions mo = {.result = result, .force = o->force, .cache_dir = ""};
    if (pb) {
        mo.size = pb->mesh_size;
        mo.order = pb->mesh_order;
        mo.refine = pb->mesh_refine;
    }
    /* --threads (-1: not given), else the problem's; 0 is all cores */
    int threads = o->threads >= 0 ? o->threads : pb ? pb->device.threads : 0;
    mo.threads = threads > 0 ? threads : omp_get_max_threads();
    const char *cache = getenv("FEMTO_MESH_CACHE");
    if (cache && (strcmp(cache, "off") == 0 || strcmp(cache, "0") == 0))
        mo.cache_dir = NULL;
    else if (cache && cache[0])
        mo.cache_dir = cache;
    return mo;
}
