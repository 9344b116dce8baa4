/* Assembly of an operator's Jacobian (see assemble.h).
 *
 * The CSR matrix is built straight from the element matrices, without (row, column, value) triplets: the
 * sparsity pattern comes from the element connectivity at the level of nodes (two nodes are coupled when an
 * element holds both), which is ncomp^2 times smaller than that of the dofs; every row of a node's free dofs
 * then has the same columns. Each node's rows are filled by one thread, which adds the contributions of the
 * node's elements in the order of the elements (cell blocks, then facet blocks, each in element order): the
 * order in which the triplets used to be summed, so the matrix is bitwise the same for any number of threads,
 * and no atomics are needed. Memory: the element matrices, the matrix, and O(nodes + element nodes) of
 * index arrays; the triplets and their sorted copy (28 bytes per element-matrix entry) are gone. */
#include "assemble.h"

#include "fem/error.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Every element of the operator (cell blocks, then facet blocks), flattened: element g holds the nodes
 * node[eoff[g] .. eoff[g + 1]) and its matrix is K + koff[g], of (nodes * ncomp)^2 entries, row-major. */
typedef struct {
    int64_t nelem, nnodes;
    int nc;
    int64_t *eoff, *koff;
    fem_idx *node;
    double *K;
    /* the transpose: node n lies in elements inc_elem[inc_off[n] .. inc_off[n + 1]) (increasing) at the local
     * positions inc_pos[...] */
    int64_t *inc_off, *inc_elem;
    int16_t *inc_pos;
} Elements;

/* The node pattern: node n is coupled to the nodes adj[adj_off[n] .. adj_off[n + 1]) (increasing). The dof
 * (n, c) is free when free_index[n * nc + c] >= 0: then it is the number of free components of n before c. */
typedef struct {
    int64_t *adj_off;
    fem_idx *adj;
    int8_t *free_index;
    int8_t *nfree; /* [nnodes]: free components of node n */
} Pattern;

static void elements_destroy(Elements *E) {
    free(E->eoff), free(E->koff), free(E->node), free(E->K);
    free(E->inc_off), free(E->inc_elem), free(E->inc_pos);
}

static void pattern_destroy(Pattern *P) {
    free(P->adj_off), free(P->adj), free(P->free_index), free(P->nfree);
}

static const OpBlock *op_block(const Operator *op, int k) {
    return k < op->ncells ? &op->cells[k] : &op->facets[k - op->ncells];
}

/* Element counts and offsets, the element nodes, and every block's element matrices. */
static int gather_elements(Operator *op, Elements *E) {
    const Space *sp = op->space;
    int nblocks = op->ncells + op->nfacets;
    E->nc = op->phys.ncomp, E->nnodes = sp->nnodes;
    for (int k = 0; k < nblocks; k++) E->nelem += op_block(op, k)->nelem;
    FEM_ALLOC(E->eoff, E->nelem + 1, "element offsets for assembly");
    FEM_ALLOC(E->koff, E->nelem + 1, "element-matrix offsets for assembly");
    int64_t g = 0;
    for (int k = 0; k < nblocks; k++) {
        const OpBlock *b = op_block(op, k);
        int nd = b->basis.tables.ndof, m = nd * E->nc;
        for (int64_t e = 0; e < b->nelem; e++, g++) {
            E->eoff[g + 1] = E->eoff[g] + nd;
            E->koff[g + 1] = E->koff[g] + (int64_t)m * m;
        }
    }
    FEM_ALLOC(E->node, E->eoff[E->nelem] + 1, "element nodes for assembly");
    E->K = fem_malloc(sizeof(double) * (size_t)(E->koff[E->nelem] + 1), "element matrices");
    if (!E->K) return FEM_ERR_INTERNAL;
    g = 0;
    for (int k = 0; k < nblocks; k++) {
        const OpBlock *b = op_block(op, k);
        int facet = k >= op->ncells, bi = facet ? k - op->ncells : k, nd = b->basis.tables.ndof;
        if (b->nelem == 0) continue;
        const SpaceBlock *sb = facet ? &sp->facets[bi] : &sp->cells[bi];
        for (int64_t e = 0; e < b->nelem; e++)
            memcpy(E->node + E->eoff[g + e], &sb->dofs[(facet ? b->list[e] : e) * nd], sizeof(fem_idx) * nd);
        FEM_TRY(op->ops.element_matrices(op, facet, bi, E->K + E->koff[g]));
        g += b->nelem;
    }
    return FEM_OK;
}

