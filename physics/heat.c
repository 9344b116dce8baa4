/* The heat model (see heat.h); the q-point physics is in heat_qf.h. */
#include "heat.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fem/evaluate.h"
#include "physics/qfunctions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the heat q-functions read and write (heat_qf.h): the temperature's value and gradient, and the
 * history term of the time discretisation as an auxiliary field. */
static const QFunction heat_cell_residual_qf = {
    QF_DESCRIBE(heat_cell_residual),
    .in = {{"T", QF_UNKNOWN, QF_VALUE | QF_GRAD}, {"T_history", QF_AUX, QF_VALUE}},
    .out = {"v", QF_UNKNOWN, QF_VALUE | QF_GRAD}};
/* The Jacobian's compact q-point data (heat_qf.h) is exact where the conductivity of every material is a
 * constant and no time derivative is discretised (its mass term would need w det J as well). The materials
 * are fixed once the model is created, so D, which holds k, stays valid; theta is applied from the constants.
 */
static int heat_qdata_valid(const void *vctx) {
    const HeatCtx *ctx = vctx;
    if (ctx->transient || ctx->a != 0.0) return 0;
    for (int i = 0; i < ctx->nmat; i++)
        if (ctx->mat[i].kind != HEAT_K_CONSTANT) return 0;
    return 1;
}
static const QfQdata heat_qdata = {QF_heat_cell_jacobian_qdata, QF_QDATA_SYM, heat_qdata_setup,
                                   heat_qdata_valid};
static const QFunction heat_cell_jacobian_qf = {
    QF_DESCRIBE(heat_cell_jacobian), .in = {{"dT", QF_UNKNOWN, QF_VALUE | QF_GRAD}},
    .out = {"v", QF_UNKNOWN, QF_VALUE | QF_GRAD}, .qdata = &heat_qdata};
static const QFunction heat_facet_residual_qf = {QF_DESCRIBE(heat_facet_residual),
                                                 .in = {{"T", QF_UNKNOWN, QF_VALUE}},
                                                 .out = {"v", QF_UNKNOWN, QF_VALUE}};
static const QFunction heat_facet_jacobian_qf = {QF_DESCRIBE(heat_facet_jacobian),
                                                 .in = {{"dT", QF_UNKNOWN, QF_VALUE}},
                                                 .out = {"v", QF_UNKNOWN, QF_VALUE}};

static void fill_material(HeatMaterial_ *hm, const HeatMaterial *pm, int dim) {
    memset(hm, 0, sizeof *hm);
    hm->kind = pm->k_kind == CONDUCTIVITY_POLYNOMIAL ? HEAT_K_POLYNOMIAL
               : pm->k_kind == CONDUCTIVITY_TABLE    ? HEAT_K_TABLE
                                                     : HEAT_K_CONSTANT;
    if (hm->kind == HEAT_K_CONSTANT) {
        hm->n = 1;
        hm->c[0] = pm->k;
    } else if (hm->kind == HEAT_K_POLYNOMIAL) {
        hm->n = pm->k_ncoef;
        memcpy(hm->c, pm->k_coef, sizeof(double) * pm->k_ncoef);
    } else {
        hm->n = pm->k_npoints;
        memcpy(hm->T, pm->k_T, sizeof(double) * pm->k_npoints);
        memcpy(hm->c, pm->k_val, sizeof(double) * pm->k_npoints);
    }
    hm->anisotropic = pm->anisotropic;
    if (pm->anisotropic) { /* xx yy zz xy yz xz, symmetric */
        const double *t = pm->k_tensor;
        double A[9] = {t[0], t[3], t[5], t[3], t[1], t[4], t[5], t[4], t[2]};
        memcpy(hm->A, A, sizeof A);
        if (dim == 2) hm->A[2] = hm->A[5] = hm->A[6] = hm->A[7] = hm->A[8] = 0.0;
    }
    hm->rhoc = pm->density * pm->specific_heat;
    hm->Q = pm->source;
}

