/* The elasticity model (see elasticity.h); the q-point physics is in elasticity_qf.h. */
#include "elasticity.h"

#include "physics/qfunctions.h"
#include "fem/comm.h"
#include "fem/dense.h"
#include "fem/error.h"
#include "fem/evaluate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the elasticity q-functions read and write (elasticity_qf.h). Cells read the displacement's
 * gradient (and, coupled to a heat solution, the temperature as an auxiliary field) and write the stress
 * against test gradients, the residuals also gravity against test values (writes: the Jacobians' s is zero);
 * the follower pressure of the neo-Hookean model reads the displacement's gradient along the facet too. */
#define ELAS_CELL_QF(fn, input, writes)                                                                      \
    {                                                                                                        \
        QF_DESCRIBE(fn), .in = {{input, QF_UNKNOWN, QF_VALUE | QF_GRAD}}, .out = { "v", QF_UNKNOWN, writes } \
    }
#define ELAS_FACET_QF(fn, input, eval)                                                                       \
    {                                                                                                        \
        QF_DESCRIBE(fn), .in = {{input, QF_UNKNOWN, eval}}, .out = { "v", QF_UNKNOWN, QF_VALUE }             \
    }
static const QFunction elas_qfunctions[2][4] = {
    {ELAS_CELL_QF(elas_linear_residual, "u", QF_VALUE | QF_GRAD),
     ELAS_CELL_QF(elas_linear_jacobian, "du", QF_GRAD),
     ELAS_FACET_QF(elas_linear_facet_residual, "u", QF_VALUE),
     {QF_DESCRIBE(elas_zero_facet_jacobian), .in = {{"du", QF_UNKNOWN, QF_VALUE}},
      .out = {"v", QF_UNKNOWN, QF_VALUE}, .zero = 1}},
    {ELAS_CELL_QF(elas_nh_residual, "u", QF_VALUE | QF_GRAD), ELAS_CELL_QF(elas_nh_jacobian, "du", QF_GRAD),
     ELAS_FACET_QF(elas_nh_facet_residual, "u", QF_VALUE | QF_GRAD),
     ELAS_FACET_QF(elas_nh_facet_jacobian, "du", QF_VALUE | QF_GRAD)},
};

static void fill_material(ElasMaterial_ *em, const ElasticMaterial *pm) {
    memset(em, 0, sizeof *em);
    double lam = pm->lambda, mu = pm->mu;
    em->lambda = lam;
    em->mu = mu;
    em->beta3 = 3.0 * lam + 2.0 * mu;
    /* plane stress: sigma_zz = 0 eliminates eps_zz (see elasticity_qf.h) */
    em->lambda_eff = 2.0 * lam * mu / (lam + 2.0 * mu);
    em->beta_eff = 2.0 * mu * em->beta3 / (lam + 2.0 * mu);
    em->rho = pm->density;
    em->alpha = pm->expansion;
    em->Tref = pm->reference_temperature;
}

static int is_dirichlet(ElasticBcKind k) {
    return k == ELASTIC_BC_FIXED || k == ELASTIC_BC_DISPLACEMENT;
}

/* facet_tags: one record per distinct set of tractions and pressures acting on a facet */
/* One record per distinct set of tractions and pressures acting on a facet (model_natural_sets), summed. */
static int natural_conditions(const Problem *pb, const Space *sp, Model *md, ElasCtx *ctx) {
    const ElasticProblem *ep = &pb->elasticity;
    const char *names[ELAS_MAX_BCS];
    int lines[ELAS_MAX_BCS];
    uint64_t sets[ELAS_MAX_BCS];
    for (int i = 0; i < ep->nbcs; i++) {
        names[i] = is_dirichlet(ep->bcs[i].kind) ? NULL : ep->bcs[i].boundary;
        lines[i] = ep->bcs[i].at.line;
    }
    FEM_TRY(model_natural_sets(md, pb, sp->mesh, ep->nbcs, names, lines, ELAS_MAX_BCS, sets, &ctx->nbc));
    for (int k = 0; k < ctx->nbc; k++) {
        ElasBc_ *r = &ctx->bc[k];
        memset(r, 0, sizeof *r);
        for (int i = 0; i < ep->nbcs; i++) {
            if (!(sets[k] >> i & 1)) continue;
            const ElasticBc *bc = &ep->bcs[i];
            if (bc->kind == ELASTIC_BC_TRACTION)
                for (int p = 0; p < 3; p++) r->t[p] += bc->value[p];
            if (bc->kind == ELASTIC_BC_PRESSURE) r->p += bc->pressure;
        }
    }
    return FEM_OK;
}

static int dirichlet_conditions(const Problem *pb, const Space *sp, Model *md) {
    const ElasticProblem *ep = &pb->elasticity;
    const Mesh *m = sp->mesh;
    int all = (1 << m->dim) - 1;
    for (int i = 0; i < ep->nbcs; i++) {
        const ElasticBc *bc = &ep->bcs[i];
        if (!is_dirichlet(bc->kind)) continue;
        int mask = bc->components & all;
        if (!mask)
            return fem_fail(FEM_ERR_INPUT,
                            "%s:%d: <%s> on boundary '%s' prescribes only z, which a 2D mesh does not have; "
                            "expected x or y",
                            pb->path, bc->at.line, bc->kind == ELASTIC_BC_FIXED ? "fixed" : "displacement",
                            bc->boundary);
        const PhysicalGroup *g;
        FEM_TRY(model_boundary(pb, m, bc->boundary, bc->at.line, &g));
        double zero[3] = {0, 0, 0};
        FEM_TRY(model_add_dirichlet(md, sp, g, mask, bc->kind == ELASTIC_BC_FIXED ? zero : bc->value));
    }
    return model_finish_dirichlet(md);
}

/* What the mesh's dimension cannot carry: a z load or z gravity on a 2D mesh would be dropped without a word,
 * and plane strain or stress means nothing on a 3D mesh. */
static int check_dimension(const Problem *pb, const Mesh *m) {
    const ElasticProblem *ep = &pb->elasticity;
    if (m->dim == 3 && ep->plane_at.line)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: plane=\"%s\" on <elasticity> applies to 2D meshes, and the mesh '%s' is 3D; "
                        "expected no plane attribute with a 3D mesh",
                        pb->path, ep->plane_at.line, ep->plane == PLANE_STRESS ? "stress" : "strain",
                        m->path);
    if (m->dim != 2) return FEM_OK;
    for (int i = 0; i < ep->nbcs; i++) {
        const ElasticBc *bc = &ep->bcs[i];
        int z =
            bc->kind == ELASTIC_BC_TRACTION || (bc->kind == ELASTIC_BC_DISPLACEMENT && (bc->components & 4));
        if (z && bc->value[2] != 0.0)
            return fem_fail(
                FEM_ERR_INPUT,
                "%s:%d: <%s> on boundary '%s' has z = %g %s, but the mesh '%s' is 2D and has no z "
                "direction; expected x and y only",
                pb->path, bc->at.line, bc->kind == ELASTIC_BC_TRACTION ? "traction" : "displacement",
                bc->boundary, bc->value[2], bc->kind == ELASTIC_BC_TRACTION ? "Pa" : "m", m->path);
    }
    if (ep->gravity[2] != 0.0)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: <gravity> has z = %g m/s^2, but the mesh '%s' is 2D and has no z direction; "
                        "expected x and y only",
                        pb->path, ep->gravity_at.line, ep->gravity[2], m->path);
    return FEM_OK;
}

