/* Rank 0's mesh, in outline, on every other rank of an MPI run (see mesh_read.h): what a rank needs of the
 * whole mesh besides its part (which rank 0 makes from the whole mesh and sends, fem/dist.h): its size for
 * messages and the run's lines, its blocks' element types (the order each supports), its physical groups,
 * and as much of every parent (multigrid's meshes before refinement, whose levels rank 0 splits). One record
 * of 8-byte words, broadcast. */
#include "mesh_internal.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t *w;
    int64_t n, cap;
    int failed;
} Words;

static void put(Words *b, int64_t v) {
    if (b->n == b->cap) {
        int64_t cap = b->cap ? 2 * b->cap : 1024;
        int64_t *w = realloc(b->w, sizeof(int64_t) * (size_t)cap);
        if (!w) {
            b->failed = 1;
            return;
        }
        b->w = w, b->cap = cap;
    }
    b->w[b->n++] = v;
}

/* A name as words (MESH_NAME_MAX bytes, zero-padded). */
static void put_name(Words *b, const char *name) {
    int64_t w[MESH_NAME_MAX / 8 + 1] = {0};
    memcpy(w, name, strnlen(name, MESH_NAME_MAX - 1));
    for (int k = 0; k < MESH_NAME_MAX / 8 + 1; k++) put(b, w[k]);
}

static void put_blocks(Words *b, int n, const MeshBlock *blocks) {
    put(b, n);
    for (int k = 0; k < n; k++) {
        const MeshBlock *mb = &blocks[k];
        put(b, mb->type ? mb->type->gmsh_type : -1), put(b, mb->shape), put(b, mb->order), put(b, mb->nnodes);
        put(b, mb->count);
    }
}

/* Rank 0: the outline of m and of its parents, one after the other. */
static void put_outline(Words *b, const Mesh *m) {
    put(b, mesh_parent_count(m) + 1);
    for (; m; m = m->parent) {
        put(b, m->dim);
        put(b, m->nnodes);
        put_blocks(b, m->ncell_blocks, m->cells);
        put_blocks(b, m->nfacet_blocks, m->facets);
        put(b, m->ngroups);
        for (int g = 0; g < m->ngroups; g++) {
            const PhysicalGroup *pg = &m->groups[g];
            put(b, pg->dim), put(b, pg->tag), put(b, pg->nentities), put(b, pg->nelements);
            put_name(b, pg->name);
            for (int e = 0; e < pg->nentities; e++) put(b, pg->entities[e]);
        }
    }
}

typedef struct {
    const int64_t *w;
    int64_t n, at;
    int bad;
} Reader;

static int64_t get(Reader *r) {
    if (r->at >= r->n) return r->bad = 1, 0;
    return r->w[r->at++];
}

static int get_blocks(Reader *r, int *n, MeshBlock *blocks) {
    *n = (int)get(r);
    if (*n < 0 || *n > MESH_MAX_BLOCKS) return r->bad = 1, 0;
    for (int k = 0; k < *n; k++) {
        MeshBlock *mb = &blocks[k];
        int gmsh = (int)get(r);
        mb->type = gmsh >= 0 ? mesh_gmsh_type(gmsh) : NULL;
        mb->shape = (Shape)get(r);
        mb->order = (int)get(r);
        mb->nnodes = (int)get(r);
        mb->count = get(r);
        if ((gmsh >= 0 && !mb->type) || mb->shape < SHAPE_LINE || mb->shape > SHAPE_HEX) return r->bad = 1, 0;
    }
    return 1;
}

/* The other ranks: the outline back into m and its parents. */
static int get_outline(Reader *r, Mesh *m, const char *path) {
    int64_t nmeshes = get(r);
    for (int64_t k = 0; k < nmeshes && !r->bad; k++) {
        if (k) {
            if (!(m->parent = calloc(1, sizeof *m->parent)))
                return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh's outline");
            m = m->parent;
        }
        m->outline = 1;
        snprintf(m->path, sizeof m->path, "%s", path);
        m->dim = (int)get(r);
        m->nnodes = get(r);
        if (!get_blocks(r, &m->ncell_blocks, m->cells) || !get_blocks(r, &m->nfacet_blocks, m->facets)) break;
        int ngroups = (int)get(r);
        if (ngroups < 0 || ngroups > r->n) break;
        if (!(m->groups = calloc((size_t)ngroups + 1, sizeof *m->groups)))
            return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh's outline");
        for (int g = 0; g < ngroups && !r->bad; g++, m->ngroups++) {
            PhysicalGroup *pg = &m->groups[g];
            pg->dim = (int)get(r), pg->tag = (int)get(r), pg->nentities = (int)get(r), pg->nelements = get(r);
            int64_t w[MESH_NAME_MAX / 8 + 1];
            for (int i = 0; i < MESH_NAME_MAX / 8 + 1; i++) w[i] = get(r);
            memcpy(pg->name, w, MESH_NAME_MAX - 1);
            pg->name[MESH_NAME_MAX - 1] = 0;
            if (pg->nentities < 0 || pg->nentities > r->n) break;
            if (!(pg->entities = malloc(sizeof(int) * (size_t)(pg->nentities + 1))))
                return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh's outline");
            for (int e = 0; e < pg->nentities; e++) pg->entities[e] = (int)get(r);
        }
    }
    return r->bad || r->at != r->n
               ? fem_fail(FEM_ERR_INTERNAL, "the mesh's outline from MPI rank 0 does not parse")
               : FEM_OK;
}

int mesh_share(Mesh *m, int status) {
    if (comm_size() == 1) return status;
    int root = comm_rank() == 0;
    Words b = {0};
    if (root && !status) {
        put_outline(&b, m);
        if (b.failed) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory sharing the mesh");
    }
    status = comm_agree(root ? status : FEM_OK); /* rank 0's failure, on every rank */
    if (!status) status = comm_bcast(&b.n, sizeof b.n, 0);
    if (!status && !root && !(b.w = malloc(sizeof(int64_t) * (size_t)(b.n + 1))))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory receiving the mesh's outline");
    status = comm_agree(status);
    if (!status) status = comm_bcast(b.w, 8 * b.n, 0);
    if (!status) status = comm_bcast(m->path, sizeof m->path, 0);
    if (!status && !root) {
        Reader r = {b.w, b.n, 0, 0};
        char path[sizeof m->path];
        memcpy(path, m->path, sizeof path);
        status = get_outline(&r, m, path);
    }
    free(b.w);
    return comm_agree(status);
}
