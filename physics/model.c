/* Mapping a problem's names onto a mesh (see model.h). */
#include "model.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <stdlib.h>
#include <string.h>

void model_destroy(Model *md) {
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(md->cell_tags[b]), free(md->facet_tags[b]);
    free(md->dir_dofs);
    free(md->dir_values);
    free(md->dir_call);
    if (!md->ctx_borrowed) free(md->ctx);
    memset(md, 0, sizeof *md);
}

static int missing_group(const Problem *pb, const Mesh *m, int line, const char *what, const char *name,
                         int dim) {
    char list[2048];
    mesh_group_names(m, dim, list, sizeof list);
    return fem_fail(FEM_ERR_INPUT,
                    "%s:%d: the mesh '%s' has no %s named '%s' (a %dD physical group); it has: %s", pb->path,
                    line, m->path, what, name, dim, list);
}

int model_boundary(const Problem *pb, const Mesh *m, const char *name, int line, const PhysicalGroup **g) {
    *g = mesh_find_group(m, name, m->dim - 1);
    if (!*g) return missing_group(pb, m, line, "boundary", name, m->dim - 1);
    return FEM_OK;
}

int model_cell_tags(const Problem *pb, const Mesh *m, int n, const char *const *names, const int *lines,
                    int32_t **cell_tags) {
    const PhysicalGroup **groups;
    FEM_ALLOC(groups, n + 1, "the material regions");
    int status = FEM_OK;
    for (int i = 0; i < n && !status; i++) {
        if (!names[i][0]) continue;
        groups[i] = mesh_find_group(m, names[i], m->dim);
        if (!groups[i]) status = missing_group(pb, m, lines[i], "region", names[i], m->dim);
    }
    for (int b = 0; b < m->ncell_blocks && !status; b++) {
        const MeshBlock *mb = &m->cells[b];
        FEM_CHECK_ALLOC(cell_tags[b], mb->count + 1, "the material of each cell");
        for (int64_t c = 0; c < mb->count && !status; c++) {
            int found = -1;
            for (int i = 0; i < n; i++) {
                if (groups[i] ? !mesh_group_has_entity(groups[i], mb->entity[c]) : n != 1) continue;
                if (found >= 0 && found != i) {
                    status = fem_fail(FEM_ERR_INPUT,
                                      "%s:%d: element %lld of '%s' belongs to two materials, '%s' "
                                      "(line %d) and '%s'",
                                      pb->path, lines[i], (long long)mb->tag[c], m->path, names[found],
                                      lines[found], names[i]);
                    break;
                }
                found = i;
            }
            if (!status && found < 0) {
                char list[2048];
                mesh_group_names(m, m->dim, list, sizeof list);
                status = fem_fail(FEM_ERR_INPUT,
                                  "%s: element %lld of '%s' (entity %d) has no material: give every "
                                  "region a <material>; the mesh's regions are: %s",
                                  pb->path, (long long)mb->tag[c], m->path, mb->entity[c], list);
            }
            cell_tags[b][c] = found;
        }
    }
cleanup:
    free(groups);
    return status;
}

/* Room for n Dirichlet entries (FEM_ERR_INTERNAL, said, when out of memory). */
static int dir_grow(Model *md, int64_t n) {
    int32_t *dofs = realloc(md->dir_dofs, sizeof(int32_t) * (size_t)(n + 1));
    if (dofs) md->dir_dofs = dofs;
    double *vals = realloc(md->dir_values, sizeof(double) * (size_t)(n + 1));
    if (vals) md->dir_values = vals;
    int32_t *call = realloc(md->dir_call, sizeof(int32_t) * (size_t)(n + 1));
    if (call) md->dir_call = call;
    if (!dofs || !vals || !call)
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for boundary conditions");
    return FEM_OK;
}

int model_add_dirichlet(Model *md, const Space *sp, const PhysicalGroup *g, int components,
                        const double *values) {
    fem_idx *nodes;
    int64_t count;
    FEM_TRY(space_group_nodes(sp, g, &nodes, &count));
    int nc = 0;
    for (int c = 0; c < sp->ncomp; c++) nc += (components >> c) & 1;
    if (dir_grow(md, md->ndir + count * nc)) return free(nodes), FEM_ERR_INTERNAL;
    for (int64_t i = 0; i < count; i++)
        for (int c = 0; c < sp->ncomp; c++)
            if ((components >> c) & 1) {
                md->dir_dofs[md->ndir] = (int32_t)(nodes[i] * sp->ncomp + c);
                md->dir_values[md->ndir] = values[c];
                md->dir_call[md->ndir] = md->ncalls;
                md->ndir++;
            }
    md->ncalls++;
    free(nodes);
    return FEM_OK;
}

