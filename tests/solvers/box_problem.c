/* Structured-box test matrices (see box_problem.h). */
#include "box_problem.h"

#include "fem/error.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int nx, ny, nz, bs;
    double h[3];
    double lambda, mu; /* elasticity (bs = 3) */
} Box;

/* Gradients of the 8 trilinear shape functions of an h[0] x h[1] x h[2] brick at the 2x2x2 Gauss point q
 * (node a = i + 2 j + 4 k at corner (i, j, k)). */
static void gradients(const double h[3], int q, double g[8][3]) {
    double xi[3];
    for (int d = 0; d < 3; d++) xi[d] = (q >> d & 1 ? 1 : -1) / sqrt(3.0);
    for (int a = 0; a < 8; a++)
        for (int d = 0; d < 3; d++) {
            double v = 2.0 / h[d] * (a >> d & 1 ? 0.5 : -0.5);
            for (int e = 0; e < 3; e++)
                if (e != d) v *= 0.5 * (1 + (a >> e & 1 ? xi[e] : -xi[e]));
            g[a][d] = v;
        }
}

/* The element matrix [8 bs][8 bs], dofs interleaved (a * bs + c): the Laplacian (bs = 1) or isotropic
 * elasticity (bs = 3). */
static void element_matrix(const Box *b, double *K) {
    int n = 8 * b->bs;
    double w = b->h[0] * b->h[1] * b->h[2] / 8, g[8][3];
    memset(K, 0, sizeof(double) * n * n);
    for (int q = 0; q < 8; q++) {
        gradients(b->h, q, g);
        for (int a = 0; a < 8; a++)
            for (int c = 0; c < 8; c++) {
                double dot = g[a][0] * g[c][0] + g[a][1] * g[c][1] + g[a][2] * g[c][2];
                if (b->bs == 1) {
                    K[a * n + c] += w * dot;
                    continue;
                }
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        K[(3 * a + i) * n + 3 * c + j] +=
                            w * (b->lambda * g[a][i] * g[c][j] + b->mu * g[a][j] * g[c][i] +
                                 (i == j ? b->mu * dot : 0));
            }
    }
}

static int64_t node_id(const Box *b, int i, int j, int k) {
    return i + (int64_t)(b->nx + 1) * (j + (int64_t)(b->ny + 1) * k);
}

/* Every element writes (8 bs)^2 triplets at its own offset; an entry in a fixed row or column becomes a zero
 * on the free row's diagonal (or the fixed row's), so the fixed dofs end up decoupled; each fixed dof then
 * gets 1. */
static void element_triplets(const Box *b, const double *K, const char *fixed, int64_t e, int32_t *r,
                             int32_t *c, double *v) {
    int n = 8 * b->bs, i = (int)(e % b->nx), j = (int)(e / b->nx % b->ny), k = (int)(e / b->nx / b->ny);
    int64_t dof[24];
    for (int a = 0; a < 8; a++)
        for (int comp = 0; comp < b->bs; comp++)
            dof[a * b->bs + comp] =
                node_id(b, i + (a & 1), j + (a >> 1 & 1), k + (a >> 2 & 1)) * b->bs + comp;
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            int64_t t = e * n * n + x * n + y;
            int keep = !fixed[dof[x]] && !fixed[dof[y]];
            r[t] = (int32_t)dof[x];
            c[t] = (int32_t)(keep ? dof[y] : dof[x]);
            v[t] = keep ? K[x * n + y] : 0.0;
        }
}

static int assemble(const Box *b, BoxProblem *p) {
    int n = 8 * b->bs;
    int64_t nelem = (int64_t)b->nx * b->ny * b->nz, nt = nelem * n * n + p->ndofs;
    int32_t *r = malloc(sizeof *r * nt), *c = malloc(sizeof *c * nt);
    double *v = malloc(sizeof *v * nt), K[24 * 24];
    if (!r || !c || !v)
        return fem_fail(FEM_ERR_INTERNAL, "out of memory (%lld test triplets)", (long long)nt);
    element_matrix(b, K);
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < nelem; e++) element_triplets(b, K, p->fixed, e, r, c, v);
    int64_t t = nelem * n * n;
    for (int64_t d = 0; d < p->ndofs; d++)
        if (p->fixed[d]) r[t] = c[t] = (int32_t)d, v[t++] = 1.0;
    double t1 = omp_get_wtime();
    clock_t c1 = clock();
    int status = csr_from_triplets(p->ndofs, p->ndofs, t, r, c, v, &p->A);
    p->ntriplets = t;
    p->assemble_seconds = t1 - t0;
    p->csr_seconds = omp_get_wtime() - t1;
    p->csr_cpu_seconds = (double)(clock() - c1) / CLOCKS_PER_SEC;
    free(r), free(c), free(v);
    return status;
}

/* Nodes, coordinates, fixed dofs (fix(x, y, z) says whether a node is fixed) and the load per free dof. */
static int setup(const Box *b, BoxProblem *p, int (*fix)(const Box *, int, int, int), const double load[3]) {
    memset(p, 0, sizeof *p);
    p->block_size = b->bs;
    p->nnodes = (int64_t)(b->nx + 1) * (b->ny + 1) * (b->nz + 1);
    p->ndofs = p->nnodes * b->bs;
    p->coords = malloc(sizeof(double) * 3 * p->nnodes);
    p->fixed = calloc(p->ndofs, 1);
    p->b = calloc(p->ndofs, sizeof(double));
    if (!p->coords || !p->fixed || !p->b) return fem_fail(FEM_ERR_INTERNAL, "out of memory (test problem)");
    double vol = b->h[0] * b->h[1] * b->h[2];
    for (int k = 0; k <= b->nz; k++)
        for (int j = 0; j <= b->ny; j++)
            for (int i = 0; i <= b->nx; i++) {
                int64_t id = node_id(b, i, j, k);
                p->coords[3 * id] = i * b->h[0], p->coords[3 * id + 1] = j * b->h[1];
                p->coords[3 * id + 2] = k * b->h[2];
                for (int comp = 0; comp < b->bs; comp++) {
                    p->fixed[id * b->bs + comp] = (char)fix(b, i, j, k);
                    p->b[id * b->bs + comp] = p->fixed[id * b->bs + comp] ? 0.0 : vol * load[comp];
                }
            }
    return assemble(b, p);
}

static int on_boundary(const Box *b, int i, int j, int k) {
    return i == 0 || j == 0 || k == 0 || i == b->nx || j == b->ny || k == b->nz;
}
static int at_x0(const Box *b, int i, int j, int k) {
    (void)b, (void)j, (void)k;
    return i == 0;
}

int box_poisson(int n, BoxProblem *p) {
    Box b = {.nx = n, .ny = n, .nz = n, .bs = 1, .h = {1.0 / n, 1.0 / n, 1.0 / n}};
    const double load[3] = {1.0, 0, 0};
    return setup(&b, p, on_boundary, load);
}

int box_beam(int n, BoxProblem *p) {
    double E = 200e9, nu = 0.3;
    Box b = {.nx = 10 * n, .ny = n, .nz = n, .bs = 3, .h = {0.1 / n, 0.1 / n, 0.1 / n}};
    b.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    b.mu = E / (2 * (1 + nu));
    const double load[3] = {0, 0, -7850 * 9.81};
    return setup(&b, p, at_x0, load);
}

void box_destroy(BoxProblem *p) {
    csr_destroy(&p->A);
    free(p->b), free(p->coords), free(p->fixed);
    memset(p, 0, sizeof *p);
}