/* Rigid-body motion m (3D: translations x, y, z, rotations about x, y, z; 2D: x, y and the rotation about z)
 * at the point x (relative to the body's centre, in units of its size), component c. */
static double rigid_mode(int dim, int m, const double *x, int c) {
    if (m < dim) return m == c ? 1.0 : 0.0;
    int axis = dim == 2 ? 2 : m - 3; /* rotation about `axis`: omega x x */
    double w[3] = {0, 0, 0}, v[3];
    w[axis] = 1.0;
    v[0] = w[1] * x[2] - w[2] * x[1];
    v[1] = w[2] * x[0] - w[0] * x[2];
    v[2] = w[0] * x[1] - w[1] * x[0];
    return v[c];
}

/* Elasticity with supports that leave a rigid-body motion free has no unique solution (a singular Jacobian:
 * Krylov drifts, Newton cuts the load back forever): refuse it before solving. The motions the constrained
 * dofs do not stop are the null space of C^T C, C[dof][mode] the modes' values on the constrained dofs. */
int elasticity_check_supports(const Problem *pb, const Space *sp, const Model *md) {
    static const char *names[6] = {"translation along x",       "translation along y",
                                   "translation along z",       "rotation about the x axis",
                                   "rotation about the y axis", "rotation about the z axis"};
    int dim = sp->mesh->dim, nm = dim == 2 ? 3 : 6, nc = sp->ncomp;
    double lo[3], hi[3], size = 0.0, M[36] = {0}, V[36];
    int64_t ndir;
    /* over MPI ranks (a model on a rank's part): the whole body's box, the ranks' owned dofs summed */
    FEM_TRY(dist_bounding_box(md->dist, sp->mesh, lo, hi));
    FEM_TRY(model_count_dirichlet(md, &ndir));
    for (int c = 0; c < 3; c++) size = fmax(size, hi[c] - lo[c]);
    for (int64_t i = 0; i < md->ndir; i++) {
        if (md->dist && md->dir_dofs[i] >= sp->ndofs_owned) continue;
        int64_t node = md->dir_dofs[i] / nc;
        int c = (int)(md->dir_dofs[i] % nc);
        double x[3], v[6];
        for (int k = 0; k < 3; k++)
            x[k] = (sp->node_x[3 * node + k] - 0.5 * (lo[k] + hi[k])) / fmax(size, 1e-300);
        for (int m = 0; m < nm; m++) v[m] = rigid_mode(dim, m, x, c);
        for (int m = 0; m < nm; m++)
            for (int l = 0; l < nm; l++) M[m * nm + l] += v[m] * v[l];
    }
    if (md->dist) FEM_TRY(comm_sum(M, nm * nm));
    dense_symmetric_eigen(nm, M, V);
    double top = 0.0;
    for (int m = 0; m < nm; m++) top = fmax(top, M[m * nm + m]);
    char free_modes[256] = "";
    for (int m = 0; m < nm; m++) {
        if (M[m * nm + m] > 1e-10 * top && top > 0) continue;
        int big = 0; /* the rigid motion that dominates this free combination */
        for (int l = 1; l < nm; l++)
            if (fabs(V[l * nm + m]) > fabs(V[big * nm + m])) big = l;
        int idx = dim == 2 && big == 2 ? 5 : big;
        size_t len = strlen(free_modes);
        snprintf(free_modes + len, sizeof free_modes - len, "%s%s", len ? ", " : "", names[idx]);
    }
    if (!free_modes[0]) return FEM_OK;
    if (ndir == 0)
        return fem_fail(
            FEM_ERR_INPUT,
            "%s: the elastic body has no support (no <fixed> or <displacement> boundary), so nothing "
            "holds it in place and its displacement is not determined; add a support",
            pb->path);
    return fem_fail(FEM_ERR_INPUT,
                    "%s: the supports leave the elastic body free to move (%s), so its displacement is not "
                    "determined; constrain more components or add a support",
                    pb->path, free_modes);
}