/* The node -> element transpose, by a counting sort in element order (so each node's list increases). */
static int transpose(Elements *E) {
    int64_t n = E->nnodes, slots = E->eoff[E->nelem];
    FEM_ALLOC(E->inc_off, n + 1, "node-element incidence for assembly");
    FEM_ALLOC(E->inc_elem, slots + 1, "node-element incidence for assembly");
    FEM_ALLOC(E->inc_pos, slots + 1, "node-element incidence for assembly");
    for (int64_t s = 0; s < slots; s++) E->inc_off[E->node[s] + 1]++;
    for (int64_t i = 0; i < n; i++) E->inc_off[i + 1] += E->inc_off[i];
    int64_t *next = malloc(sizeof *next * (size_t)(n + 1));
    if (!next) return fem_fail(FEM_ERR_INTERNAL, "out of host memory assembling a matrix");
    memcpy(next, E->inc_off, sizeof *next * (size_t)n);
    for (int64_t g = 0; g < E->nelem; g++)
        for (int64_t s = E->eoff[g]; s < E->eoff[g + 1]; s++) {
            int64_t p = next[E->node[s]]++;
            E->inc_elem[p] = g, E->inc_pos[p] = (int16_t)(s - E->eoff[g]);
        }
    free(next);
    return FEM_OK;
}

/* The nodes coupled to node i, each once, in the order met; mark[] is the thread's scratch (mark[j] == i:
 * met). Writes them to out (when not NULL); returns their number. */
static int64_t neighbours(const Elements *E, int64_t i, int64_t *mark, fem_idx *out) {
    int64_t count = 0;
    for (int64_t p = E->inc_off[i]; p < E->inc_off[i + 1]; p++) {
        int64_t g = E->inc_elem[p];
        for (int64_t s = E->eoff[g]; s < E->eoff[g + 1]; s++) {
            fem_idx j = E->node[s];
            if (mark[j] == i) continue;
            mark[j] = i;
            if (out) out[count] = j;
            count++;
        }
    }
    return count;
}

