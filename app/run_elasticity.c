/* The elasticity step of `femto-app run`: load stepping with automatic cutback, output, and a summary with
 * the reactions on every support balanced against the applied loads. */
#include "run.h"

#include "fem/error.h"
#include "physics/elasticity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CUTBACKS = 10 };

typedef struct {
    Run *r;
    Space sp;
    Model md;
    Operator op;
    Newton nw;
    ResultSeries rs;
    OutFrame frame;
    double *u, *u_saved; /* device */
    double *u_prev;      /* device: the converged state one load step back (secant predictor) */
    int32_t *dir_idx;    /* device */
    double *dir_vals;    /* device: prescribed values at the current load */
    double *host, *scaled, *Thost;
    int newton_its, linear_its, load_steps_done, cutbacks;
    int opened;
} Elastic;

/* Sets the load factor: constants on the device and the prescribed displacements in u. */
static int set_load(Elastic *e, double L) {
    Device *d = &e->r->dev;
    elasticity_set_load(&e->md, L);
    FEM_TRY(op_update_ctx(&e->op));
    if (!e->md.ndir) return FEM_OK;
    for (int64_t i = 0; i < e->md.ndir; i++) e->scaled[i] = L * e->md.dir_values[i];
    FEM_TRY(d->ops.upload(d, e->dir_vals, e->scaled, sizeof(double) * (size_t)e->md.ndir));
    return d->ops.scatter(d, e->md.ndir, e->dir_idx, e->dir_vals, e->u);
}

static int elastic_output_timed(Elastic *e, double time);
static int elastic_output(Elastic *e, double time) {
    double t = app_seconds();
    int status = elastic_output_timed(e, time);
    e->r->t_output += app_seconds() - t;
    return status;
}

static int elastic_output_timed(Elastic *e, double time) {
    Device *d = &e->r->dev;
    const Space *sp = &e->sp;
    int nc = sp->ncomp;
    int64_t nn = sp->nnodes;
    FEM_TRY(d->ops.download(d, e->host, e->u, sizeof(double) * (size_t)sp->ndofs));
    double *disp = calloc((size_t)nn * 3, sizeof(double)), *vals = malloc(sizeof(double) * (size_t)nn * nc);
    double *stress = malloc(sizeof(double) * (size_t)nn * 6), *vm = malloc(sizeof(double) * (size_t)nn);
    double *w = malloc(sizeof(double) * (size_t)nn);
    int status =
        disp && vals && stress && vm && w ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (!status) status = results_nodal_field(sp, e->host, nc, vals);
    for (int64_t n = 0; n < nn && !status; n++)
        for (int c = 0; c < nc; c++) disp[3 * n + c] = vals[n * nc + c];
    if (!status) status = results_add_point_array(&e->frame, "displacement", "m", 3, nn, disp);
    const Problem *pb = &e->r->pb;
    if (!status && (pb->output.stress || pb->output.strain_energy))
        status = elasticity_stress_nodes(&e->md, sp, e->host, e->Thost, stress, vm, w);
    if (!status && pb->output.stress) {
        status = results_add_point_array(&e->frame, "stress", "Pa", 6, nn, stress);
        if (!status) status = results_add_point_array(&e->frame, "von_mises", "Pa", 1, nn, vm);
    }
    if (!status && pb->output.strain_energy)
        status = results_add_point_array(&e->frame, "strain_energy_density", "J/m^3", 1, nn, w);
    if (!status) status = results_write(&e->rs, time, &e->frame);
    for (int i = 0; i < e->frame.npoint_arrays; i++) free(e->frame.point[i].data);
    e->frame.npoint_arrays = 0;
    free(disp);
    free(vals);
    free(stress);
    free(vm);
    free(w);
    return status;
}

/* Load steps 1/n, 2/n, ..., 1 for a nonlinear problem (an affine one is solved at the full load at once: a
 * load step could not help it). A failed step is retried with half the increment from the last converged
 * state, MAX_CUTBACKS times in a row at most, and never below MIN_INCREMENT of the nominal increment; at most
 * MAX_ATTEMPTS Newton solves in all, so every run ends. Each step starts from the secant extrapolation of the
 * last two converged states: for slender structures the linear predictor from the last state alone bends
 * without shortening, and the resulting stretch forces keep Newton far from its quadratic range. */
