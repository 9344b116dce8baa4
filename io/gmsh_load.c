/* The Gmsh C functions femto calls, each loading the library on first use (see gmsh_load.h). The prototypes
 * are those of gmshc.h, which this file includes so that the compiler checks every definition against it. */
#include "io/gmsh_load.h"

#include "fem/dynlib.h"
#include "fem/error.h"

#include <gmshc.h>

#include <pthread.h>

#ifndef FEMTO_GMSH_PATH /* set by CMake: the library file the build found */
#define FEMTO_GMSH_PATH ""
#endif
#define STR_(x) #x
#define STR(x) STR_(x)
/* Debian's and the SDK's soname: the API's major and minor version */
#define GMSH_SONAME "libgmsh.so." STR(GMSH_API_VERSION_MAJOR) "." STR(GMSH_API_VERSION_MINOR)

/* X(return type, name, parameters, arguments): every function femto calls but gmshFree (no error flag). */
#define GMSH_FUNCTIONS(X)                                                                                    \
    X(void, gmshInitialize, (int argc, char **argv, const int readConfigFiles, int *ierr),                   \
      (argc, argv, readConfigFiles, ierr))                                                                   \
    X(void, gmshFinalize, (int *ierr), (ierr))                                                               \
    X(void, gmshOpen, (const char *fileName, int *ierr), (fileName, ierr))                                   \
    X(void, gmshWrite, (const char *fileName, int *ierr), (fileName, ierr))                                  \
    X(void, gmshLoggerStart, (int *ierr), (ierr))                                                            \
    X(void, gmshLoggerStop, (int *ierr), (ierr))                                                             \
    X(void, gmshLoggerGetLastError, (char **error, int *ierr), (error, ierr))                                \
    X(void, gmshOptionSetNumber, (const char *name, const double value, int *ierr), (name, value, ierr))     \
    X(void, gmshOptionGetNumber, (const char *name, double *value, int *ierr), (name, value, ierr))          \
    X(int, gmshModelGetDimension, (int *ierr), (ierr))                                                       \
    X(void, gmshModelGetEntities, (int **dimTags, size_t *dimTags_n, const int dim, int *ierr),              \
      (dimTags, dimTags_n, dim, ierr))                                                                       \
    X(void, gmshModelGetBoundingBox,                                                                         \
      (const int dim, const int tag, double *xmin, double *ymin, double *zmin, double *xmax, double *ymax,   \
       double *zmax, int *ierr),                                                                             \
      (dim, tag, xmin, ymin, zmin, xmax, ymax, zmax, ierr))                                                  \
    X(void, gmshModelGetPhysicalGroups, (int **dimTags, size_t *dimTags_n, const int dim, int *ierr),        \
      (dimTags, dimTags_n, dim, ierr))                                                                       \
    X(void, gmshModelGetPhysicalName, (const int dim, const int tag, char **name, int *ierr),                \
      (dim, tag, name, ierr))                                                                                \
    X(void, gmshModelGetEntitiesForPhysicalGroup,                                                            \
      (const int dim, const int tag, int **tags, size_t *tags_n, int *ierr), (dim, tag, tags, tags_n, ierr)) \
    X(void, gmshModelOccGetEntities, (int **dimTags, size_t *dimTags_n, const int dim, int *ierr),           \
      (dimTags, dimTags_n, dim, ierr))                                                                       \
    X(void, gmshModelOccGetMass, (const int dim, const int tag, double *mass, int *ierr),                    \
      (dim, tag, mass, ierr))                                                                                \
    X(void, gmshModelMeshGenerate, (const int dim, int *ierr), (dim, ierr))                                  \
    X(void, gmshModelMeshClear, (int *dimTags, size_t dimTags_n, int *ierr), (dimTags, dimTags_n, ierr))     \
    X(void, gmshModelMeshRefine, (int *ierr), (ierr))                                                        \
    X(void, gmshModelMeshSetOrder, (const int order, int *ierr), (order, ierr))                              \
    X(void, gmshModelMeshGetNodes,                                                                           \
      (size_t **nodeTags, size_t *nodeTags_n, double **coord, size_t *coord_n, double **parametricCoord,     \
       size_t *parametricCoord_n, const int dim, const int tag, const int includeBoundary,                   \
       const int returnParametricCoord, int *ierr),                                                          \
      (nodeTags, nodeTags_n, coord, coord_n, parametricCoord, parametricCoord_n, dim, tag, includeBoundary,  \
       returnParametricCoord, ierr))                                                                         \
    X(void, gmshModelMeshGetElements,                                                                        \
      (int **elementTypes, size_t *elementTypes_n, size_t ***elementTags, size_t **elementTags_n,            \
       size_t *elementTags_nn, size_t ***nodeTags, size_t **nodeTags_n, size_t *nodeTags_nn, const int dim,  \
       const int tag, int *ierr),                                                                            \
      (elementTypes, elementTypes_n, elementTags, elementTags_n, elementTags_nn, nodeTags, nodeTags_n,       \
       nodeTags_nn, dim, tag, ierr))                                                                         \
    X(void, gmshModelMeshGetElementsByType,                                                                  \
      (const int elementType, size_t **elementTags, size_t *elementTags_n, size_t **nodeTags,                \
       size_t *nodeTags_n, const int tag, const size_t task, const size_t numTasks, int *ierr),              \
      (elementType, elementTags, elementTags_n, nodeTags, nodeTags_n, tag, task, numTasks, ierr))            \
    X(void, gmshModelMeshGetElementProperties,                                                               \
      (const int elementType, char **elementName, int *dim, int *order, int *numNodes,                       \
       double **localNodeCoord, size_t *localNodeCoord_n, int *numPrimaryNodes, int *ierr),                  \
      (elementType, elementName, dim, order, numNodes, localNodeCoord, localNodeCoord_n, numPrimaryNodes,    \
       ierr))