typedef struct {
    int32_t dof, call;
    int64_t order;
    double value;
} DirEntry;

static int cmp_dir(const void *a, const void *b) {
    const DirEntry *x = a, *y = b;
    if (x->dof != y->dof) return (x->dof > y->dof) - (x->dof < y->dof);
    if (x->call != y->call) return (x->call > y->call) - (x->call < y->call);
    return (x->order > y->order) - (x->order < y->order);
}

int model_finish_dirichlet(Model *md) {
    if (md->ndir == 0) return FEM_OK;
    DirEntry *e = malloc(sizeof(DirEntry) * (size_t)md->ndir);
    if (!e) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for boundary conditions");
    for (int64_t i = 0; i < md->ndir; i++)
        e[i] = (DirEntry){md->dir_dofs[i], md->dir_call ? md->dir_call[i] : 0, i, md->dir_values[i]};
    qsort(e, (size_t)md->ndir, sizeof *e, cmp_dir);
    int64_t u = 0;
    for (int64_t i = 0; i < md->ndir; i++) {
        if (u > 0 && e[u - 1].dof == e[i].dof) u--; /* the later call (then entry) wins */
        e[u++] = e[i];
    }
    for (int64_t i = 0; i < u; i++) {
        md->dir_dofs[i] = e[i].dof, md->dir_values[i] = e[i].value;
        if (md->dir_call) md->dir_call[i] = e[i].call;
    }
    md->ndir = u;
    free(e);
    return FEM_OK;
}

int model_natural_sets(Model *md, const Problem *pb, const Mesh *m, int n, const char *const *boundary,
                       const int *lines, int max_sets, uint64_t *sets, int *nsets) {
    if (n > 64) return fem_fail(FEM_ERR_INPUT, "%s: at most 64 boundary conditions", pb->path);
    const PhysicalGroup *groups[64] = {0};
    for (int i = 0; i < n; i++)
        if (boundary[i]) FEM_TRY(model_boundary(pb, m, boundary[i], lines[i], &groups[i]));
    *nsets = 0;
    for (int fb = 0; fb < m->nfacet_blocks; fb++) {
        const MeshBlock *b = &m->facets[fb];
        FEM_ALLOC(md->facet_tags[fb], b->count, "boundary-condition tags");
        for (int64_t c = 0; c < b->count; c++) {
            uint64_t set = 0;
            for (int i = 0; i < n; i++)
                if (groups[i] && mesh_group_has_entity(groups[i], b->entity[c])) set |= 1ull << i;
            int tag = -1;
            for (int k = 0; k < *nsets && set; k++)
                if (sets[k] == set) tag = k;
            if (set && tag < 0) {
                if (*nsets == max_sets)
                    return fem_fail(FEM_ERR_INPUT,
                                    "%s: more than %d different combinations of boundary conditions",
                                    pb->path, max_sets);
                tag = (*nsets)++;
                sets[tag] = set;
            }
            md->facet_tags[fb][c] = tag;
        }
    }
    return FEM_OK;
}

/* A shared node's entries as they travel: per component, the call that constrains it (-1: none) and its
 * value. */
static void pack_node(const Model *md, const int32_t *at, int32_t node, double *out) {
    for (int c = 0; c < md->ncomp; c++) {
        int32_t i = at[node * md->ncomp + c];
        out[2 * c] = i >= 0 ? md->dir_call[i] : -1.0;
        out[2 * c + 1] = i >= 0 ? md->dir_values[i] : 0.0;
    }
}