enum { MAX_ATTEMPTS = 400 };
#define MIN_INCREMENT (1.0 / 1024.0)

typedef struct {
    int nsteps, level, failures, attempts;
    double L, nominal, inc, L_prev; /* L_prev < 0: no history yet */
} Stepping;

/* u += (u - u_prev) dL / dL_prev: the secant predictor (nonlinear problems, after two converged states). */
static int predict(Elastic *e, const Stepping *s, double target) {
    Device *d = &e->r->dev;
    if (s->L_prev < 0.0 || !elasticity_nonlinear(&e->md)) return FEM_OK;
    double f = (target - s->L) / (s->L - s->L_prev);
    FEM_TRY(d->ops.axpby(d, e->sp.ndofs, f, e->u, 1.0, e->u));
    return d->ops.axpby(d, e->sp.ndofs, -f, e->u_prev, 1.0, e->u);
}

/* A failed Newton solve at load `target`: cut the increment, or fail for good (exit 3 with the reason). */
static int cut_back(Elastic *e, Stepping *s, double target, const NewtonResult *res) {
    const Run *r = e->r;
    if (!elasticity_nonlinear(&e->md))
        return fem_fail(FEM_ERR_SOLVER, "the linear elasticity solve did not converge: %s", res->reason);
    double inc = (target - s->L) / 2;
    if (++s->failures > MAX_CUTBACKS || inc < MIN_INCREMENT * s->nominal || s->attempts >= MAX_ATTEMPTS)
        return fem_fail(FEM_ERR_SOLVER,
                        "the load step from %.4g to %.4g of the full load failed %d time%s in a row (%s): %s",
                        s->L, target, s->failures, s->failures == 1 ? "" : "s",
                        s->attempts >= MAX_ATTEMPTS      ? "no Newton solves left"
                        : inc < MIN_INCREMENT * s->nominal ? "the increment cannot be cut further"
                                                           : "too many cutbacks",
                        res->reason);
    app_say(r->o, 1, "load %.4g: Newton did not converge (%s); cutting the increment to %.4g\n", target,
            res->reason, inc);
    e->cutbacks++;
    s->inc = inc;
    Device *d = &e->r->dev;
    return d->ops.copy(d, e->u, e->u_saved, sizeof(double) * (size_t)e->sp.ndofs);
}

/* A converged step to `target`: the state moves on, the increment grows back after an easy step, and the
 * nominal load levels are written (nonlinear problems with several steps). */
static int step_done(Elastic *e, Stepping *s, double target, const NewtonResult *res, double seconds) {
    Device *d = &e->r->dev;
    s->failures = 0;
    FEM_TRY(d->ops.copy(d, e->u_prev, e->u_saved, sizeof(double) * (size_t)e->sp.ndofs));
    s->L_prev = s->L;
    s->L = target;
    e->load_steps_done++;
    if (res->iterations <= 4) s->inc = fmin(2 * s->inc, s->nominal);
    app_say(e->r->o, 1, "load %.4g: Newton %d iteration%s (|R| %.2e -> %.2e), %d %s iterations, %.2f s\n", s->L,
            res->iterations, res->iterations == 1 ? "" : "s", res->rnorm0, res->rnorm, res->linear_iterations,
            ksp_name(e->nw.set.ksp.type), seconds);
    if (s->L < (double)s->level / s->nsteps - 1e-12) return FEM_OK;
    int write = elasticity_nonlinear(&e->md) && s->nsteps > 1 && s->level < s->nsteps;
    s->level++;
    return write ? elastic_output(e, s->L) : FEM_OK;
}