/* The library's functions, found when it is loaded. */
#define MEMBER_(ret, name, params, args) ret(*name) params;
static struct {
    GMSH_FUNCTIONS(MEMBER_) void (*gmshFree)(void *p);
} api;
#undef MEMBER_

static DynLib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
#define SYM_(ret, name, params, args) {#name, &api.name, sizeof api.name},
    const DynSym syms[] = {GMSH_FUNCTIONS(SYM_) SYM_(void, gmshFree, (), ())};
#undef SYM_
    dynlib_open_all(&lib, FEMTO_GMSH_PATH, GMSH_SONAME, syms, (int)(sizeof syms / sizeof syms[0]));
}

const char *gmsh_library_file(void) {
    return dynlib_existing(FEMTO_GMSH_PATH);
}

static int loaded(void) {
    pthread_once(&once, load);
    return lib.handle != NULL;
}

int gmsh_library_load(void) {
    if (loaded()) return FEM_OK;
    return fem_fail(FEM_ERR_INTERNAL, "cannot load the Gmsh library (%s): %s",
                    gmsh_library_file() ? gmsh_library_file() : GMSH_SONAME, lib.failure);
}

/* Each function: its error flag set when the library is not there, else the library's own. */
#define DEFINE_void(name, params, args)                                                                      \
    void name params {                                                                                       \
        if (loaded())                                                                                        \
            api.name args;                                                                                   \
        else if (ierr)                                                                                       \
            *ierr = 1;                                                                                       \
    }
#define DEFINE_int(name, params, args)                                                                       \
    int name params {                                                                                        \
        if (loaded()) return api.name args;                                                                  \
        if (ierr) *ierr = 1;                                                                                 \
        return 0;                                                                                            \
    }
#define DEFINE_(ret, name, params, args) DEFINE_##ret(name, params, args)
GMSH_FUNCTIONS(DEFINE_)
#undef DEFINE_

/* Gmsh's memory is malloc's (gmshFree is free); without the library nothing of Gmsh's was allocated. */
void gmshFree(void *p) {
    if (p && loaded()) api.gmshFree(p);
}
