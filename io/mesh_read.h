/* Reading meshes through the Gmsh SDK (C API): .msh files (format 2.2 and 4.1, ASCII and binary) and .geo
 * scripts, which are meshed on the fly so that a user keeps one source file. No hand-written parser. */
#ifndef FEMTO_MESH_READ_H
#define FEMTO_MESH_READ_H

#include "fem/mesh.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    double size; /* .geo only: largest element size [m]; 0 keeps the script's own sizes */
    int order;   /* .geo only: geometric order 1 or 2; 0 keeps the script's setting (default 1) */
    int refine;  /* .geo only: uniform refinements after meshing */
} MeshReadOptions;

/* Reads `path` into m (then mesh_finish: orientation, Jacobian checks, topology). Every failure is one
 * FEM_ERR_INPUT sentence naming the file and, where there is one, the element or group. */
int mesh_read(const char *path, const MeshReadOptions *opt, Mesh *m);

/* Writes the mesh that `geo_path` makes to `msh_path` (format 4.1), for tools/ and tests. */
int mesh_generate_file(const char *geo_path, const MeshReadOptions *opt, const char *msh_path);

FEM_EXTERN_C_END

#endif
