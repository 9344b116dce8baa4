/* Cell partitions through METIS (see partition.h). */
#include "partition.h"

#include "comm.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef FEMTO_HAVE_METIS
#include <metis.h>
#endif

int64_t partition_ncells(const Mesh *m) {
    return partition_cell_offset(m, m->ncell_blocks);
}

int64_t partition_cell_offset(const Mesh *m, int b) {
    int64_t n = 0;
    for (int i = 0; i < b && i < m->ncell_blocks; i++) n += m->cells[i].count;
    return n;
}

/* The facet entities of cell c of block b: faces in 3D, edges (the facets of a 2D cell) in 2D. */
static const fem_idx *cell_facets(const Mesh *m, int b, int64_t c, int *n) {
    Shape s = m->cells[b].shape;
    if (m->dim == 3) {
        *n = shape_nfacets(s);
        return &m->topo.cell_faces[b][c * *n];
    }
    *n = shape_nedges(s);
    return &m->topo.cell_edges[b][c * *n];
}

/* For every facet entity, the one or two cells on it. */
static int facet_cells(const Mesh *m, int64_t nfacets, int64_t *side) {
    for (int64_t f = 0; f < 2 * nfacets; f++) side[f] = -1;
    for (int b = 0; b < m->ncell_blocks; b++) {
        int64_t off = partition_cell_offset(m, b);
        for (int64_t c = 0; c < m->cells[b].count; c++) {
            int n;
            const fem_idx *fs = cell_facets(m, b, c, &n);
            for (int k = 0; k < n; k++) {
                int64_t *s = &side[2 * (int64_t)fs[k]];
                if (s[0] < 0)
                    s[0] = off + c;
                else if (s[1] < 0)
                    s[1] = off + c;
                else
                    return fem_fail(FEM_ERR_INPUT, "mesh %s: a facet is shared by more than two cells",
                                    m->path);
            }
        }
    }
    return FEM_OK;
}

int partition_dual_graph(const Mesh *m, int64_t **xadj, int32_t **adj) {
    *xadj = NULL;
    *adj = NULL;
    if (!m->has_topology) return fem_fail(FEM_ERR_INTERNAL, "partition_dual_graph: the mesh has no topology");
    int64_t ncells = partition_ncells(m), nfacets = m->dim == 3 ? m->topo.nfaces : m->topo.nedges;
    int64_t *side = malloc(sizeof(int64_t) * 2 * (size_t)(nfacets + 1));
    int status = side ? facet_cells(m, nfacets, side)
                      : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the dual graph");
    int64_t *x = status ? NULL : calloc((size_t)ncells + 2, sizeof(int64_t));
    if (!status && !x) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the dual graph");
    for (int64_t f = 0; f < nfacets && !status; f++)
        if (side[2 * f + 1] >= 0) x[side[2 * f] + 2]++, x[side[2 * f + 1] + 2]++;
    for (int64_t i = 0; i < ncells && !status; i++) x[i + 2] += x[i + 1];
    int32_t *a = status ? NULL : malloc(sizeof(int32_t) * (size_t)(x[ncells + 1] + 1));
    if (!status && !a) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the dual graph");
    /* x[i + 1] is the fill position of cell i; after the fill it is where cell i ends */
    for (int64_t f = 0; f < nfacets && !status; f++)
        if (side[2 * f + 1] >= 0) {
            int64_t p = side[2 * f], q = side[2 * f + 1];
            a[x[p + 1]++] = (int32_t)q;
            a[x[q + 1]++] = (int32_t)p;
        }
    free(side);
    if (status) {
        free(x);
        free(a);
        return status;
    }
    *xadj = x;
    *adj = a;
    return FEM_OK;
}

/* 1 when the graph is connected (METIS's contiguity option needs it). */
static int graph_connected(int64_t n, const int64_t *xadj, const int32_t *adj) {
    if (n == 0) return 1;
    int32_t *queue = malloc(sizeof(int32_t) * (size_t)n);
    char *seen = calloc((size_t)n, 1);
    int64_t head = 0, tail = 0;
    if (queue && seen) {
        queue[tail++] = 0, seen[0] = 1;
        while (head < tail) {
            int32_t v = queue[head++];
            for (int64_t k = xadj[v]; k < xadj[v + 1]; k++)
                if (!seen[adj[k]]) seen[adj[k]] = 1, queue[tail++] = adj[k];
        }
    }
    free(queue);
    free(seen);
    return tail == n;
}