/* Linear elasticity's integrand on affine simplices with constant materials: sigma(u) : grad v (degree 2p -
 * 2), the body force rho g . v (p), a thermal stress from a temperature field of order p (2p - 1); on facets
 * tractions and pressures t . v (p). The neo-Hookean model is not polynomial. */
static int elas_exact_degree(const void *vctx, int p, int facet) {
    const ElasCtx *ctx = vctx;
    if (ctx->model != ELAS_LINEAR) return 0;
    if (facet) return p;
    if (ctx->temp_mode == ELAS_TEMP_FIELD) return 2 * p - 1;
    return 2 * p - 2 > p ? 2 * p - 2 : p;
}

int elasticity_model_create(const Problem *pb, const Space *sp, Model *md) {
    memset(md, 0, sizeof *md);
    const ElasticProblem *ep = &pb->elasticity;
    const Mesh *m = sp->mesh;
    if (m->dim != 2 && m->dim != 3)
        return fem_fail(FEM_ERR_INPUT, "%s: elasticity needs a 2D or 3D mesh; '%s' is %dD", pb->path, m->path,
                        m->dim);
    FEM_TRY(check_dimension(pb, m));
    if (sp->ncomp != m->dim)
        return fem_fail(FEM_ERR_INTERNAL, "elasticity needs a space with %d components, not %d", m->dim,
                        sp->ncomp);
    if (ep->nmaterials > ELAS_MAX_MATERIALS || ep->nbcs > ELAS_MAX_BCS)
        return fem_fail(FEM_ERR_INPUT, "%s: at most %d elastic materials and %d boundary conditions",
                        pb->path, ELAS_MAX_MATERIALS, ELAS_MAX_BCS);
    ElasCtx *ctx;
    FEM_ALLOC(ctx, 1, "the elasticity model");
    md->ctx = ctx;
    md->name = "elasticity";
    md->ncomp = m->dim;
    ctx->dim = m->dim;
    ctx->model = ep->model == ELASTIC_NEO_HOOKEAN ? ELAS_NEO_HOOKEAN : ELAS_LINEAR;
    ctx->plane_stress = m->dim == 2 && ep->plane == PLANE_STRESS;
    ctx->temp_mode = ep->coupled_temperature ? ELAS_TEMP_FIELD
                     : ep->has_temperature   ? ELAS_TEMP_UNIFORM
                                             : ELAS_TEMP_NONE;
    ctx->temperature = ep->temperature;
    ctx->load = 1.0;
    for (int p = 0; p < m->dim; p++) ctx->gravity[p] = ep->gravity[p];
    ctx->nmat = ep->nmaterials;
    const char *names[ELAS_MAX_MATERIALS];
    int lines[ELAS_MAX_MATERIALS];
    for (int i = 0; i < ep->nmaterials; i++) {
        fill_material(&ctx->mat[i], &ep->materials[i]);
        names[i] = ep->materials[i].region;
        lines[i] = ep->materials[i].at.line;
    }
    int status = model_cell_tags(pb, m, ep->nmaterials, names, lines, md->cell_tags);
    md->nregions = ep->nmaterials;
    for (int i = 0; i < ep->nmaterials; i++) md->region_names[i] = names[i];
    if (!status) status = natural_conditions(pb, sp, md, ctx);
    if (!status) status = dirichlet_conditions(pb, sp, md);
    int nh = ctx->model == ELAS_NEO_HOOKEAN, pressure = 0;
    for (int i = 0; i < ep->nbcs; i++) pressure |= ep->bcs[i].kind == ELASTIC_BC_PRESSURE;
    /* the follower load's linearisation is unsymmetric; everything else is symmetric */
    md->symmetric = !(nh && pressure);
    md->linear = !nh;
    const QFunction *qf = elas_qfunctions[nh];
    md->phys = (OpPhysics){
        .ncomp = m->dim,
        .nstate = nh ? ELAS_NH_STATE : 0,
        .nfstate = nh ? ELAS_NH_FSTATE : 0,
        .cell_residual = qf[0],
        .cell_jacobian = qf[1],
        .facet_residual = qf[2],
        .facet_jacobian = qf[3],
        .ctx = ctx,
        .ctx_bytes = sizeof *ctx,
        .exact_degree = elas_exact_degree,
    };
    if (ctx->temp_mode == ELAS_TEMP_FIELD) /* thermal strain from a solved temperature field */
        md->phys.cell_residual.in[1] = md->phys.cell_jacobian.in[1] = (QfField){"T", QF_AUX, QF_VALUE};
    if (status) model_destroy(md);
    return status;
}

