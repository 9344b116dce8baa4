/* Patches of consecutive elements and their distinct nodes (element_patch.h). O(element-node pairs): each
 * patch finds its distinct nodes through a small open-addressing table of its own, so patches are built on
 * all threads at once; one serial pass counts each node's elements in the block. */
#include "element_patch.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

/* A thread's table from node numbers to a patch's local node index, cleared entry by entry after each patch.
 */
typedef struct {
    int32_t mask;
    fem_idx *key; /* -1: empty */
    int32_t *val;
} NodeTable;

static int table_find(NodeTable *t, fem_idx g, int32_t next, int32_t *idx) {
    uint32_t h = ((uint32_t)g * 2654435761u) & (uint32_t)t->mask;
    while (t->key[h] != -1 && t->key[h] != g) h = (h + 1) & (uint32_t)t->mask;
    if (t->key[h] == g) return *idx = t->val[h], 0;
    t->key[h] = g, t->val[h] = next;
    return *idx = next, 1;
}

static void table_clear(NodeTable *t, const fem_idx *nodes, int32_t n) {
    for (int32_t k = 0; k < n; k++) {
        uint32_t h = ((uint32_t)nodes[k] * 2654435761u) & (uint32_t)t->mask;
        while (t->key[h] != nodes[k]) h = (h + 1) & (uint32_t)t->mask;
        t->key[h] = -1;
    }
    /* the cleared entries may have broken later probe chains of other keys, but every key of this patch is
     * cleared, so the table is empty again */
}

void element_patches_destroy(ElementPatches *p) {
    free(p->node_off), free(p->npriv), free(p->nodes), free(p->inc_beg), free(p->inc_slot),
        free(p->slot_node);
    free(p->part_off), free(p->sh_node), free(p->sh_beg), free(p->sh_part);
    memset(p, 0, sizeof *p);
}

/* Patch pi's distinct nodes in first-touch order into nodes[], each one's element count into cnt[]; returns
 * their number. */
static int32_t patch_nodes(const fem_idx *dofs, int64_t ne, int nd, int epb, int64_t pi, NodeTable *t,
                           fem_idx *nodes, int32_t *cnt) {
    const int64_t e0 = pi * epb, e1 = e0 + epb < ne ? e0 + epb : ne;
    int32_t n = 0;
    for (int64_t e = e0; e < e1; e++)
        for (int i = 0; i < nd; i++) {
            const fem_idx g = dofs[e * nd + i];
            int32_t k;
            if (table_find(t, g, n, &k)) nodes[n] = g, cnt[n] = 0, n++;
            cnt[k]++;
        }
    return n;
}

