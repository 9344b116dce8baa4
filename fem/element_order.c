/* Elements in the order of a space-filling curve (element_order.h). */
#include "element_order.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

/* x in [0, 1) spread over every third bit of 63 (21 bits of resolution). */
static uint64_t morton_spread(double x) {
    uint64_t v = (uint64_t)(x * 2097152.0) & 0x1fffff, r = 0;
    for (int b = 0; b < 21; b++) r |= ((v >> b) & 1u) << (3 * b);
    return r;
}

typedef struct {
    uint64_t key;
    int64_t id;
} Keyed;

/* Sorts k[0..n) by key, ties in id order (the input's order: ids ascending), by a stable least-significant-
 * digit radix sort of the 63-bit keys, 11 bits a pass: O(n), where qsort was the largest part of the setup. */
static int radix_sort(Keyed *k, int64_t n) {
    Keyed *tmp = malloc(sizeof(Keyed) * (size_t)(n + 1));
    int64_t *count = malloc(sizeof(int64_t) * 2049);
    if (!tmp || !count) {
        free(tmp), free(count);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for an element order");
    }
    for (int shift = 0; shift < 64; shift += 11) {
        memset(count, 0, sizeof(int64_t) * 2049);
        for (int64_t e = 0; e < n; e++) count[((k[e].key >> shift) & 2047) + 1]++;
        if (count[((k[0].key >> shift) & 2047) + 1] == n) continue; /* one digit throughout: nothing moves */
        for (int b = 0; b < 2048; b++) count[b + 1] += count[b];
        for (int64_t e = 0; e < n; e++) tmp[count[(k[e].key >> shift) & 2047]++] = k[e];
        memcpy(k, tmp, sizeof(Keyed) * (size_t)n);
    }
    free(tmp), free(count);
    return FEM_OK;
}

int element_curve_order(const Mesh *m, const MeshBlock *mb, const fem_idx *list, int64_t n, int64_t *order) {
    Keyed *k = malloc(sizeof(Keyed) * (size_t)(n + 1));
    double *c = malloc(sizeof(double) * 3 * (size_t)(n + 1)), lo[3] = {1e300, 1e300, 1e300}, hi[3];
    if (!k || !c) {
        free(k), free(c);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for an element order");
    }
    for (int d = 0; d < 3; d++) hi[d] = -lo[d];
#pragma omp parallel for schedule(static) if (n > 20000)
    for (int64_t e = 0; e < n; e++) {
        const fem_idx *nodes = mb->nodes + (int64_t)(list ? list[e] : e) * mb->nnodes;
        for (int d = 0; d < 3; d++) {
            double s = 0.0;
            for (int j = 0; j < mb->nnodes; j++) s += m->x[(int64_t)nodes[j] * 3 + d];
            c[e * 3 + d] = s / mb->nnodes;
        }
    }
    for (int64_t e = 0; e < n; e++)
        for (int d = 0; d < 3; d++) {
            lo[d] = c[e * 3 + d] < lo[d] ? c[e * 3 + d] : lo[d];
            hi[d] = c[e * 3 + d] > hi[d] ? c[e * 3 + d] : hi[d];
        }
#pragma omp parallel for schedule(static) if (n > 20000)
    for (int64_t e = 0; e < n; e++) {
        k[e].id = e;
        k[e].key = 0;
        for (int d = 0; d < 3; d++) {
            double t = hi[d] > lo[d] ? (c[e * 3 + d] - lo[d]) / (hi[d] - lo[d]) * 0.999999 : 0.0;
            k[e].key |= morton_spread(t) << d;
        }
    }
    int status = n > 0 ? radix_sort(k, n) : FEM_OK;
    for (int64_t e = 0; e < n && !status; e++) order[e] = k[e].id;
    free(k), free(c);
    return status;
}

/* Block mb's elements rearranged into `order` (their nodes, entities and tags). */
static int permute_block(MeshBlock *mb, const int64_t *order) {
    const int64_t n = mb->count, nn = mb->nnodes;
    fem_idx *nodes = malloc(sizeof(fem_idx) * (size_t)(n * nn + 1));
    int32_t *entity = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int64_t *tag = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!nodes || !entity || !tag) {
        free(nodes), free(entity), free(tag);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the cells' order");
    }
    for (int64_t k = 0; k < n; k++) {
        memcpy(nodes + k * nn, mb->nodes + order[k] * nn, sizeof(fem_idx) * (size_t)nn);
        entity[k] = mb->entity[order[k]];
        tag[k] = mb->tag[order[k]];
    }
    free(mb->nodes), free(mb->entity), free(mb->tag);
    mb->nodes = nodes, mb->entity = entity, mb->tag = tag;
    return FEM_OK;
}

int mesh_sort_cells(Mesh *m) {
    const char *env = getenv("FEMTO_CELL_ORDER");
    if (env && strcmp(env, "mesh") == 0) return FEM_OK;
    for (int b = 0; b < m->ncell_blocks; b++) {
        MeshBlock *mb = &m->cells[b];
        if (mb->count < 2) continue;
        int64_t *order = malloc(sizeof(int64_t) * (size_t)mb->count);
        if (!order) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the cells' order");
        int status = element_curve_order(m, mb, NULL, mb->count, order);
        if (!status) status = permute_block(mb, order);
        free(order);
        FEM_TRY(status);
    }
    return FEM_OK;
}