static void sort_nodes(fem_idx *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        fem_idx v = a[i];
        int64_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Pass 0 counts each node's neighbours, pass 1 writes and sorts them (parallel over nodes). */
static int node_pattern(const Elements *E, Pattern *P) {
    int64_t n = E->nnodes;
    FEM_ALLOC(P->adj_off, n + 1, "the matrix's node pattern");
    int status = FEM_OK;
    for (int pass = 0; pass < 2 && !status; pass++) {
        if (pass == 1) {
            for (int64_t i = 0; i < n; i++) P->adj_off[i + 1] += P->adj_off[i];
            P->adj = fem_malloc(sizeof(fem_idx) * (size_t)(P->adj_off[n] + 1), "the matrix's node pattern");
            if (!P->adj) return FEM_ERR_INTERNAL;
        }
#pragma omp parallel
        {
            int64_t *mark = malloc(sizeof *mark * (size_t)(n + 1));
            if (!mark) {
#pragma omp atomic write
                status = FEM_ERR_INTERNAL;
            }
            if (mark)
                for (int64_t j = 0; j < n; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 256)
            for (int64_t i = 0; i < n; i++) {
                if (!mark) continue;
                if (pass == 0) {
                    P->adj_off[i + 1] = neighbours(E, i, mark, NULL);
                } else {
                    fem_idx *row = P->adj + P->adj_off[i];
                    sort_nodes(row, neighbours(E, i, mark, row));
                }
            }
            free(mark);
        }
    }
    if (status) return fem_fail(status, "out of host memory assembling a matrix (node marks per thread)");
    return FEM_OK;
}

/* Which dofs are free, and each free dof's place among its node's free components. */
static int free_dofs(const Operator *op, int nc, int64_t nnodes, Pattern *P) {
    FEM_ALLOC(P->free_index, nnodes * nc + 1, "the matrix's free dofs");
    FEM_ALLOC(P->nfree, nnodes + 1, "the matrix's free dofs");
    for (int64_t i = 0; i < op->ndir; i++) P->free_index[op->dir_host[i]] = -1;
    for (int64_t i = 0; i < nnodes; i++)
        for (int c = 0; c < nc; c++)
            if (P->free_index[i * nc + c] >= 0) P->free_index[i * nc + c] = P->nfree[i]++;
    return FEM_OK;
}

/* Row starts: a constrained dof's row is its diagonal 1; a free dof's row holds the free dofs of the node's
 * neighbours. */
static int row_starts(const Elements *E, const Pattern *P, CsrMatrix *A) {
    int64_t nnodes = E->nnodes;
    int nc = E->nc;
    A->nrows = A->ncols = nnodes * nc;
    FEM_ALLOC(A->rowptr, A->nrows + 1, "a sparse matrix");
    for (int64_t i = 0; i < nnodes; i++) {
        int64_t len = 0;
        for (int64_t q = P->adj_off[i]; q < P->adj_off[i + 1]; q++) len += P->nfree[P->adj[q]];
        for (int c = 0; c < nc; c++) {
            int64_t r = i * nc + c;
            A->rowptr[r + 1] = A->rowptr[r] + (P->free_index[r] >= 0 ? len : 1);
        }
    }
    A->nnz = A->rowptr[A->nrows];
    if (A->nrows > INT32_MAX)
        return fem_fail(FEM_ERR_INTERNAL, "a sparse matrix of %lld rows: too many for 32-bit columns",
                        (long long)A->nrows);
    A->cols = fem_malloc(sizeof *A->cols * (size_t)(A->nnz + 1), "a sparse matrix's columns");
    A->vals = fem_malloc(sizeof *A->vals * (size_t)(A->nnz + 1), "a sparse matrix's values");
    return A->cols && A->vals ? FEM_OK : FEM_ERR_INTERNAL;
}

/* The rows of node i: columns, then the sum of its elements' entries, element by element. where[j] is the
 * thread's scratch: the offset of node j's first free dof within the rows of node i. */
static void node_rows(const Elements *E, const Pattern *P, int64_t i, int64_t *where, CsrMatrix *A) {
    int nc = E->nc;
    int64_t off = 0;
    for (int64_t q = P->adj_off[i]; q < P->adj_off[i + 1]; q++)
        where[P->adj[q]] = off, off += P->nfree[P->adj[q]];
    for (int a = 0; a < nc; a++) {
        int64_t r = i * nc + a, base = A->rowptr[r];
        if (P->free_index[r] < 0) {
            A->cols[base] = (int32_t)r, A->vals[base] = 1.0;
            continue;
        }
        for (int64_t q = P->adj_off[i], k = base; q < P->adj_off[i + 1]; q++)
            for (int b = 0; b < nc; b++)
                if (P->free_index[P->adj[q] * nc + b] >= 0)
                    A->cols[k] = (int32_t)(P->adj[q] * nc + b), A->vals[k++] = 0.0;
    }
    for (int64_t p = E->inc_off[i]; p < E->inc_off[i + 1]; p++) {
        int64_t g = E->inc_elem[p], nd = E->eoff[g + 1] - E->eoff[g], m = nd * nc;
        const double *K = E->K + E->koff[g];
        for (int a = 0; a < nc; a++) {
            int64_t r = i * nc + a;
            if (P->free_index[r] < 0) continue;
            const double *Krow = K + (E->inc_pos[p] * nc + a) * m;
            double *row = A->vals + A->rowptr[r];
            for (int64_t l = 0; l < nd; l++) {
                fem_idx j = E->node[E->eoff[g] + l];
                for (int b = 0; b < nc; b++) {
                    int fi = P->free_index[j * nc + b];
                    if (fi >= 0) row[where[j] + fi] += Krow[l * nc + b];
                }
            }
        }
    }
}

static int fill_rows(const Elements *E, const Pattern *P, CsrMatrix *A) {
    int status = FEM_OK;
#pragma omp parallel
    {
        int64_t *where = malloc(sizeof *where * (size_t)(E->nnodes + 1));
        if (!where) {
#pragma omp atomic write
            status = FEM_ERR_INTERNAL;
        }
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < E->nnodes; i++)
            if (where) node_rows(E, P, i, where, A);
        free(where);
    }
    if (status) return fem_fail(status, "out of host memory assembling a matrix (node offsets per thread)");
    return FEM_OK;
}

int op_assemble(Operator *op, CsrMatrix *A) {
    memset(A, 0, sizeof *A);
    Elements E = {0};
    Pattern P = {0};
    int status = gather_elements(op, &E);
    if (!status) status = transpose(&E);
    if (!status) status = node_pattern(&E, &P);
    if (!status) status = free_dofs(op, E.nc, E.nnodes, &P);
    if (!status) status = row_starts(&E, &P, A);
    if (!status) status = fill_rows(&E, &P, A);
    elements_destroy(&E);
    pattern_destroy(&P);
    if (status) csr_destroy(A);
    return status;
}