static int load_stepping(Elastic *e) {
    Run *r = e->r;
    Device *d = &r->dev;
    int n = elasticity_nonlinear(&e->md) && r->pb.solver.load_steps > 0 ? r->pb.solver.load_steps : 1;
    Stepping s = {.nsteps = n, .level = 1, .nominal = 1.0 / n, .inc = 1.0 / n, .L_prev = -1.0};
    int status = FEM_OK;
    while (s.L < 1.0 - 1e-12 && !status) {
        /* never step past the next nominal load level: results are written there */
        double target = fmin((double)s.level / s.nsteps, s.L + s.inc);
        status = d->ops.copy(d, e->u_saved, e->u, sizeof(double) * (size_t)e->sp.ndofs);
        if (!status) status = predict(e, &s, target);
        if (!status) status = set_load(e, target);
        if (status) break;
        NewtonResult res;
        double t = app_seconds();
        Vec U = vec_wrap(d, e->sp.ndofs, e->u);
        int solved = newton_solve(&e->nw, &U, NULL, &res);
        double seconds = app_seconds() - t;
        r->t_solve += seconds;
        s.attempts++;
        e->newton_its += res.iterations;
        e->linear_its += res.linear_iterations;
        run_account(r, &res, &e->nw.set);
        if (solved == FEM_ERR_SOLVER)
            status = cut_back(e, &s, target, &res);
        else
            status = solved ? solved : step_done(e, &s, target, &res, seconds);
    }
    if (!status) status = elastic_output(e, 1.0);
    return status;
}

