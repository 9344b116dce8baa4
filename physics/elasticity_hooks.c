/* Elasticity as a run sees it (physics.h): the supports' check, the load factor, stresses for output, and
 * the summary with the reactions on every support balanced against the applied loads. */
#include "fem/error.h"
#include "physics/elasticity.h"
#include "physics/physics.h"
#include "physics/sanity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const xyz[] = {"x", "y", "z"};

static const char *elas_reads(const Problem *pb) {
    return pb->elasticity.coupled_temperature ? "temperature" : NULL;
}

static int elas_transient(const Problem *pb) {
    (void)pb;
    return 0;
}

static void elas_describe(const Problem *pb, const Model *md, char *buf, size_t len) {
    int dim = md->ncomp;
    snprintf(buf, len, "%s%s", elasticity_nonlinear(md) ? "neo-Hookean" : "linear",
             dim == 2 ? (pb->elasticity.plane == PLANE_STRESS ? ", plane stress" : ", plane strain") : "");
}

static double elas_initial(const Problem *pb) {
    (void)pb;
    return 0.0;
}

static int elas_fields(const PhysicsState *s, NodalField *out, int *n) {
    const Problem *pb = s->pb;
    int64_t nn = s->sp->nnodes;
    *n = 0;
    if (!pb->output.stress && !pb->output.strain_energy) return FEM_OK;
    double *stress = malloc(sizeof(double) * (size_t)(nn * 6 + 1)), *vm = malloc(sizeof(double) * (size_t)(nn + 1)),
           *w = malloc(sizeof(double) * (size_t)(nn + 1));
    int status = stress && vm && w ? elasticity_stress_nodes(s->md, s->sp, s->u, s->aux_dev, stress, vm, w, NULL)
                                   : fem_fail(FEM_ERR_INTERNAL, "out of host memory for stresses");
    if (!status && pb->output.stress) {
        out[(*n)++] = (NodalField){"stress", "Pa", 6, stress};
        out[(*n)++] = (NodalField){"von_mises", "Pa", 1, vm};
        stress = vm = NULL;
    }
    if (!status && pb->output.strain_energy) out[(*n)++] = (NodalField){"strain_energy_density", "J/m^3", 1, w}, w = NULL;
    free(stress);
    free(vm);
    free(w);
    return status;
}

/* The forces on the body through every boundary condition and gravity, and how well they balance. */
static void force_balance(const PhysicsState *s, const Report *rep, const ElasticForce *forces, const double *body,
                          double max_von_mises) {
    const Space *sp = s->sp;
    const char *fu = sp->mesh->dim == 2 ? "N/m" : "N";
    double total[3] = {body[0], body[1], body[2]}, scale = fmax(fabs(body[0]), fmax(fabs(body[1]), fabs(body[2])));
    for (int i = 0; i < s->pb->elasticity.nbcs; i++) {
        const ElasticForce *f = &forces[i];
        report_line(rep, "  force on the body through '%s' (%s): (%.6g, %.6g, %.6g) %s\n", f->boundary, f->kind,
                    f->force[0], f->force[1], f->force[2], fu);
        for (int c = 0; c < 3; c++) {
            total[c] += f->force[c];
            scale = fmax(scale, fabs(f->force[c]));
            char key[PROBLEM_NAME_MAX + 24];
            snprintf(key, sizeof key, "force_%s:%s", xyz[c], f->boundary);
            if (c < sp->mesh->dim) rep->key(rep->ctx, key, f->force[c], fu);
        }
    }
    if (body[0] || body[1] || body[2])
        report_line(rep, "  body force (gravity): (%.6g, %.6g, %.6g) %s\n", body[0], body[1], body[2], fu);
    double imbalance = sqrt(total[0] * total[0] + total[1] * total[1] + total[2] * total[2]);
    /* with no applied load (free thermal expansion) every force is rounding: judge them against the force the
     * largest stress would carry over the body's size instead */
    double lo[3], hi[3], size = 0.0;
    if (dist_bounding_box(s->md->dist, sp->mesh, lo, hi)) lo[0] = lo[1] = lo[2] = hi[0] = hi[1] = hi[2] = 0.0;
    for (int c = 0; c < 3; c++) size = fmax(size, hi[c] - lo[c]);
    double stress_force = max_von_mises * pow(size, sp->mesh->dim - 1);
    if (scale < 1e-9 * stress_force) {
        report_line(rep, "  force balance: no applied loads; the reactions sum to %.3g %s (%.2g of the stress scale %.3g %s)\n",
                    imbalance, fu, stress_force > 0 ? imbalance / stress_force : 0.0, stress_force, fu);
        scale = stress_force;
    } else {
        report_line(rep, "  force balance: |sum| = %.3g %s (%.2g of the largest force)\n", imbalance, fu,
                    scale > 0 ? imbalance / scale : 0.0);
    }
    rep->key(rep->ctx, "force_imbalance", scale > 0 ? imbalance / scale : 0.0, "");
}

