/* Reaction-diffusion (reaction_diffusion.h): the model from the table-read <reaction-diffusion> section, and
 * the hooks a run calls (physics.h). */
#include "fem/error.h"
#include "physics/physics.h"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)RD_NAME_MAX == (int)PROBLEM_NAME_MAX,
               "the format table stores names of PROBLEM_NAME_MAX bytes");

static const QFunction rd_cell_qf = {QF_DESCRIBE(rd_cell), .in = {{"u", QF_UNKNOWN, QF_VALUE | QF_GRAD}},
                                     .out = {"v", QF_UNKNOWN, QF_VALUE | QF_GRAD}};

static const ProblemSection *section(const Problem *pb) {
    return problem_section(pb, "reaction-diffusion");
}

/* Each region's material, then the prescribed values. */
static int rd_regions_and_values(const Problem *pb, const Space *sp, Model *md, ReactionCtx *ctx) {
    int nval;
    const SourceLine *mat_at, *val_at;
    const ReactionMaterial *mats = problem_records(section(pb), "material", &ctx->nmat, &mat_at);
    const ReactionValue *vals = problem_records(section(pb), "value", &nval, &val_at);
    if (ctx->nmat > RD_MAX_MATERIALS)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: at most %d reaction-diffusion materials", pb->path,
                        mat_at[RD_MAX_MATERIALS].line, RD_MAX_MATERIALS);
    const char *names[RD_MAX_MATERIALS];
    int lines[RD_MAX_MATERIALS];
    for (int i = 0; i < ctx->nmat; i++) {
        ctx->mat[i] = mats[i];
        names[i] = ctx->mat[i].region;
        lines[i] = mat_at[i].line;
        md->region_names[i] = mats[i].region;
    }
    md->nregions = ctx->nmat;
    FEM_TRY(model_cell_tags(pb, sp->mesh, ctx->nmat, names, lines, md->cell_tags));
    for (int i = 0; i < nval; i++) {
        const PhysicalGroup *g;
        FEM_TRY(model_boundary(pb, sp->mesh, vals[i].boundary, val_at[i].line, &g));
        FEM_TRY(model_add_dirichlet(md, sp, g, 1, &vals[i].value));
    }
    return model_finish_dirichlet(md);
}

static int rd_create(const Problem *pb, const Space *sp, Model *md) {
    memset(md, 0, sizeof *md);
    ReactionCtx *ctx;
    FEM_ALLOC(ctx, 1, "the reaction-diffusion model");
    md->ctx = ctx;
    md->name = "reaction-diffusion";
    md->ncomp = 1;
    md->symmetric = md->linear = 1;
    int status = rd_regions_and_values(pb, sp, md, ctx);
    md->phys = (OpPhysics){.ncomp = 1,
                           .cell_residual = rd_cell_qf,
                           .cell_jacobian = rd_cell_qf,
                           .ctx = ctx,
                           .ctx_bytes = sizeof *ctx};
    if (status) model_destroy(md);
    return status;
}

/* Without a prescribed value, u is determined only where something consumes it: a reaction somewhere. */
static int rd_check(const Problem *pb, const Space *sp, const Model *md) {
    (void)sp;
    const ReactionCtx *ctx = md->ctx;
    int64_t ndir;
    FEM_TRY(model_count_dirichlet(md, &ndir)); /* (collective over MPI ranks: before any return) */
    if (ndir > 0) return FEM_OK;
    for (int i = 0; i < ctx->nmat; i++)
        if (ctx->mat[i].reaction > 0) return FEM_OK;
    return fem_fail(
        FEM_ERR_INPUT,
        "%s:%d: the reaction-diffusion problem has no <value> boundary and no positive reaction, so u "
        "is determined only up to a constant; add one",
        pb->path, section(pb)->at.line);
}

static const char *rd_reads(const Problem *pb) {
    (void)pb;
    return NULL;
}

static int rd_transient(const Problem *pb) {
    (void)pb;
    return 0;
}

static void rd_describe(const Problem *pb, const Model *md, char *buf, size_t len) {
    (void)pb, (void)md;
    snprintf(buf, len, "steady, linear");
}

static double rd_initial(const Problem *pb) {
    (void)pb;
    return 0.0;
}

static int rd_fields(const PhysicsState *s, NodalField *out, int *n) {
    (void)s, (void)out;
    *n = 0;
    return FEM_OK;
}

static int rd_summary(const PhysicsState *s, const Report *rep) {
    DistExtremes e;
    FEM_TRY(dist_node_extremes(s->md->dist, s->sp, s->u_host, 1, &e));
    double umin = e.value[0], umax = e.value[1];
    rep->key(rep->ctx, "u_min", umin, "");
    rep->key(rep->ctx, "u_max", umax, "");
    report_line(rep, "  u: min %.6g, max %.6g\n", umin, umax);
    return FEM_OK;
}

const PhysicsType reaction_diffusion_type = {
    .name = "reaction-diffusion",
    .field = "u",
    .unit = "",
    .components = NULL,
    .reads = rd_reads,
    .transient = rd_transient,
    .create = rd_create,
    .check = rd_check,
    .describe = rd_describe,
    .initial = rd_initial,
    .set_load = NULL,
    .set_time = NULL,
    .fields = rd_fields,
    .summary = rd_summary,
};