/* Adds natural condition bc to the record r (a surface may both convect and radiate). */
static void add_condition(HeatBc_ *r, const HeatBc *bc) {
    if (bc->kind == HEAT_BC_FLUX) r->q += bc->value;
    if (bc->kind == HEAT_BC_CONVECTION) r->h += bc->h, r->hT += bc->h * bc->ambient;
    if (bc->kind == HEAT_BC_RADIATION) {
        double T2 = bc->ambient * bc->ambient;
        r->e += bc->emissivity;
        r->eT4 += bc->emissivity * T2 * T2;
    }
}

/* One record per distinct set of natural conditions acting on a facet (model_natural_sets), summed. */
static int natural_conditions(const Problem *pb, const Space *sp, Model *md, HeatCtx *ctx) {
    const HeatProblem *hp = &pb->heat;
    const char *names[HEAT_MAX_BCS];
    int lines[HEAT_MAX_BCS];
    uint64_t sets[HEAT_MAX_BCS];
    for (int i = 0; i < hp->nbcs; i++) {
        names[i] = hp->bcs[i].kind == HEAT_BC_TEMPERATURE ? NULL : hp->bcs[i].boundary;
        lines[i] = hp->bcs[i].at.line;
    }
    FEM_TRY(model_natural_sets(md, pb, sp->mesh, hp->nbcs, names, lines, HEAT_MAX_BCS, sets, &ctx->nbc));
    for (int k = 0; k < ctx->nbc; k++) {
        HeatBc_ *r = &ctx->bc[k];
        memset(r, 0, sizeof *r);
        for (int i = 0; i < hp->nbcs; i++)
            if (sets[k] >> i & 1) add_condition(r, &hp->bcs[i]);
    }
    return FEM_OK;
}

/* A steady problem whose boundary conditions are all heat fluxes determines the temperature only up to a
 * constant (and has no solution unless the fluxes balance the sources): refuse it before solving. */
int heat_check_level(const Problem *pb, const Model *md) {
    const HeatCtx *ctx = md->ctx;
    int64_t ndir;
    FEM_TRY(model_count_dirichlet(md, &ndir)); /* (collective over MPI ranks: before any return) */
    if (pb->time.scheme != TIME_STEADY || ndir > 0) return FEM_OK;
    for (int k = 0; k < ctx->nbc; k++)
        if (ctx->bc[k].h > 0 || ctx->bc[k].e > 0) return FEM_OK;
    return fem_fail(
        FEM_ERR_INPUT,
        "%s: the steady heat problem has nothing that fixes the temperature level (no <temperature>, "
        "<convection> or <radiation> boundary with a positive coefficient), so its temperature is "
        "determined only up to a constant; add one",
        pb->path);
}

/* Heat's integrand on affine simplices with constant conductivity: k grad T . grad v (degree 2p - 2), the
 * source Q v (p), in time the capacity rho c T v (2p); on facets h T v (2p) or q v (p). Radiation and k(T)
 * are not polynomial. */
static int heat_exact_degree(const void *vctx, int p, int facet) {
    const HeatCtx *ctx = vctx;
    int convection = 0;
    for (int k = 0; k < ctx->nbc; k++) {
        if (ctx->bc[k].e != 0.0) return 0;
        convection |= ctx->bc[k].h != 0.0;
    }
    for (int i = 0; i < ctx->nmat; i++)
        if (ctx->mat[i].kind != HEAT_K_CONSTANT) return 0;
    if (facet) return convection ? 2 * p : p;
    return ctx->transient ? 2 * p : (2 * p - 2 > p ? 2 * p - 2 : p);
}