static int elas_summary(const PhysicsState *s, const Report *rep) {
    const Problem *pb = s->pb;
    const Space *sp = s->sp;
    int64_t nn = sp->nnodes;
    const char *eu = sp->mesh->dim == 2 ? "J/m" : "J";
    double *vm = NULL, *stress = NULL, *reaction = NULL, *gradient = NULL;
    const int linear = !elasticity_nonlinear(s->md);
    ElasticForce *forces = NULL;
    ElasticExtremes ex;
    double energy = 0.0, body[3] = {0, 0, 0};
    int status = FEM_OK;
    FEM_CHECK_ALLOC(vm, nn + 1, "nodal von Mises stresses");
    FEM_CHECK_ALLOC(stress, nn * 6 + 1, "nodal stresses");
    FEM_CHECK_ALLOC(reaction, sp->ndofs + 1, "reactions");
    FEM_CHECK_ALLOC(forces, pb->elasticity.nbcs + 1, "boundary forces");
    if (linear) FEM_CHECK_ALLOC(gradient, nn + 1, "nodal displacement gradients");
    FEM_CHECK(elasticity_stress_nodes(s->md, sp, s->u, s->aux_dev, stress, vm, NULL, gradient));
    FEM_CHECK(elasticity_extremes(s->md->dist, sp, s->u_host, vm, &ex));
    FEM_CHECK(sanity_elasticity(s->md->dist, sp, ex.max_displacement, ex.max_displacement_at, gradient,
                                rep->warnings));
    FEM_CHECK(elasticity_strain_energy(s->md, sp, s->u, s->aux_dev, &energy));
    FEM_CHECK(s->residual(s, reaction)); /* the reactions */
    FEM_CHECK(elasticity_reactions(s->md, pb, sp, s->u, reaction, forces, body));
    report_line(rep, "  largest displacement: %.6g m at (%.4g, %.4g, %.4g)\n", ex.max_displacement,
                ex.max_displacement_at[0], ex.max_displacement_at[1], ex.max_displacement_at[2]);
    report_line(rep, "  largest von Mises stress: %.6g Pa at (%.4g, %.4g, %.4g)\n", ex.max_von_mises,
                ex.max_von_mises_at[0], ex.max_von_mises_at[1], ex.max_von_mises_at[2]);
    report_line(rep, "  strain energy: %.6g %s\n", energy, eu);
    rep->key(rep->ctx, "max_displacement", ex.max_displacement, "m");
    rep->key(rep->ctx, "max_von_mises", ex.max_von_mises, "Pa");
    rep->key(rep->ctx, "strain_energy", energy, eu);
    force_balance(s, rep, forces, body, ex.max_von_mises);
cleanup:
    free(vm);
    free(gradient);
    free(stress);
    free(reaction);
    free(forces);
    return status;
}

static void elas_set_load(Model *md, double L) {
    elasticity_set_load(md, L);
}

const PhysicsType elasticity_type = {
    .name = "elasticity",
    .field = "displacement",
    .unit = "m",
    .components = xyz,
    .reads = elas_reads,
    .transient = elas_transient,
    .create = elasticity_model_create,
    .check = elasticity_check_supports,
    .describe = elas_describe,
    .initial = elas_initial,
    .set_load = elas_set_load,
    .set_time = NULL,
    .fields = elas_fields,
    .step = NULL,
    .summary = elas_summary,
};