static void elastic_summary(Elastic *e) {
    Run *r = e->r;
    const AppOptions *o = r->o;
    const Problem *pb = &r->pb;
    const Space *sp = &e->sp;
    Device *d = &r->dev;
    int64_t nn = sp->nnodes, n = sp->ndofs;
    const char *fu = sp->mesh->dim == 2 ? "N/m" : "N", *eu = sp->mesh->dim == 2 ? "J/m" : "J";
    double *vm = malloc(sizeof(double) * (size_t)nn), *stress = malloc(sizeof(double) * (size_t)nn * 6);
    double *reaction = malloc(sizeof(double) * (size_t)n), *rdev = NULL;
    ElasticForce *forces = calloc((size_t)pb->elasticity.nbcs + 1, sizeof *forces);
    ElasticExtremes ex;
    double energy = 0.0, body[3] = {0, 0, 0};
    int status =
        vm && stress && reaction && forces ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (!status) status = d->ops.download(d, e->host, e->u, sizeof(double) * (size_t)n);
    if (!status) status = elasticity_stress_nodes(&e->md, sp, e->host, e->Thost, stress, vm, NULL);
    if (!status) status = elasticity_extremes(sp, e->host, vm, &ex);
    if (!status) status = sanity_elasticity(sp, e->host, !elasticity_nonlinear(&e->md), &r->warnings);
    if (!status) status = elasticity_strain_energy(&e->md, sp, e->host, e->Thost, &energy);
    if (!status) status = device_alloc(d, (void **)&rdev, sizeof(double) * (size_t)n);
    Vec U = vec_wrap(d, n, e->u), R = vec_wrap(d, n, rdev);
    if (!status) status = op_residual_unconstrained(&e->op, &U, &R);
    if (!status) status = d->ops.download(d, reaction, rdev, sizeof(double) * (size_t)n);
    if (!status) status = elasticity_reactions(&e->md, pb, sp, e->host, reaction, forces, body);
    if (status) {
        app_say(o, 1, "summary (elasticity) not available: %s\n", fem_last_error());
        goto done;
    }
    app_say(o, 1, "summary (elasticity, %s):\n", elasticity_nonlinear(&e->md) ? "neo-Hookean" : "linear");
    app_say(o, 1, "  largest displacement: %.6g m at (%.4g, %.4g, %.4g)\n", ex.max_displacement,
            ex.max_displacement_at[0], ex.max_displacement_at[1], ex.max_displacement_at[2]);
    app_say(o, 1, "  largest von Mises stress: %.6g Pa at (%.4g, %.4g, %.4g)\n", ex.max_von_mises,
            ex.max_von_mises_at[0], ex.max_von_mises_at[1], ex.max_von_mises_at[2]);
    app_say(o, 1, "  strain energy: %.6g %s\n", energy, eu);
    app_say(o, 1, "  preconditioner: %s; operator: %s\n", pc_describe(&e->nw.pc), e->op.implementation);
    app_say(o, 1, "  solver: %d load step%s (%d cut back), %d Newton iterations, %d linear iterations\n",
            e->load_steps_done, e->load_steps_done == 1 ? "" : "s", e->cutbacks, e->newton_its,
            e->linear_its);
    static const char *const xyz[] = {"x", "y", "z"};
    run_report_probes(r, sp, e->host, "displacement", xyz, "m");
    summary_add(&r->summary, "max_displacement", ex.max_displacement, "m");
    summary_add(&r->summary, "max_von_mises", ex.max_von_mises, "Pa");
    summary_add(&r->summary, "strain_energy", energy, eu);
    summary_add(&r->summary, "elasticity_newton_iterations", e->newton_its, "");
    double total[3] = {body[0], body[1], body[2]},
           scale = fmax(fabs(body[0]), fmax(fabs(body[1]), fabs(body[2])));
    static const char axis[] = "xyz";
    for (int i = 0; i < pb->elasticity.nbcs; i++) {
        const ElasticForce *f = &forces[i];
        app_say(o, 1, "  force on the body through '%s' (%s): (%.6g, %.6g, %.6g) %s\n", f->boundary, f->kind,
                f->force[0], f->force[1], f->force[2], fu);
        for (int c = 0; c < 3; c++) {
            total[c] += f->force[c];
            scale = fmax(scale, fabs(f->force[c]));
            char key[PROBLEM_NAME_MAX + 24];
            snprintf(key, sizeof key, "force_%c:%s", axis[c], f->boundary);
            if (c < sp->mesh->dim) summary_add(&r->summary, key, f->force[c], fu);
        }
    }
    if (body[0] || body[1] || body[2])
        app_say(o, 1, "  body force (gravity): (%.6g, %.6g, %.6g) %s\n", body[0], body[1], body[2], fu);
    double imbalance = sqrt(total[0] * total[0] + total[1] * total[1] + total[2] * total[2]);
    /* with no applied load (free thermal expansion) every force is rounding: judge them against the force the
     * largest stress would carry over the body's size instead */
    double lo[3], hi[3], size = 0.0;
    mesh_bounding_box(sp->mesh, lo, hi);
    for (int c = 0; c < 3; c++) size = fmax(size, hi[c] - lo[c]);
    double stress_force = ex.max_von_mises * pow(size, sp->mesh->dim - 1);
    if (scale < 1e-9 * stress_force) {
        app_say(o, 1,
                "  force balance: no applied loads; the reactions sum to %.3g %s (%.2g of the stress scale "
                "%.3g %s)\n",
                imbalance, fu, stress_force > 0 ? imbalance / stress_force : 0.0, stress_force, fu);
        scale = stress_force;
    } else {
        app_say(o, 1, "  force balance: |sum| = %.3g %s (%.2g of the largest force)\n", imbalance, fu,
                scale > 0 ? imbalance / scale : 0.0);
    }
    summary_add(&r->summary, "force_imbalance", scale > 0 ? imbalance / scale : 0.0, "");
done:
    device_free(d, rdev);
    free(vm);
    free(stress);
    free(reaction);
    free(forces);
}