void elasticity_set_load(Model *md, double factor) {
    ((ElasCtx *)md->ctx)->load = factor;
}

double elasticity_load(const Model *md) {
    return ((const ElasCtx *)md->ctx)->load;
}

int elasticity_nonlinear(const Model *md) {
    return ((const ElasCtx *)md->ctx)->model == ELAS_NEO_HOOKEAN;
}

/* ---- derived results: the output q-functions of elasticity_qf.h on the device that solved (fem/evaluate.h)
 */

/* What the elasticity output q-functions read: the displacement, its gradient, and a coupled model's
 * temperature field. */
static OutputFn elas_output(int id, const char *name, int nout, const ElasCtx *ctx) {
    QFunction q = {.id = id,
                   .name = name,
                   .in = {{"u", QF_UNKNOWN, QF_VALUE | QF_GRAD}},
                   .out = {"out", QF_UNKNOWN, QF_VALUE}};
    if (ctx->temp_mode == ELAS_TEMP_FIELD) q.in[1] = (QfField){"T", QF_AUX, QF_VALUE};
    return (OutputFn){q, nout, ctx, sizeof *ctx};
}

static int check_temperature(const Model *md, const double *T) {
    if (((const ElasCtx *)md->ctx)->temp_mode == ELAS_TEMP_FIELD && !T)
        return fem_fail(FEM_ERR_INTERNAL,
                        "the elasticity model reads a temperature field, and none was given");
    return FEM_OK;
}

