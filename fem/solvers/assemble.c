/* Assembly of an operator's Jacobian (see assemble.h). */
#include "assemble.h"

#include "fem/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t n, cap;
    int32_t *rows, *cols;
    double *vals;
    const char *constrained; /* per dof */
} Triplets;

static int reserve(Triplets *t, int64_t more) {
    if (t->n + more <= t->cap) return FEM_OK;
    int64_t cap = t->cap * 2 > t->n + more ? t->cap * 2 : t->n + more;
    int32_t *r = realloc(t->rows, sizeof(int32_t) * (size_t)cap), *c;
    if (r) t->rows = r;
    c = r ? realloc(t->cols, sizeof(int32_t) * (size_t)cap) : NULL;
    if (c) t->cols = c;
    double *v = c ? realloc(t->vals, sizeof(double) * (size_t)cap) : NULL;
    if (!v) return fem_fail(FEM_ERR_INTERNAL, "out of host memory assembling a matrix (%lld entries)", (long long)cap);
    t->vals = v;
    t->cap = cap;
    return FEM_OK;
}

/* The element matrices of one block, as triplets of unconstrained rows and columns. */
static int block_triplets(Operator *op, int facet, int bi, Triplets *t) {
    const OpBlock *b = facet ? &op->facets[bi] : &op->cells[bi];
    if (b->nelem == 0) return FEM_OK;
    const SpaceBlock *sb = facet ? &op->space->facets[bi] : &op->space->cells[bi];
    int nc = op->phys.ncomp, nd = b->basis.tables.ndof, m = nd * nc;
    double *K = malloc(sizeof(double) * (size_t)(b->nelem * m * m));
    if (!K) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for element matrices");
    int status = op->ops.element_matrices(op, facet, bi, K);
    if (!status) status = reserve(t, b->nelem * m * m);
    for (int64_t e = 0; e < b->nelem && !status; e++) {
        const fem_idx *dofs = &sb->dofs[(facet ? b->list[e] : e) * nd];
        for (int k = 0; k < m; k++) {
            int32_t row = dofs[k / nc] * nc + k % nc;
            if (t->constrained[row]) continue;
            for (int l = 0; l < m; l++) {
                int32_t col = dofs[l / nc] * nc + l % nc;
                if (t->constrained[col]) continue;
                t->rows[t->n] = row, t->cols[t->n] = col, t->vals[t->n] = K[(e * m + k) * m + l];
                t->n++;
            }
        }
    }
    free(K);
    return status;
}

int op_assemble(Operator *op, CsrMatrix *A) {
    int64_t n = op->space->ndofs;
    memset(A, 0, sizeof *A);
    char *constrained = calloc((size_t)n + 1, 1);
    if (!constrained) return fem_fail(FEM_ERR_INTERNAL, "out of host memory assembling a matrix");
    for (int64_t i = 0; i < op->ndir; i++) constrained[op->dir_host[i]] = 1;
    Triplets t = {.constrained = constrained};
    int status = reserve(&t, op->ndir + 1);
    for (int64_t i = 0; i < op->ndir && !status; i++) { /* identity rows */
        t.rows[t.n] = t.cols[t.n] = op->dir_host[i];
        t.vals[t.n++] = 1.0;
    }
    for (int b = 0; b < op->ncells && !status; b++) status = block_triplets(op, 0, b, &t);
    for (int b = 0; b < op->nfacets && !status; b++) status = block_triplets(op, 1, b, &t);
    if (!status) status = csr_from_triplets(n, n, t.n, t.rows, t.cols, t.vals, A);
    free(t.rows);
    free(t.cols);
    free(t.vals);
    free(constrained);
    return status;
}