int run_elasticity(Run *r, int check_only) {
    Problem *pb = &r->pb;
    Elastic e;
    memset(&e, 0, sizeof e);
    e.r = r;
    int status = run_space(r, r->mesh.dim, &e.sp);
    int have_space = !status;
    if (!status) status = elasticity_model_create(pb, &e.sp, &e.md);
    if (!status) status = elasticity_check_supports(pb, &e.sp, &e.md);
    if (!status) status = run_check_probes(r, &e.sp);
    if (status || check_only) goto done;
    if (pb->elasticity.coupled_temperature && !r->temperature) {
        status = fem_fail(FEM_ERR_INTERNAL, "the temperature field for thermal strain was not computed");
        goto done;
    }
    int nonlinear = elasticity_nonlinear(&e.md);
    NewtonSettings ns = run_newton_settings(r, e.md.symmetric, !nonlinear);
    r->single_solve = !nonlinear || pb->solver.load_steps <= 1;
    app_say(
        r->o, 1, "elasticity (%s%s): order %d, %lld dofs (%lld fixed), %s with %s preconditioning\n",
        nonlinear ? "neo-Hookean" : "linear",
        r->mesh.dim == 2 ? (pb->elasticity.plane == PLANE_STRESS ? ", plane stress" : ", plane strain") : "",
        pb->order, (long long)e.sp.ndofs, (long long)e.md.ndir, ksp_name(ns.ksp.type), pc_name(ns.pc.type));
    Device *d = &r->dev;
    size_t bytes = sizeof(double) * (size_t)e.sp.ndofs;
    status = op_create(&e.op, d, &e.sp, &e.md.phys, pb->quadrature_degree, e.md.cell_tags, e.md.facet_tags);
    if (!status) status = op_set_dirichlet(&e.op, e.md.ndir, e.md.dir_dofs);
    if (!status) status = newton_create(&e.nw, &e.op, &ns, run_report, r);
    e.host = calloc((size_t)e.sp.ndofs, sizeof(double));
    e.scaled = malloc(sizeof(double) * (size_t)(e.md.ndir + 1));
    if (!status && (!e.host || !e.scaled)) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (!status) status = device_alloc_copy(d, (void **)&e.u, e.host, bytes);
    if (!status) status = device_alloc(d, (void **)&e.u_saved, bytes);
    if (!status) status = device_alloc(d, (void **)&e.u_prev, bytes);
    if (!status && e.md.ndir)
        status =
            device_alloc_copy(d, (void **)&e.dir_idx, e.md.dir_dofs, sizeof(int32_t) * (size_t)e.md.ndir);
    if (!status && e.md.ndir)
        status = device_alloc(d, (void **)&e.dir_vals, sizeof(double) * (size_t)e.md.ndir);
    if (!status && pb->elasticity.coupled_temperature) {
        e.op.aux = r->temperature;
        e.Thost = malloc(sizeof(double) * (size_t)r->temperature_space->ndofs);
        status = e.Thost ? d->ops.download(d, e.Thost, r->temperature,
                                           sizeof(double) * (size_t)r->temperature_space->ndofs)
                         : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    }
    int32_t *regions[MESH_MAX_BLOCKS] = {0};
    const char **names = calloc((size_t)pb->elasticity.nmaterials + 1, sizeof *names);
    for (int i = 0; names && i < pb->elasticity.nmaterials; i++)
        names[i] = pb->elasticity.materials[i].region;
    if (!status)
        status = names ? run_region_tags(&r->mesh, &e.md, pb->elasticity.nmaterials, names, regions)
                       : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    free(names);
    if (!status) status = results_frame(&e.sp, (const int32_t *const *)regions, pb->path, &e.frame);
    run_free_tags(regions);
    if (!status && (pb->physics & PHYSICS_HEAT)) { /* the heat step wrote its own series: keep them apart */
        size_t len = strlen(pb->output.basename);
        if (len + sizeof RUN_ELASTICITY_SERIES < sizeof pb->output.basename)
            strcat(pb->output.basename, RUN_ELASTICITY_SERIES);
    }
    if (!status) status = results_open(&e.rs, r->set, pb, &e.frame);
    e.opened = !status;
    if (!status) status = load_stepping(&e);
    if (e.opened) {
        int cs = results_close(&e.rs, status == FEM_OK);
        if (!status) status = cs;
    }
    if (!status) elastic_summary(&e);
done:
    outframe_destroy(&e.frame);
    newton_destroy(&e.nw);
    if (e.op.dev) op_destroy(&e.op);
    if (r->have_dev) {
        device_free(&r->dev, e.u);
        device_free(&r->dev, e.u_saved);
        device_free(&r->dev, e.u_prev);
        device_free(&r->dev, e.dir_idx);
        device_free(&r->dev, e.dir_vals);
    }
    free(e.host);
    free(e.scaled);
    free(e.Thost);
    model_destroy(&e.md);
    if (have_space) space_destroy(&e.sp);
    return status;
}