int element_patches(const fem_idx *dofs, int64_t ne, int nd, int64_t nnodes, int epb, ElementPatches *p) {
    memset(p, 0, sizeof *p);
    const int64_t npairs = ne * nd, np = (ne + epb - 1) / epb;
    if (ne <= 0 || nd <= 0 || epb <= 0 || (int64_t)epb * nd > 65536 || npairs >= INT32_MAX) return FEM_OK;
    int32_t tsize = 1;
    while (tsize < 2 * epb * nd) tsize *= 2;
    int32_t *deg = calloc((size_t)nnodes, sizeof *deg);
    p->node_off = malloc(sizeof(int32_t) * (size_t)(np + 1));
    p->npriv = malloc(sizeof(int32_t) * (size_t)np);
    p->inc_slot = malloc(sizeof(uint16_t) * (size_t)npairs);
    p->slot_node = calloc((size_t)(np * epb * nd), sizeof(uint16_t));
    if (!deg || !p->node_off || !p->npriv || !p->inc_slot || !p->slot_node) {
        free(deg), element_patches_destroy(p);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for element patches");
    }
    for (int64_t k = 0; k < npairs; k++) deg[dofs[k]]++;
    int status = FEM_OK, maxn = 0;
    p->node_off[0] = 0;
    /* pass 1: each patch's number of distinct nodes; pass 2 (after the offsets) fills them in */
    for (int pass = 0; pass < 2 && !status; pass++) {
#pragma omp parallel reduction(max : maxn)
        {
            NodeTable t = {tsize - 1, malloc(sizeof(fem_idx) * (size_t)tsize),
                           malloc(sizeof(int32_t) * (size_t)tsize)};
            fem_idx *nodes = malloc(sizeof(fem_idx) * (size_t)epb * nd);
            int32_t *cnt = malloc(sizeof(int32_t) * (size_t)epb * nd),
                    *pos = malloc(sizeof(int32_t) * (size_t)epb * nd);
            int32_t *fill = malloc(sizeof(int32_t) * (size_t)epb * nd);
            const int ok = t.key && t.val && nodes && cnt && pos && fill;
            if (ok) memset(t.key, 0xff, sizeof(fem_idx) * (size_t)tsize);
#pragma omp for schedule(static)
            for (int64_t pi = 0; pi < np; pi++) {
                if (!ok) continue;
                const int32_t n = patch_nodes(dofs, ne, nd, epb, pi, &t, nodes, cnt);
                if (pass == 0) {
                    p->node_off[pi + 1] = n;
                    if (n > maxn) maxn = n;
                    table_clear(&t, nodes, n);
                    continue;
                }
                /* private nodes (every element of theirs in this patch) first, then the shared ones */
                int32_t npriv = 0, at = 0;
                for (int32_t k = 0; k < n; k++) npriv += cnt[k] == deg[nodes[k]];
                int32_t a = 0, b = npriv;
                for (int32_t k = 0; k < n; k++) pos[k] = cnt[k] == deg[nodes[k]] ? a++ : b++;
                const int64_t k0 = p->node_off[pi], s0 = pi * epb * nd;
                for (int32_t k = 0; k < n; k++) p->nodes[k0 + pos[k]] = nodes[k];
                /* each node's slots start where the nodes before it (in the new order) end */
                for (int32_t k = 0; k < n; k++) fill[pos[k]] = cnt[k];
                for (int32_t k = 0; k < n; k++) {
                    const int32_t c = fill[k];
                    p->inc_beg[k0 + k] = (int32_t)(s0 + at);
                    fill[k] = at, at += c;
                }
                p->npriv[pi] = npriv;
                const int64_t e0 = pi * epb, e1 = e0 + epb < ne ? e0 + epb : ne;
                for (int64_t e = e0; e < e1; e++)
                    for (int i = 0; i < nd; i++) {
                        int32_t k;
                        table_find(&t, dofs[e * nd + i], n, &k);
                        p->inc_slot[s0 + fill[pos[k]]++] = (uint16_t)(i * epb + (e - e0));
                        p->slot_node[s0 + (e - e0) * nd + i] = (uint16_t)pos[k];
                    }
                table_clear(&t, nodes, n);
            }
            if (!ok) {
#pragma omp critical
                status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for element patches");
            }
            free(t.key), free(t.val), free(nodes), free(cnt), free(pos), free(fill);
        }
        if (pass == 0 && !status) {
            for (int64_t pi = 0; pi < np; pi++) p->node_off[pi + 1] += p->node_off[pi];
            p->ntotal = p->node_off[np];
            p->nodes = malloc(sizeof(fem_idx) * (size_t)p->ntotal);
            p->inc_beg = malloc(sizeof(int32_t) * (size_t)(p->ntotal + 1));
            if (!p->nodes || !p->inc_beg)
                status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for element patches");
            else
                p->inc_beg[p->ntotal] = (int32_t)npairs;
        }
    }
    free(deg);
    if (status) return element_patches_destroy(p), status;
    p->npatch = np, p->epb = epb, p->nd = nd, p->maxn = maxn;
    return FEM_OK;
}

int element_patches_partials(ElementPatches *p, int64_t nnodes) {
    const int64_t np = p->npatch;
    p->part_off = malloc(sizeof(int32_t) * (size_t)(np + 1));
    int32_t *cnt = calloc((size_t)nnodes + 1, sizeof *cnt);
    if (!p->part_off || !cnt) goto oom;
    p->part_off[0] = 0;
    for (int64_t pi = 0; pi < np; pi++) {
        const int32_t k0 = p->node_off[pi] + p->npriv[pi], k1 = p->node_off[pi + 1];
        p->part_off[pi + 1] = p->part_off[pi] + (k1 - k0);
        for (int32_t k = k0; k < k1; k++) cnt[p->nodes[k]]++;
    }
    /* the shared nodes in increasing order, each one's partials in patch order (a counting sort) */
    int64_t ns = 0;
    for (int64_t g = 0; g < nnodes; g++) ns += cnt[g] > 0;
    p->nshared = ns;
    p->sh_node = malloc(sizeof(fem_idx) * (size_t)(ns + 1));
    p->sh_beg = malloc(sizeof(int32_t) * (size_t)(ns + 1));
    p->sh_part = malloc(sizeof(int32_t) * (size_t)(p->part_off[np] + 1));
    if (!p->sh_node || !p->sh_beg || !p->sh_part) goto oom;
    int64_t k = 0;
    int32_t at = 0;
    for (int64_t g = 0; g < nnodes; g++) {
        if (!cnt[g]) continue;
        p->sh_node[k] = (fem_idx)g, p->sh_beg[k++] = at;
        const int32_t c = cnt[g];
        cnt[g] = at; /* now the next free place of node g's partials */
        at += c;
    }
    p->sh_beg[ns] = at;
    for (int64_t pi = 0; pi < np; pi++) {
        const int32_t k0 = p->node_off[pi] + p->npriv[pi], k1 = p->node_off[pi + 1];
        for (int32_t j = k0; j < k1; j++) p->sh_part[cnt[p->nodes[j]]++] = p->part_off[pi] + (j - k0);
    }
    free(cnt);
    return FEM_OK;
oom:
    free(cnt);
    return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the partial sums of element patches");
}
