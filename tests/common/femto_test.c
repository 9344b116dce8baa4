#include "femto_test.h"

#include "app/backends.h"
#include "fem/error.h"

#include <math.h>
#include <string.h>

int test_failures = 0;

int test_result(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

const Vec *test_host_vec(int64_t n, double *p) {
    static Device cpu;
    static Vec ring[8];
    static int next, made;
    if (!made) made = cpu_device_create(&cpu, 1, ASSEMBLE_GATHER) == FEM_OK;
    Vec *v = &ring[next++ % 8];
    *v = vec_wrap(&cpu, n, p);
    return v;
}

int test_device(Device *d, DevKind kind, int threads, AssembleKind assembly) {
    backends_register();
    if (device_create(d, kind, threads, assembly)) {
        printf("skipped: %s\n", fem_last_error());
        return TEST_SKIP;
    }
    return 0;
}

const char *test_mesh(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", FEMTO_TEST_MESHES, name);
    return path;
}

int test_solve(Device *d, const Space *sp, Model *md, double **src, double *u, TestSolve *ts) {
    Operator op;
    FEM_TRY(op_create(&op, d, sp, &md->phys, 0, md->cell_tags, md->facet_tags));
    int status = op_set_dirichlet(&op, md->ndir, md->dir_dofs);
    for (int b = 0; src && b < sp->ncell_blocks && !status; b++) status = op_set_source(&op, b, src[b]);
    for (int64_t i = 0; i < md->ndir; i++) u[md->dir_dofs[i]] = md->dir_values[i];
    Vec du = {0};
    if (!status) status = vec_create(&du, d, sp->ndofs);
    if (!status) status = vec_upload(&du, u);
    NewtonSettings ns = {.rtol = 1e-11,
                         .atol = 1e-12,
                         .max_iterations = 20,
                         .line_search = 1,
                         .linear = ts->linear,
                         .pc = {.type = ts->pc},
                         .ksp = {.type = ts->ksp ? ts->ksp : KSP_CG,
                                 .rtol = 1e-10,
                                 .atol = 0,
                                 .max_iterations = 20000,
                                 .restart = 100}};
    if (ts->rtol > 0) ns.rtol = ts->rtol;
    Newton nw;
    if (!status) status = newton_create(&nw, &op, &ns, NULL, NULL);
    if (!status) {
        status = newton_solve(&nw, &du, NULL, &ts->newton);
        newton_destroy(&nw);
    }
    if (!status) status = vec_download(&du, u);
    ts->linear_iterations = ts->newton.linear_iterations;
    vec_destroy(&du);
    op_destroy(&op);
    return status;
}

double test_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (double)(x >> 11) / 9007199254740992.0;
}

void test_curve_mesh(Mesh *m, double amp) {
    char *corner = calloc((size_t)m->nnodes + 1, 1);
    for (int b = 0; b < m->ncell_blocks; b++) {
        const MeshBlock *mb = &m->cells[b];
        for (int64_t c = 0; c < mb->count; c++)
            for (int v = 0; v < shape_nvertices(mb->shape); v++)
                corner[mb->nodes[c * mb->nnodes + lattice_vertex(mb->shape, mb->order, v)]] = 1;
    }
    for (int64_t n = 0; n < m->nnodes; n++) {
        if (corner[n]) continue;
        double *x = &m->x[3 * n], x0 = x[0], y0 = x[1], z0 = x[2];
        x[0] += amp * sin(3 * y0 + 1) * cos(2 * z0);
        x[1] += amp * sin(2 * z0 + 2) * cos(3 * x0);
        if (m->dim == 3) x[2] += amp * sin(3 * x0 + 3) * cos(2 * y0);
    }
    free(corner);
}

ElemView test_elem_view(const Space *sp, int b, const ElementTables *t, int ncomp) {
    const SpaceBlock *sb = &sp->cells[b];
    ElemView v = {.nelem = sb->count,
                  .ndof = t->ndof,
                  .nq = t->nq,
                  .dim = t->dim,
                  .ncomp = ncomp,
                  .dofs = sb->dofs,
                  .B = t->B,
                  .G = t->G,
                  .tensor = t->tensor,
                  .nd1 = t->nd1,
                  .nq1 = t->nq1,
                  .B1 = t->B1,
                  .G1 = t->G1,
                  .nnodes = sp->nnodes,
                  .t_offsets = sb->t_offsets,
                  .t_slots = sb->t_slots};
    return v;
}

int test_block_create(Device *d, const Space *sp, int facet, int b, int qdegree, TestBlock *tb) {
    memset(tb, 0, sizeof *tb);
    tb->dev = d;
    const SpaceBlock *sb = facet ? &sp->facets[b] : &sp->cells[b];
    const MeshBlock *mb = facet ? &sp->mesh->facets[b] : &sp->mesh->cells[b];
    int deg = qdegree > 0 ? qdegree : quadrature_default_degree(sp->order, mb->order);
    FEM_TRY(tables_create(sb->shape, sp->order, deg, &tb->tables));
    const ElementTables *t = &tb->tables;
    ElemView *v = &tb->view;
    void **o = tb->owned;
    FEM_TRY(device_alloc_copy(d, &o[0], sb->dofs, sizeof(fem_idx) * (size_t)(sb->count * sb->ndof)));
    FEM_TRY(device_alloc_copy(d, &o[1], t->B, sizeof(double) * (size_t)t->nq * t->ndof));
    FEM_TRY(device_alloc_copy(d, &o[2], t->G, sizeof(double) * (size_t)t->nq * t->ndof * t->dim));
    if (t->tensor) {
        FEM_TRY(device_alloc_copy(d, &o[3], t->B1, sizeof(double) * (size_t)t->nq1 * t->nd1));
        FEM_TRY(device_alloc_copy(d, &o[4], t->G1, sizeof(double) * (size_t)t->nq1 * t->nd1));
    }
    FEM_TRY(device_alloc_copy(d, &o[5], sb->t_offsets, sizeof(int64_t) * (size_t)(sp->nnodes + 1)));
    FEM_TRY(device_alloc_copy(d, &o[6], sb->t_slots, sizeof(int32_t) * (size_t)(sb->count * sb->ndof)));
    v->nelem = sb->count;
    v->ndof = t->ndof;
    v->nq = t->nq;
    v->dim = t->dim;
    v->ncomp = sp->ncomp;
    v->dofs = o[0];
    v->B = o[1];
    v->G = o[2];
    v->tensor = t->tensor;
    v->nd1 = t->nd1;
    v->nq1 = t->nq1;
    v->B1 = o[3];
    v->G1 = o[4];
    v->nnodes = sp->nnodes;
    v->t_offsets = o[5];
    v->t_slots = o[6];
    return FEM_OK;
}

void test_block_destroy(TestBlock *tb) {
    for (int i = 0; i < 7; i++) device_free(tb->dev, tb->owned[i]);
    tables_destroy(&tb->tables);
    memset(tb, 0, sizeof *tb);
}