int elasticity_stress_nodes(const Model *md, const Space *sp, const Vec *u, const double *T, double *stress,
                            double *von_mises, double *energy, double *gradient) {
    FEM_TRY(check_temperature(md, T));
    double *all;
    FEM_ALLOC(all, 8 * (sp->nnodes + 1), "nodal stresses");
    EvalField f = {sp, u, T, md->cell_tags, 0, &md->phys, md->dist};
    OutputFn fns[2] = {
        elas_output(QF_elas_stress_out, "elas_stress_out", 8, md->ctx),
        {{QF_DESCRIBE(elas_gradient_out), .in = {{"u", QF_UNKNOWN, QF_VALUE | QF_GRAD}}}, 1, NULL, 0}};
    double *out[2] = {all, gradient};
    int status = eval_nodal_many(&f, gradient ? 2 : 1, fns, 1, out);
    for (int64_t n = 0; n < sp->nnodes && !status; n++) {
        for (int k = 0; k < 6; k++) stress[n * 6 + k] = all[n * 8 + k];
        if (von_mises) von_mises[n] = all[n * 8 + 6];
        if (energy) energy[n] = all[n * 8 + 7];
    }
    free(all);
    return status;
}

int elasticity_strain_energy(const Model *md, const Space *sp, const Vec *u, const double *T,
                             double *energy) {
    FEM_TRY(check_temperature(md, T));
    EvalField f = {sp, u, T, md->cell_tags, 0, &md->phys, md->dist};
    OutputFn fn = elas_output(QF_elas_energy_out, "elas_energy_out", 1, md->ctx);
    return eval_cells(&f, &fn, NULL, energy);
}

/* The reaction of a support: the reactions of its constrained dofs (a dof shared by two supports counts for
 * the first). */
static int support_force(const Space *sp, const ElasticBc *bc, const PhysicalGroup *g, const double *reaction,
                         char *claimed, double *force) {
    int nc = sp->ncomp;
    fem_idx *nodes;
    int64_t n;
    FEM_TRY(space_group_nodes(sp, g, &nodes, &n));
    for (int64_t k = 0; k < n; k++)
        for (int c = 0; c < nc; c++) {
            int64_t dof = (int64_t)nodes[k] * nc + c;
            if (!(bc->components >> c & 1) || claimed[dof] || nodes[k] >= sp->nnodes_owned) continue;
            claimed[dof] = 1;
            force[c] += reaction[dof];
        }
    free(nodes);
    return FEM_OK;
}