#ifdef FEMTO_HAVE_METIS
int partition_graph(int64_t n, const int64_t *xadj, const int32_t *adj, int nparts, int contig,
                    int32_t *part) {
    /* METIS prints its input errors on stdout: refuse what it would refuse before it can */
    if (nparts < 1 || n < nparts || n >= INT32_MAX)
        return fem_fail(FEM_ERR_INTERNAL, "METIS cannot partition %lld cells into %d parts", (long long)n,
                        nparts);
    idx_t nv = (idx_t)n, ncon = 1, np = nparts, cut = 0, opts[METIS_NOPTIONS];
    idx_t *x = malloc(sizeof(idx_t) * (size_t)(n + 1)), *a = malloc(sizeof(idx_t) * (size_t)(xadj[n] + 1));
    idx_t *p = malloc(sizeof(idx_t) * (size_t)(n + 1));
    int status = x && a && p ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for METIS's graph");
    if (!status) {
        for (int64_t i = 0; i <= n; i++) x[i] = (idx_t)xadj[i];
        for (int64_t k = 0; k < xadj[n]; k++) a[k] = adj[k];
        METIS_SetDefaultOptions(opts);
        opts[METIS_OPTION_SEED] = 1; /* the same parts every run */
        opts[METIS_OPTION_CONTIG] = contig;
        int rc = METIS_PartGraphKway(&nv, &ncon, x, a, NULL, NULL, NULL, &np, NULL, NULL, opts, &cut, p);
        /* parts within 0.1% of each other where that cuts no more than 5% more facets (partition.h) */
        idx_t *q = rc == METIS_OK && np > 1 ? malloc(sizeof(idx_t) * (size_t)(n + 1)) : NULL, tight = 0;
        opts[METIS_OPTION_UFACTOR] = 1;
        if (q && METIS_PartGraphKway(&nv, &ncon, x, a, NULL, NULL, NULL, &np, NULL, NULL, opts, &tight, q) ==
                     METIS_OK &&
            tight <= cut + cut / 20)
            memcpy(p, q, sizeof(idx_t) * (size_t)n);
        free(q);
        if (rc != METIS_OK)
            status = fem_fail(FEM_ERR_INTERNAL, "METIS could not partition %lld cells into %d parts (%s)",
                              (long long)n, nparts,
                              rc == METIS_ERROR_MEMORY  ? "out of memory"
                              : rc == METIS_ERROR_INPUT ? "it refused the input"
                                                        : "METIS_ERROR");
    }
    for (int64_t i = 0; i < n && !status; i++) part[i] = (int32_t)p[i];
    free(x);
    free(a);
    free(p);
    return status;
}
#else
int partition_graph(int64_t n, const int64_t *xadj, const int32_t *adj, int nparts, int contig,
                    int32_t *part) {
    (void)n, (void)xadj, (void)adj, (void)contig, (void)part;
    return fem_fail(FEM_ERR_INTERNAL,
                    "partitioning a mesh into %d parts needs METIS, and femto was built without it", nparts);
}
#endif

int partition_mesh(const Mesh *m, int nparts, int32_t *part) {
    int64_t n = partition_ncells(m);
    if (nparts < 1) return fem_fail(FEM_ERR_INTERNAL, "partition_mesh: %d parts", nparts);
    if (nparts == 1) {
        memset(part, 0, sizeof(int32_t) * (size_t)n);
        return FEM_OK;
    }
    if (n < nparts)
        return fem_fail(FEM_ERR_INPUT, "mesh %s has %lld cells, too few for %d MPI ranks", m->path,
                        (long long)n, nparts);
    /* a refined mesh: its parent's parts, each cell in its parent cell's (so that every rank holds whole
     * parent cells, which multigrid's levels on the parents need); where the parent has too few cells for
     * METIS to balance the parts (PARTITION_PARENT_MIN_CELLS a part), the mesh's own */
    if (m->parent && partition_ncells(m->parent) >= (int64_t)PARTITION_PARENT_MIN_CELLS * nparts) {
        int64_t np = partition_ncells(m->parent), *of = malloc(sizeof(int64_t) * (size_t)(n + 1));
        int32_t *pp = malloc(sizeof(int32_t) * (size_t)(np + 1));
        int status = of && pp ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the partition");
        if (!status) status = partition_mesh(m->parent, nparts, pp);
        if (!status) status = mesh_parent_cells(m, of);
        for (int64_t c = 0; c < n && !status; c++) part[c] = pp[of[c]];
        free(of);
        free(pp);
        if (status != FEM_ERR_INPUT) return status;
    }
    int64_t *xadj;
    int32_t *adj;
    FEM_TRY(partition_dual_graph(m, &xadj, &adj));
    int status = partition_graph(n, xadj, adj, nparts, graph_connected(n, xadj, adj), part);
    free(xadj);
    free(adj);
    return status;
}

int partition_mesh_shared(const Mesh *m, int nparts, int32_t *part) {
    int status = comm_rank() == 0 ? partition_mesh(m, nparts, part) : FEM_OK;
    FEM_TRY(comm_agree(status));
    return comm_bcast(part, (int64_t)sizeof(int32_t) * partition_ncells(m), 0);
}
