/* The pieces of mesh_read, internal to io/mesh_*.c:
 *   mesh_read.c   the entry: checks the file, picks cache, child or in-process reading, runs mesh_finish
 *   mesh_gmsh.c   everything that calls Gmsh (open, estimate, mesh, copy the model into a Mesh)
 *   mesh_blob.c   a Mesh as one binary record (the child's hand-back, the cache's entries)
 *   mesh_child.c  the reading child: fork, limits, hand-back, crash and limit sentences
 *   mesh_cache.c  the .geo mesh cache: key, lookup, atomic store */
#ifndef FEMTO_MESH_INTERNAL_H
#define FEMTO_MESH_INTERNAL_H

#include "mesh_read.h"

#include <stddef.h>
#include <stdint.h>

enum { MESH_ALGORITHM_DELAUNAY = 1, MESH_ALGORITHM_HXT = 10 };

/* A .geo meshed with <mesh refine> keeps the meshes before its last this many refinements (Mesh.parent). */
enum { MESH_MAX_PARENTS = 6 };

/* ---- mesh_read.c */
typedef struct {
    int geo;       /* 1: a .geo script, 0: a .msh mesh */
    int64_t bytes; /* the file's size */
} MeshFileInfo;

/* Refuses what Gmsh should not be given: a path that is not a regular file (a FIFO would block the reader),
 * a name that is neither .msh nor .geo, a .msh that does not begin with $MeshFormat. info may be NULL. */
int mesh_check_file(const char *path, MeshFileInfo *info);

/* This machine's memory in bytes: physical memory, or the control group's limit where that is lower. */
double mesh_machine_memory(void);

/* ---- mesh_gmsh.c */
typedef struct {
    void (*estimated)(double cells, void *ctx); /* a .geo's size estimate passed; meshing starts */
    void *ctx;
    int skip_finalize; /* leave Gmsh's model in memory (a child that exits right after) */
} MeshGmshHooks;

/* Reads (or meshes) path with Gmsh in this process into m, without mesh_finish. hooks may be NULL. */
int mesh_gmsh_read(const char *path, int geo, const MeshReadOptions *opt, const MeshGmshHooks *hooks,
                   Mesh *m);

/* ---- mesh_blob.c */
/* Writes what a reader fills in m (nodes, blocks, groups) at fd's offset, and with_topology the topology
 * mesh_finish built (when m has one: the cache's records). with_crc adds a CRC-32 of the record. A failure is
 * "REASON" (errno's) for the caller's sentence. */
int mesh_blob_write(int fd, const Mesh *m, int with_crc, int with_topology);
/* Reads a record from fd's offset, of at most `bytes` bytes, into m (whose path the caller has set), checks
 * its structure, its node numbers and its CRC where it has one; a record with a topology gives m that
 * topology (m->has_topology), its numbers checked to be in range. A failure is one phrase saying what is
 * wrong ("it is truncated"), for the caller's sentence; m is then empty. */
int mesh_blob_read(int fd, int64_t bytes, Mesh *m);

/* ---- mesh_child.c */
/* mesh_gmsh_read in a child process under opt's (or the default) time and memory limits; a crash, a limit
 * or a bad exit is one FEM_ERR_INPUT sentence naming the file. *estimate: a .geo's estimated cell count. */
int mesh_child_read(const char *path, const MeshFileInfo *file, const MeshReadOptions *opt, Mesh *m,
                    double *estimate);

/* ---- mesh_cache.c */
typedef struct {
    char *key; /* everything the mesh depends on, as text (NULL: this script cannot be cached) */
    size_t key_bytes;
    char *entry; /* the entry's path: DIR/NAME-HASH.femesh */
} MeshCacheEntry;

/* Works out the key and the entry's path for the script `geo`; a script that cannot be cached (a file
 * name built at run time, an unreadable include, a cache folder that cannot be made) leaves e->key NULL and
 * says why in note. Fails only when out of memory. */
int mesh_cache_prepare(const char *geo, const MeshReadOptions *opt, MeshCacheEntry *e, char *note,
                       size_t note_size);
/* 1 when the entry exists, matches the key and is intact (m then holds its mesh), else 0 with note saying
 * why when there was an entry that could not be used. */
int mesh_cache_load(const MeshCacheEntry *e, Mesh *m, char *note, size_t note_size);
/* Writes m as the entry, atomically (temporary file + rename); failures only fill note. */
void mesh_cache_store(const MeshCacheEntry *e, const Mesh *m, char *note, size_t note_size);
void mesh_cache_release(MeshCacheEntry *e);

#endif