/* The load a traction or pressure applies, integrated over its boundary on the device. */
static int applied_force(const Model *md, const Space *sp, const Vec *u, const ElasticBc *bc,
                         const PhysicalGroup *g, double *force) {
    ElasCtx *one;
    FEM_ALLOC(one, 1, "the context of one elastic condition");
    *one = *(const ElasCtx *)md->ctx; /* record 0: this condition alone (the facets' tags are 0 here) */
    memset(&one->bc[0], 0, sizeof one->bc[0]);
    if (bc->kind == ELASTIC_BC_TRACTION)
        for (int k = 0; k < 3; k++) one->bc[0].t[k] = bc->value[k];
    else
        one->bc[0].p = bc->pressure;
    EvalField f = {sp, u, NULL, NULL, 0, &md->phys, md->dist};
    OutputFn fn = elas_output(QF_elas_load_out, "elas_load_out", 3, one);
    fn.qf.in[1] = (QfField){0};
    int status = eval_facets(&f, &fn, g, force);
    free(one);
    return status;
}

int elasticity_reactions(const Model *md, const Problem *pb, const Space *sp, const Vec *u,
                         const double *reaction, ElasticForce *forces, double body[3]) {
    const ElasticProblem *ep = &pb->elasticity;
    char *claimed;
    FEM_ALLOC(claimed, sp->ndofs + 1, "the dofs of the reactions");
    int status = FEM_OK;
    static const char *kinds[] = {"", "fixed", "displacement", "traction", "pressure"};
    for (int i = 0; i < ep->nbcs && !status; i++) {
        const ElasticBc *bc = &ep->bcs[i];
        ElasticForce *f = &forces[i];
        memset(f, 0, sizeof *f);
        snprintf(f->boundary, sizeof f->boundary, "%s", bc->boundary);
        f->kind = kinds[bc->kind];
        const PhysicalGroup *g;
        status = model_boundary(pb, sp->mesh, bc->boundary, bc->at.line, &g);
        if (!status)
            status = is_dirichlet(bc->kind) ? support_force(sp, bc, g, reaction, claimed, f->force)
                                            : applied_force(md, sp, u, bc, g, f->force);
    }
    free(claimed);
    if (md->dist) { /* the supports' reactions, summed over the ranks (eval_facets summed the loads) */
        double *sum = calloc(3 * (size_t)ep->nbcs + 1, sizeof *sum);
        if (!status && !sum) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        status = comm_agree(status);
        for (int i = 0; i < ep->nbcs && !status; i++)
            for (int c = 0; c < 3 && is_dirichlet(ep->bcs[i].kind); c++) sum[3 * i + c] = forces[i].force[c];
        if (!status) status = comm_sum(sum, 3 * ep->nbcs);
        for (int i = 0; i < ep->nbcs && !status; i++)
            for (int c = 0; c < 3 && is_dirichlet(ep->bcs[i].kind); c++) forces[i].force[c] = sum[3 * i + c];
        free(sum);
    }
    body[0] = body[1] = body[2] = 0.0;
    if (ep->gravity[0] == 0.0 && ep->gravity[1] == 0.0 && ep->gravity[2] == 0.0)
        return status; /* no weight */
    EvalField f = {sp, u, NULL, md->cell_tags, 0, &md->phys, md->dist};
    OutputFn fn = elas_output(QF_elas_body_out, "elas_body_out", 3, md->ctx);
    fn.qf.in[1] = (QfField){0};
    if (!status) status = eval_cells(&f, &fn, NULL, body);
    return status;
}

int elasticity_extremes(const Dist *d, const Space *sp, const double *u, const double *von_mises,
                        ElasticExtremes *ex) {
    memset(ex, 0, sizeof *ex);
    DistExtremes e;
    FEM_TRY(dist_node_extremes(d, sp, u, sp->ncomp, &e)); /* |u| */
    if (e.node[1] >= 0) {
        ex->max_displacement = e.value[1];
        for (int k = 0; k < 3; k++) ex->max_displacement_at[k] = e.x[1][k];
    }
    if (!von_mises) return FEM_OK;
    FEM_TRY(dist_node_extremes(d, sp, von_mises, 1, &e));
    if (e.node[1] >= 0) {
        ex->max_von_mises = e.value[1];
        for (int k = 0; k < 3; k++) ex->max_von_mises_at[k] = e.x[1][k];
    }
    return FEM_OK;
}