int heat_model_create(const Problem *pb, const Space *sp, Model *md) {
    memset(md, 0, sizeof *md);
    const HeatProblem *hp = &pb->heat;
    const Mesh *m = sp->mesh;
    if (hp->nmaterials > HEAT_MAX_MATERIALS || hp->nbcs > HEAT_MAX_BCS)
        return fem_fail(FEM_ERR_INPUT, "%s: at most %d heat materials and %d boundary conditions", pb->path,
                        HEAT_MAX_MATERIALS, HEAT_MAX_BCS);
    HeatCtx *ctx;
    FEM_ALLOC(ctx, 1, "the heat model");
    md->ctx = ctx;
    md->name = "heat";
    md->ncomp = 1;
    ctx->dim = m->dim;
    ctx->nmat = hp->nmaterials;
    ctx->theta = 1.0;
    ctx->transient = pb->time.scheme != TIME_STEADY;
    md->symmetric = 1;
    const char *names[HEAT_MAX_MATERIALS];
    int lines[HEAT_MAX_MATERIALS];
    for (int i = 0; i < hp->nmaterials; i++) {
        fill_material(&ctx->mat[i], &hp->materials[i], m->dim);
        md->symmetric &= ctx->mat[i].kind == HEAT_K_CONSTANT;
        names[i] = hp->materials[i].region;
        lines[i] = hp->materials[i].at.line;
    }
    int status = model_cell_tags(pb, m, hp->nmaterials, names, lines, md->cell_tags);
    md->nregions = hp->nmaterials;
    for (int i = 0; i < hp->nmaterials; i++) md->region_names[i] = names[i];
    if (!status) status = natural_conditions(pb, sp, md, ctx);
    md->linear = md->symmetric;
    for (int k = 0; k < ctx->nbc; k++) md->linear &= ctx->bc[k].e == 0.0; /* radiation is nonlinear */
    for (int i = 0; i < hp->nbcs && !status; i++) {
        const HeatBc *bc = &hp->bcs[i];
        if (bc->kind != HEAT_BC_TEMPERATURE) continue;
        const PhysicalGroup *g;
        status = model_boundary(pb, m, bc->boundary, bc->at.line, &g);
        if (!status) status = model_add_dirichlet(md, sp, g, 1, &bc->value);
    }
    if (!status) status = model_finish_dirichlet(md);
    md->phys = (OpPhysics){
        .ncomp = 1,
        .nstate = 1 + m->dim,
        .nfstate = 1,
        .cell_residual = heat_cell_residual_qf,
        .cell_jacobian = heat_cell_jacobian_qf,
        .facet_residual = heat_facet_residual_qf,
        .facet_jacobian = heat_facet_jacobian_qf,
        .exact_degree = heat_exact_degree,
        .ctx = ctx,
        .ctx_bytes = sizeof *ctx,
    };
    if (status) model_destroy(md);
    return status;
}

void heat_set_time(Model *md, double a, double theta) {
    HeatCtx *ctx = md->ctx;
    ctx->a = a;
    ctx->theta = theta;
}

/* What the heat output q-functions read: the temperature and its gradient. */
static OutputFn heat_output(int id, const char *name, int nout, const HeatCtx *ctx) {
    QFunction q = {.id = id,
                   .name = name,
                   .in = {{"T", QF_UNKNOWN, QF_VALUE | QF_GRAD}},
                   .out = {"out", QF_UNKNOWN, QF_VALUE}};
    return (OutputFn){q, nout, ctx, sizeof *ctx};
}

int heat_flux_nodes(const Model *md, const Space *sp, const Vec *T, double *out) {
    EvalField f = {sp, T, NULL, md->cell_tags, 0, &md->phys, md->dist};
    OutputFn fn = heat_output(QF_heat_flux_out, "heat_flux_out", 3, md->ctx);
    return eval_nodal(&f, &fn, 1, out);
}

/* Heat into the body through a Dirichlet boundary: the reactions of its nodes (a node shared by two Dirichlet
 * groups counts for the first). */