int model_join_part(Model *md, const Dist *d) {
    md->dist = d;
    int nc = md->ncomp, per = 2 * nc;
    int64_t nshared = d->share_off[d->nshare], ndofs = d->space.nnodes * nc, extra = 0;
    int32_t *at = malloc(sizeof(int32_t) * (size_t)(ndofs + 1)); /* local dof -> its entry, or -1 */
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(d->nshare + 1));
    double *send = malloc(sizeof(double) * (size_t)(nshared * per + 1));
    double *recv = malloc(sizeof(double) * (size_t)(nshared * per + 1));
    int status = at && off && send && recv && (md->dir_call || !md->ndir)
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for boundary conditions");
    status = comm_agree(status);
    for (int64_t i = 0; !status && i < ndofs; i++) at[i] = -1;
    for (int64_t i = 0; !status && i < md->ndir; i++) at[md->dir_dofs[i]] = (int32_t)i;
    for (int k = 0; !status && k <= d->nshare; k++) off[k] = d->share_off[k] * per;
    for (int64_t j = 0; !status && j < nshared; j++) pack_node(md, at, d->share[j], &send[j * per]);
    CommExchange x;
    if (!status) status = comm_exchange_begin(&x, d->nshare, d->share_nbr, off, send, off, recv);
    if (!status) status = comm_exchange_end(&x);
    for (int64_t j = 0; !status && j < nshared * nc; j++) extra += recv[2 * j] >= 0;
    if (!status && extra) { /* the neighbours' entries join this rank's; finishing keeps the latest call's */
        status = dir_grow(md, md->ndir + extra);
        for (int64_t j = 0; !status && j < nshared; j++)
            for (int c = 0; c < nc; c++) {
                const double *e = &recv[j * per + 2 * c];
                if (e[0] < 0) continue;
                md->dir_dofs[md->ndir] = d->share[j] * nc + c;
                md->dir_call[md->ndir] = (int32_t)e[0];
                md->dir_values[md->ndir++] = e[1];
            }
        if (!status) status = model_finish_dirichlet(md);
    }
    free(at), free(off), free(send), free(recv);
    return comm_agree(status);
}

int model_count_dirichlet(const Model *md, int64_t *n) {
    *n = md->ndir;
    if (!md->dist) return FEM_OK;
    double owned = 0.0;
    for (int64_t i = 0; i < md->ndir; i++) owned += md->dir_dofs[i] < md->dist->space.ndofs_owned;
    FEM_TRY(comm_sum(&owned, 1));
    *n = (int64_t)owned;
    return FEM_OK;
}

/* out[k] = in[which[k]] for the n elements of a local block (NULL in, NULL out: no tags in the block). */
static int local_tags(const int32_t *in, const int64_t *which, int64_t n, int32_t **out) {
    *out = NULL;
    if (!in) return FEM_OK;
    FEM_ALLOC(*out, n, "a rank's tags");
    for (int64_t k = 0; k < n; k++) (*out)[k] = in[which[k]];
    return FEM_OK;
}

static int local_dirichlet(const Model *global, const Dist *d, Model *local) {
    int64_t n = d->space.ndofs;
    FEM_ALLOC(local->dir_dofs, n, "a rank's constrained dofs");
    FEM_ALLOC(local->dir_values, n, "a rank's constrained dofs");
    int64_t *g = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!g) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's constrained dofs");
    dist_global_dofs(d, n, g);
    local->ndir = 0;
    for (int64_t i = 0; i < n; i++) { /* global->dir_dofs is sorted (model_finish_dirichlet) */
        int64_t lo = 0, hi = global->ndir;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (global->dir_dofs[mid] < g[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < global->ndir && global->dir_dofs[lo] == g[i]) {
            local->dir_dofs[local->ndir] = (int32_t)i;
            local->dir_values[local->ndir++] = global->dir_values[lo];
        }
    }
    free(g);
    return FEM_OK;
}

int model_localize(const Model *global, const Dist *d, Model *local) {
    *local = *global;
    memset(local->cell_tags, 0, sizeof local->cell_tags);
    memset(local->facet_tags, 0, sizeof local->facet_tags);
    local->dir_dofs = NULL;
    local->dir_values = NULL;
    local->dir_call = NULL;
    local->ctx_borrowed = 1;
    local->dist = d;
    int status = FEM_OK;
    for (int b = 0; b < d->mesh.ncell_blocks && !status; b++)
        status = local_tags(global->cell_tags[d->cell_block[b]], d->cell_global[b], d->mesh.cells[b].count,
                            &local->cell_tags[b]);
    for (int b = 0; b < d->mesh.nfacet_blocks && !status; b++)
        status = local_tags(global->facet_tags[d->facet_block[b]], d->facet_global[b],
                            d->mesh.facets[b].count, &local->facet_tags[b]);
    if (!status) status = local_dirichlet(global, d, local);
    if (status) model_destroy(local);
    return status;
}
