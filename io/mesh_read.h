/* Reading meshes through the Gmsh SDK (C API): .msh files (format 2.2 and 4.1, ASCII and binary) and .geo
 * scripts, which are meshed on the fly so that a user keeps one source file. No hand-written parser.
 *
 * Gmsh is not robust against corrupt files (fuzzing Debian's Gmsh 4.8 found about 18 places where a bad .msh
 * crashes it or makes it allocate without end), so by default Gmsh runs in a child process
 * (io/mesh_child.c): the child reads the .msh or meshes the .geo under a time and a memory limit and hands
 * the arrays back through shared memory; a crash, a limit or an odd exit becomes one sentence naming the
 * file. The caller then orients and checks the cells and builds the topology (mesh_finish). A .geo's mesh can
 * be kept in a cache (io/mesh_cache.c) and reused while the script, the files it includes, the options and
 * the Gmsh library stay the same. docs/meshes.md describes both for users.
 *
 * CONSTRAINT: the child is made with fork() and no exec, so call mesh_read before the process initialises
 * CUDA or MPI (neither survives a fork), and, when opt->threads > 1, preferably before its first OpenMP
 * parallel region (libgomp does not promise that its thread pool survives a fork; GCC 12's does in femto's
 * tests; the time limit ends a child that would wait for lost threads). femto-app reads the mesh first, in
 * setup(), before it creates the device. opt->in_process skips the child. */
#ifndef FEMTO_MESH_READ_H
#define FEMTO_MESH_READ_H

#include "fem/mesh.h"

FEM_EXTERN_C_BEGIN

/* Where mesh_read's mesh came from. */
typedef enum {
    MESH_FROM_FILE,  /* a .msh read by Gmsh */
    MESH_FROM_GMSH,  /* a .geo meshed by Gmsh now */
    MESH_FROM_CACHE, /* a .geo's mesh reused from the cache */
} MeshOrigin;

/* What mesh_read reports besides the mesh (all optional reading for the caller). */
typedef struct {
    MeshOrigin origin;
    double estimated_cells; /* .geo: the cell count estimated before meshing (0: nothing to estimate from) */
    double seconds_read;    /* Gmsh's part (in the child) or reading the cache entry, with the hand-back */
    double seconds_finish;  /* mesh_finish: orientation, Jacobian checks, topology */
    char cache_note[512];  /* .geo with a cache: why the cache was not used or not written ("" when it was) */
    char parent_note[512]; /* <mesh refine>: why the meshes before refinement were dropped ("" if kept) */
} MeshReadResult;

typedef struct {
    double size; /* .geo only: largest element size [m]; 0 keeps the script's own sizes */
    int order;   /* .geo only: geometric order 1 or 2; 0 keeps the script's setting (default 1) */
    int refine;  /* .geo only: uniform refinements after meshing */
    /* .geo only: > 0 meshes volumes with Gmsh's parallel 3D mesher (HXT) on this many threads unless the
     * script sets Mesh.Algorithm3D; 0 keeps Gmsh's default (serial Delaunay, reproducible run to run) */
    int threads;
    int force;              /* .geo only: mesh even when the estimated cell count is above the cell limit */
    double cell_limit;      /* .geo only: the most cells meshed without force; 0: mesh_cell_limit() */
    int in_process;         /* 1: Gmsh runs in this process, without limits (trusted files: tools, tests) */
    const char *cache_dir;  /* .geo only: NULL no cache, "" .femto-cache beside the .geo, else this folder */
    double time_limit;      /* child's limit in seconds; 0: the default for the file, < 0: none */
    double memory_limit;    /* child's limit in bytes (address space added to the caller's); 0: the default */
    MeshReadResult *result; /* filled when not NULL */
} MeshReadOptions;

/* Reads `path` into m (then mesh_finish: orientation, Jacobian checks, topology). Every failure is one
 * FEM_ERR_INPUT sentence naming the file and, where there is one, the element or group. opt may be NULL. */
int mesh_read(const char *path, const MeshReadOptions *opt, Mesh *m);

/* An MPI run: rank 0 read the mesh into m (status: what mesh_read returned) before MPI started and keeps it;
 * every other rank receives its outline (Mesh.outline: path, dimension, counts, the blocks' element types and
 * sizes, the physical groups, and the same of every parent), since a rank works on its part (fem/dist.h),
 * which rank 0 makes and sends. Or rank 0's error: every rank then returns that status with rank 0's
 * sentence. On one process it returns status. Collective: every rank calls it. */
int mesh_share(Mesh *m, int status);

/* The most cells femto meshes from a .geo without opt->force: what fits in this machine's memory at 2 KiB a
 * cell (Gmsh needs about 0.6 KiB a tetrahedron while meshing; femto's arrays and solver need the rest). */
double mesh_cell_limit(void);

/* Writes the mesh that `geo_path` makes to `msh_path` (format 4.1), in this process, for tools/ and tests. */
int mesh_generate_file(const char *geo_path, const MeshReadOptions *opt, const char *msh_path);

FEM_EXTERN_C_END

#endif