static int dirichlet_flow(const Space *sp, const PhysicalGroup *g, const double *reaction, char *claimed,
                          double *watts) {
    fem_idx *nodes;
    int64_t n;
    FEM_TRY(space_group_nodes(sp, g, &nodes, &n));
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++) /* (on a rank's part, the nodes it owns) */
        if (!claimed[nodes[k]] && reaction && nodes[k] < sp->nnodes_owned)
            claimed[nodes[k]] = 1, sum += reaction[nodes[k]];
    free(nodes);
    *watts = sum;
    return FEM_OK;
}

/* Heat into the body through a natural condition: its flow integrated over its boundary, on the device. */
static int natural_flow(const Model *md, const Problem *pb, const Space *sp, const Vec *T, const HeatBc *bc,
                        const PhysicalGroup *g, double *watts) {
    HeatCtx *one;
    FEM_ALLOC(one, 1, "the context of one heat condition");
    *one = *(const HeatCtx *)md->ctx; /* record 0: this condition alone (the facets' tags are 0 here) */
    memset(&one->bc[0], 0, sizeof one->bc[0]);
    add_condition(&one->bc[0], bc);
    EvalField f = {sp, T, NULL, NULL, pb->quadrature_degree, &md->phys, md->dist};
    OutputFn fn = heat_output(QF_heat_flow_out, "heat_flow_out", 1, one);
    int status = eval_facets(&f, &fn, g, watts);
    free(one);
    return status;
}

const char *heat_bc_kind(int kind) {
    static const char *kinds[] = {"", "temperature", "flux", "convection", "radiation"};
    return kind >= 0 && kind < 5 ? kinds[kind] : "";
}

int heat_energy(const Model *md, const Space *sp, const Vec *T, int qdegree, double *E) {
    EvalField f = {sp, T, NULL, md->cell_tags, qdegree, &md->phys, md->dist};
    OutputFn fn = heat_output(QF_heat_energy_out, "heat_energy_out", 1, md->ctx);
    return eval_cells(&f, &fn, NULL, E);
}

int heat_balance(const Model *md, const Problem *pb, const Space *sp, const Vec *T, const double *reaction,
                 HeatFlow *flows, double *source) {
    const HeatProblem *hp = &pb->heat;
    char *claimed;
    FEM_ALLOC(claimed, sp->nnodes + 1, "the nodes of the heat balance");
    int status = FEM_OK;
    for (int i = 0; i < hp->nbcs && !status; i++) {
        const HeatBc *bc = &hp->bcs[i];
        HeatFlow *fl = &flows[i];
        snprintf(fl->boundary, sizeof fl->boundary, "%s", bc->boundary);
        fl->kind = heat_bc_kind(bc->kind);
        const PhysicalGroup *g;
        status = model_boundary(pb, sp->mesh, bc->boundary, bc->at.line, &g);
        if (!status)
            status = bc->kind == HEAT_BC_TEMPERATURE ? dirichlet_flow(sp, g, reaction, claimed, &fl->watts)
                                                     : natural_flow(md, pb, sp, T, bc, g, &fl->watts);
    }
    free(claimed);
    if (md->dist) { /* the fixed temperatures' flows, summed over the ranks (eval_facets summed the rest) */
        double *sum = calloc((size_t)hp->nbcs + 1, sizeof *sum);
        if (!status && !sum) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        status = comm_agree(status);
        for (int i = 0; i < hp->nbcs && !status; i++)
            if (hp->bcs[i].kind == HEAT_BC_TEMPERATURE) sum[i] = flows[i].watts;
        if (!status) status = comm_sum(sum, hp->nbcs);
        for (int i = 0; i < hp->nbcs && !status; i++)
            if (hp->bcs[i].kind == HEAT_BC_TEMPERATURE) flows[i].watts = sum[i];
        free(sum);
    }
    EvalField f = {sp, T, NULL, md->cell_tags, pb->quadrature_degree, &md->phys, md->dist};
    OutputFn fn = heat_output(QF_heat_source_out, "heat_source_out", 1, md->ctx);
    if (!status && source) status = eval_cells(&f, &fn, NULL, source);
    return status;
}
