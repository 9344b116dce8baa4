/* Shared pieces of the elasticity tests: a Problem built in C, and a solve with load steps (as the app does:
 * load factor in the constants, prescribed displacements scaled in the solution vector). */
#ifndef FEMTO_ELAS_TEST_H
#define FEMTO_ELAS_TEST_H

#include "common/femto_test.h"
#include "fem/error.h"
#include "common/test_functional.h"
#include "io/mesh_read.h"
#include "physics/elasticity.h"

#include <math.h>
#include <string.h>

/* An elastic material from E and nu (the problem reader fills lambda and mu the same way). */
static inline ElasticMaterial elas_material(double E, double nu, double rho, double alpha, double Tref) {
    ElasticMaterial m;
    memset(&m, 0, sizeof m);
    m.young = E;
    m.poisson = nu;
    m.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    m.mu = E / (2 * (1 + nu));
    m.density = rho;
    m.expansion = alpha;
    m.reference_temperature = Tref;
    return m;
}

static inline ElasticBc elas_bc(ElasticBcKind kind, const char *boundary, int components, double x, double y,
                                double z) {
    ElasticBc b;
    memset(&b, 0, sizeof b);
    b.kind = kind;
    snprintf(b.boundary, sizeof b.boundary, "%s", boundary);
    b.components = components;
    b.value[0] = x, b.value[1] = y, b.value[2] = z;
    if (kind == ELASTIC_BC_PRESSURE) b.pressure = x;
    return b;
}

/* A Problem (static storage: it is large) with one material on every cell. */
static inline Problem *elas_problem(ElasticModel model, ElasticMaterial *mat, int nbcs, ElasticBc *bcs) {
    static Problem pb;
    memset(&pb, 0, sizeof pb);
    snprintf(pb.path, sizeof pb.path, "test");
    pb.physics = PHYSICS_ELASTICITY;
    ElasticProblem *e = &pb.elasticity;
    e->present = 1;
    e->model = model;
    e->nmaterials = 1;
    e->materials = mat;
    e->nbcs = nbcs;
    e->bcs = bcs;
    return &pb;
}

static inline void elas_read_mesh(const char *name, double size, int order, int refine, Mesh *m) {
    MeshReadOptions mo = {.size = size, .order = order, .refine = refine};
    CHECK_OK(mesh_read(test_mesh(name), &mo, m));
}

typedef struct {
    int steps;          /* load steps (1: full load at once) */
    KspType ksp;        /* 0: CG when symmetric, else GMRES */
    double rtol, atol;  /* Newton (defaults 1e-11, 0) */
    double **src;       /* per cell block q-point sources, or NULL */
    const double *Taux; /* host temperature L-vector (scalar, nnodes) for a coupled model, or NULL */
    double *reaction;   /* host, ndofs: the unconstrained residual at the solution, or NULL */
    int verbose;
    /* results */
    NewtonResult last;    /* the last load step's Newton */
    NewtonResult step[8]; /* the first 8 load steps' */
    int newton_iterations, linear_iterations;
} ElasSolve;

/* Solves for u (host, ndofs; in: initial guess away from the constrained dofs; out: the solution). */
static inline int elas_solve(Device *d, const Space *sp, Model *md, double *u, ElasSolve *es) {
    Operator op;
    FEM_TRY(op_create(&op, d, sp, &md->phys, 0, md->cell_tags, md->facet_tags));
    int status = op_set_dirichlet(&op, md->ndir, md->dir_dofs);
    for (int b = 0; es->src && b < sp->ncell_blocks && !status; b++)
        status = op_set_source(&op, b, es->src[b]);
    Vec du = {0};
    double *dT = NULL;
    if (!status) status = vec_create(&du, d, sp->ndofs);
    if (!status && es->Taux) {
        status = device_alloc_copy(d, (void **)&dT, es->Taux, sizeof(double) * (size_t)sp->nnodes);
        op.aux = dT;
    }
    int steps = es->steps > 0 ? es->steps : 1;
    int nonlinear = elasticity_nonlinear(md);
    NewtonSettings ns = {.rtol = es->rtol > 0 ? es->rtol : 1e-11,
                         .atol = es->atol,
                         .max_iterations = 30,
                         .line_search = 1,
                         .linear = !nonlinear,
                         .pc = {.type = PC_JACOBI},
                         .ksp = {.type = es->ksp ? es->ksp : (md->symmetric ? KSP_CG : KSP_GMRES),
                                 .rtol = 1e-8,
                                 .atol = 0,
                                 .max_iterations = 50000,
                                 .restart = 100}};
    if (!nonlinear) ns.ksp.rtol = 1e-10;
    es->newton_iterations = es->linear_iterations = 0;
    Newton nw = {0};
    if (!status) status = newton_create(&nw, &op, &ns, NULL, NULL);
    for (int k = 1; k <= steps && !status; k++) {
        double L = (double)k / steps;
        elasticity_set_load(md, L);
        status = op_update_ctx(&op);
        for (int64_t i = 0; i < md->ndir; i++) u[md->dir_dofs[i]] = L * md->dir_values[i];
        if (!status) status = vec_upload(&du, u);
        if (!status) status = newton_solve(&nw, &du, NULL, &es->last);
        if (!status) status = vec_download(&du, u);
        if (k <= 8) es->step[k - 1] = es->last;
        es->newton_iterations += es->last.iterations;
        es->linear_iterations += es->last.linear_iterations;
        if (es->verbose && !status)
            printf("  load %.3f: Newton %d iterations (%s %d), |R| %.3e -> %.3e\n", L, es->last.iterations,
                   ksp_name(ns.ksp.type), es->last.linear_iterations, es->last.rnorm0, es->last.rnorm);
    }
    if (!status && es->reaction) {
        Vec r = {0};
        status = vec_create(&r, d, du.n);
        if (!status) status = op_residual_unconstrained(&op, &du, &r);
        if (!status) status = vec_download(&r, es->reaction);
        vec_destroy(&r);
    }
    newton_destroy(&nw);
    vec_destroy(&du);
    device_free(d, dT);
    op_destroy(&op);
    return status;
}

#endif
