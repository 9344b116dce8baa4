/* The heat step of `femto-app run`: steady or transient, then output and a summary with the energy balance.
 */
#include "run.h"

#include "fem/error.h"
#include "physics/heat.h"
#include "physics/heat_qf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line every few seconds during a long linear solve (-v): where it is, how fast it converges, and how
 * long the rest should take at that rate. */
static void ksp_progress(void *ctx, int it, double rnorm, double bnorm, double target) {
    Run *r = ctx;
    double t = app_seconds();
    if (it <= 1) r->ksp_t0 = r->ksp_last = t;
    if (t - r->ksp_last < 3.0 || !(bnorm > 0) || !(rnorm > 0)) return;
    r->ksp_last = t;
    double rate = pow(rnorm / bnorm, 1.0 / it), per_it = (t - r->ksp_t0) / it;
    double left = rate < 1.0 && rnorm > target ? log(target / rnorm) / log(rate) : 0.0;
    app_say(r->o, 2, "      linear iteration %d: |r|/|b| = %.2e, rate %.4f per iteration, about %.0f s left\n", it,
            rnorm / bnorm, rate, left * per_it);
}

NewtonSettings run_newton_settings(Run *r, int symmetric, int linear) {
    const SolverSettings *s = &r->pb.solver;
    KspType ksp = s->krylov == KRYLOV_CG         ? KSP_CG
                  : s->krylov == KRYLOV_GMRES    ? KSP_GMRES
                  : s->krylov == KRYLOV_BICGSTAB ? KSP_BICGSTAB
                  : symmetric                    ? KSP_CG
                                                 : KSP_GMRES;
    PcType pc = s->precond == PRECOND_NONE        ? PC_NONE
                : s->precond == PRECOND_CHEBYSHEV ? PC_CHEBYSHEV
                : s->precond == PRECOND_MULTIGRID ? PC_MULTIGRID
                                                  : PC_JACOBI;
    return (NewtonSettings){.rtol = s->rtol,
                            .atol = s->atol,
                            .stol = s->stol,
                            .max_iterations = s->max_iterations,
                            .line_search = s->line_search,
                            .linear = linear,
                            .pc = {.type = pc,
                                   .cheb_degree = s->smoothing_degree,
                                   .mg_levels = s->mg_levels,
                                   .coarse = (int)s->coarse,
                                   .coarse_cycles = s->coarse_cycles},
                            .ksp = {.type = ksp,
                                    .rtol = s->linear_rtol,
                                    .max_iterations = s->linear_max_iterations,
                                    .restart = s->restart,
                                    .monitor = ksp_progress,
                                    .monitor_ctx = r}};
}

void run_report(void *ctx, const NewtonStep *st) {
    const Run *r = ctx;
    app_say(r->o, r->single_solve ? 1 : 2, "    Newton %2d: |R| = %.3e (%.1e of scale), %4d linear iterations%s, step %.3g, %.2f s\n",
            st->iteration, st->rnorm, st->rnorm / st->scale, st->linear_iterations,
            st->linear_converged ? "" : " (not converged)", st->step, st->seconds);
}

void run_account(Run *r, const NewtonResult *res, const NewtonSettings *ns) {
    r->newton_its += res->iterations;
    r->linear_its += res->linear_iterations;
    r->capped += res->capped;
    /* the preconditioner's setup is setup, not solve (multigrid assembles and factorises its coarse level) */
    r->pc_seconds += res->pc_seconds;
    r->t_solve -= res->pc_seconds;
    if (res->capped)
        app_warn(r->o,
                "%d linear solve%s stopped at the cap of %d iterations without converging (raise "
                "<linear max-iterations> or choose a stronger preconditioner)\n",
                res->capped, res->capped == 1 ? "" : "s", ns->ksp.max_iterations);
    if (res->converged && res->note[0]) app_say(r->o, 2, "    note: %s\n", res->note);
}

int run_region_tags(const Mesh *m, const Model *md, int n, const char *const *names, int32_t **out) {
    for (int b = 0; b < m->ncell_blocks; b++) {
        FEM_ALLOC(out[b], m->cells[b].count, "region tags");
        for (int64_t c = 0; c < m->cells[b].count; c++) {
            int mat = md->cell_tags[b][c];
            const PhysicalGroup *g =
                mat >= 0 && mat < n && names[mat][0] ? mesh_find_group(m, names[mat], m->dim) : NULL;
            out[b][c] = g ? g->tag : 0;
        }
    }
    return FEM_OK;
}

void run_free_tags(int32_t **tags) {
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(tags[b]), tags[b] = NULL;
}

void run_release_temperature(Run *r) {
    if (r->temperature && r->have_dev) device_free(&r->dev, r->temperature);
    if (r->temperature_space) space_destroy(r->temperature_space), free(r->temperature_space);
    r->temperature = NULL;
    r->temperature_space = NULL;
}

typedef struct {
    Run *r;
    Space *sp;
    Model *md;
    Operator op;
    Newton nw;
    double a, theta; /* the time discretisation the preconditioner was set up for */
    ResultSeries rs;
    OutFrame frame;
    double *u;    /* device: temperature */
    double *host; /* host copy */
    int newton_its, linear_its;
} Heat;

static int heat_output_timed(Heat *h, double time);
static int heat_output(Heat *h, double time) {
    double t = app_seconds();
    int status = heat_output_timed(h, time);
    h->r->t_output += app_seconds() - t;
    return status;
}

static int heat_output_timed(Heat *h, double time) {
    Device *d = &h->r->dev;
    const Space *sp = h->sp;
    size_t bytes = sizeof(double) * (size_t)sp->ndofs;
    FEM_TRY(d->ops.download(d, h->host, h->u, bytes));
    double *tmp = malloc(sizeof(double) * (size_t)sp->nnodes * 3);
    if (!tmp) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for output");
    int status = results_nodal_field(sp, h->host, 1, tmp);
    if (!status) status = results_add_point_array(&h->frame, "temperature", "K", 1, sp->nnodes, tmp);
    if (!status && h->r->pb.output.flux) {
        status = heat_flux_nodes(h->md, sp, h->host, tmp);
        if (!status) status = results_add_point_array(&h->frame, "heat_flux", "W/m^2", 3, sp->nnodes, tmp);
    }
    free(tmp);
    if (!status) status = results_write(&h->rs, time, &h->frame);
    for (int i = 0; i < h->frame.npoint_arrays; i++) free(h->frame.point[i].data);
    h->frame.npoint_arrays = 0;
    return status;
}

/* The time discretisation a T + theta F(T): the Jacobian changes with it, and so must the preconditioner. */
static void heat_time(Heat *h, double a, double theta) {
    heat_set_time(h->md, a, theta);
    if (a != h->a || theta != h->theta) newton_jacobian_changed(&h->nw);
    h->a = a;
    h->theta = theta;
}

static int heat_solve(Heat *h, const double *extra, const char *what) {
    NewtonResult res;
    double t = app_seconds();
    Device *d = &h->r->dev;
    Vec U = vec_wrap(d, h->sp->ndofs, h->u), X = vec_wrap(d, h->sp->ndofs, (double *)extra);
    int status = newton_solve(&h->nw, &U, extra ? &X : NULL, &res);
    double seconds = app_seconds() - t;
    h->r->t_solve += seconds;
    h->newton_its += res.iterations;
    h->linear_its += res.linear_iterations;
    run_account(h->r, &res, &h->nw.set);
    app_say(h->r->o, 1, "%s: Newton %d iteration%s (|R| %.2e -> %.2e), %d %s iterations, %.2f s\n", what,
            res.iterations, res.iterations == 1 ? "" : "s", res.rnorm0, res.rnorm, res.linear_iterations,
            ksp_name(h->nw.set.ksp.type), seconds);
    return status;
}

/* Transient: backward Euler, BDF2 (first step backward Euler) or Crank-Nicolson (first two steps backward
 * Euler: Rannacher's start-up, which damps the modes a sudden boundary change excites and that
 * Crank-Nicolson alone barely damps; two steps of local error O(dt^2) keep the scheme second order). */
static int heat_transient(Heat *h) {
    Run *r = h->r;
    Device *d = &r->dev;
    const TimeSettings *ts = &r->pb.time;
    int64_t n = h->sp->ndofs;
    size_t bytes = sizeof(double) * (size_t)n;
    double *un = NULL, *unm1 = NULL, *aux = NULL, *extra = NULL, *vals = NULL;
    int32_t *idx = NULL;
    int status = device_alloc(d, (void **)&un, bytes);
    if (!status) status = device_alloc(d, (void **)&unm1, bytes);
    if (!status) status = device_alloc(d, (void **)&aux, bytes);
    if (!status && ts->scheme == TIME_CRANK_NICOLSON) status = device_alloc(d, (void **)&extra, bytes);
    if (!status && extra) status = d->ops.zero(d, extra, bytes);
    if (!status && h->md->ndir) {
        status = device_alloc_copy(d, (void **)&idx, h->md->dir_dofs, sizeof(int32_t) * (size_t)h->md->ndir);
        if (!status)
            status =
                device_alloc_copy(d, (void **)&vals, h->md->dir_values, sizeof(double) * (size_t)h->md->ndir);
    }
    int nsteps = (int)ceil((ts->end - ts->start) / ts->step - 1e-9);
    double dt = (ts->end - ts->start) / nsteps;
    /* the initial field is written as given; the boundary temperatures then hold from t = start on, in the
     * history state too (Crank-Nicolson's F(T_n) must see them, or the jump excites undamped modes) */
    if (!status) status = heat_output(h, ts->start);
    if (!status && h->md->ndir) status = d->ops.scatter(d, h->md->ndir, idx, vals, h->u);
    if (!status) status = d->ops.copy(d, un, h->u, bytes);
    for (int step = 1; step <= nsteps && !status; step++) {
        double t = ts->start + step * dt;
        if (step > 1) {
            status = d->ops.copy(d, unm1, un, bytes);
            if (!status) status = d->ops.copy(d, un, h->u, bytes);
            if (status) break;
        }
        if (ts->scheme == TIME_BDF2 && step > 1) { /* (3 T - 4 T_n + T_n-1) / (2 dt) */
            heat_time(h, 1.5 / dt, 1.0);
            status = d->ops.axpby(d, n, -2.0 / dt, un, 0.0, aux);
            if (!status) status = d->ops.axpby(d, n, 0.5 / dt, unm1, 1.0, aux);
        } else if (ts->scheme == TIME_CRANK_NICOLSON && step > 2) { /* (T - T_n)/dt + (F(T) + F(T_n))/2 */
            heat_set_time(h->md, 0.0, 0.5); /* F(T_n) / 2 alone, for the explicit half */
            h->op.aux = NULL;
            status = op_update_ctx(&h->op);
            if (!status) status = op_residual(&h->op, &(Vec){d, n, n, un, 0}, &(Vec){d, n, n, extra, 0});
            heat_time(h, 1.0 / dt, 0.5);
            if (!status) status = d->ops.axpby(d, n, -1.0 / dt, un, 0.0, aux);
        } else {
            heat_time(h, 1.0 / dt, 1.0);
            status = d->ops.axpby(d, n, -1.0 / dt, un, 0.0, aux);
        }
        h->op.aux = aux;
        if (!status) status = op_update_ctx(&h->op);
        char what[96];
        snprintf(what, sizeof what, "step %d/%d, t = %.6g s", step, nsteps, t);
        int cn = ts->scheme == TIME_CRANK_NICOLSON && step > 2;
        if (!status) status = heat_solve(h, cn ? extra : NULL, what);
        if (!status && (step % ts->output_every == 0 || step == nsteps)) status = heat_output(h, t);
    }
    h->op.aux = NULL;
    double *bufs[] = {un, unm1, aux, extra, vals};
    for (int i = 0; i < 5; i++) device_free(d, bufs[i]);
    device_free(d, idx);
    return status;
}

static void heat_summary(Heat *h) {
    Run *r = h->r;
    const AppOptions *o = r->o;
    const Problem *pb = &r->pb;
    const Space *sp = h->sp;
    Device *d = &r->dev;
    d->ops.download(d, h->host, h->u, sizeof(double) * (size_t)sp->ndofs);
    sanity_heat(sp, h->host, &r->warnings);
    int64_t imin = 0, imax = 0;
    for (int64_t i = 0; i < sp->nnodes; i++) {
        if (h->host[i] < h->host[imin]) imin = i;
        if (h->host[i] > h->host[imax]) imax = i;
    }
    const double *xl = &sp->node_x[3 * imin], *xh = &sp->node_x[3 * imax];
    summary_add(&r->summary, "temperature_min", h->host[imin], "K");
    summary_add(&r->summary, "temperature_max", h->host[imax], "K");
    summary_add(&r->summary, "heat_newton_iterations", h->newton_its, "");
    run_report_probes(r, sp, h->host, "temperature", NULL, "K");
    app_say(o, 1,
            "summary (heat):\n  temperature: min %.6g K at (%.4g, %.4g, %.4g), max %.6g K at (%.4g, %.4g, "
            "%.4g)\n",
            h->host[imin], xl[0], xl[1], xl[2], h->host[imax], xh[0], xh[1], xh[2]);
    app_say(
        o, 1,
        "  solver: %d Newton iterations, %d linear iterations, %lld residual and %lld Jacobian evaluations\n"
        "  preconditioner: %s; operator: %s\n",
        h->newton_its, h->linear_its, (long long)h->op.evaluations, (long long)h->op.applications,
        pc_describe(&h->nw.pc), h->op.implementation);
    if (pb->time.scheme != TIME_STEADY) return;
    /* energy balance: heat into the body through every boundary plus the sources must vanish */
    double *reaction = malloc(sizeof(double) * (size_t)sp->ndofs), *rdev = NULL;
    HeatFlow *flows = calloc((size_t)pb->heat.nbcs + 1, sizeof *flows);
    double source = 0.0;
    int status = reaction && flows ? device_alloc(d, (void **)&rdev, sizeof(double) * (size_t)sp->ndofs) : 1;
    Vec U = vec_wrap(d, sp->ndofs, h->u), R = vec_wrap(d, sp->ndofs, rdev);
    if (!status) status = op_residual_unconstrained(&h->op, &U, &R);
    if (!status) status = d->ops.download(d, reaction, rdev, sizeof(double) * (size_t)sp->ndofs);
    if (!status) status = heat_balance(h->md, pb, sp, h->host, reaction, flows, &source);
    const char *unit = sp->mesh->dim == 2 ? "W/m" : "W";
    if (!status) {
        double total = source, scale = fabs(source);
        for (int i = 0; i < pb->heat.nbcs; i++) {
            app_say(o, 1, "  heat into the body through '%s' (%s): %.6g %s\n", flows[i].boundary,
                    flows[i].kind, flows[i].watts, unit);
            total += flows[i].watts;
            char key[PROBLEM_NAME_MAX + 16];
            snprintf(key, sizeof key, "heat_in:%s", flows[i].boundary);
            summary_add(&r->summary, key, flows[i].watts, unit);
            scale = fmax(scale, fabs(flows[i].watts));
        }
        summary_add(&r->summary, "heat_source", source, unit);
        summary_add(&r->summary, "energy_imbalance", scale > 0 ? fabs(total) / scale : 0.0, "");
        app_say(o, 1, "  heat from sources: %.6g %s\n  energy balance: %.3g %s (%.2g of the largest term)\n",
                source, unit, total, unit, scale > 0 ? fabs(total) / scale : 0.0);
    } else {
        app_say(o, 1, "  (energy balance not available: %s)\n", fem_last_error());
    }
    device_free(d, rdev);
    free(reaction);
    free(flows);
}

int run_heat(Run *r, int check_only) {
    Problem *pb = &r->pb;
    const AppOptions *o = r->o;
    Heat h;
    memset(&h, 0, sizeof h);
    h.r = r;
    h.sp = calloc(1, sizeof *h.sp);
    h.md = calloc(1, sizeof *h.md);
    if (!h.sp || !h.md) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    int status = run_space(r, 1, h.sp);
    if (!status) status = heat_model_create(pb, h.sp, h.md);
    if (!status) status = heat_check_level(pb, h.md);
    if (!status) status = run_check_probes(r, h.sp);
    if (!status && pb->time.scheme != TIME_STEADY)
        for (int i = 0; i < pb->heat.nmaterials && !status; i++)
            if (!(pb->heat.materials[i].density > 0 && pb->heat.materials[i].specific_heat > 0))
                status = fem_fail(FEM_ERR_INPUT,
                                  "%s:%d: a transient run needs density and specific-heat on material '%s'",
                                  pb->path, pb->heat.materials[i].at.line, pb->heat.materials[i].region);
    if (status || check_only) goto done;

    NewtonSettings ns = run_newton_settings(r, h.md->symmetric, h.md->linear);
    r->single_solve = pb->time.scheme == TIME_STEADY;
    app_say(o, 1, "heat: order %d, %lld dofs (%lld fixed), %s with %s preconditioning, %s\n", pb->order,
            (long long)h.sp->ndofs, (long long)h.md->ndir, ksp_name(ns.ksp.type), pc_name(ns.pc.type),
            pb->time.scheme == TIME_STEADY ? "steady" : "transient");
    Device *d = &r->dev;
    status = op_create(&h.op, d, h.sp, &h.md->phys, pb->quadrature_degree, h.md->cell_tags, h.md->facet_tags);
    if (!status) status = op_set_dirichlet(&h.op, h.md->ndir, h.md->dir_dofs);
    if (!status) status = newton_create(&h.nw, &h.op, &ns, run_report, r);
    h.a = -1.0; /* no time discretisation set yet */
    size_t bytes = sizeof(double) * (size_t)h.sp->ndofs;
    h.host = malloc(bytes);
    if (!status && !h.host) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (status) goto done;
    for (int64_t i = 0; i < h.sp->ndofs; i++) h.host[i] = pb->heat.initial_temperature;
    if (pb->time.scheme == TIME_STEADY)
        for (int64_t i = 0; i < h.md->ndir; i++) h.host[h.md->dir_dofs[i]] = h.md->dir_values[i];
    status = device_alloc_copy(d, (void **)&h.u, h.host, bytes);
    int32_t *regions[MESH_MAX_BLOCKS] = {0};
    const char *names[HEAT_MAX_MATERIALS];
    for (int i = 0; i < pb->heat.nmaterials && i < HEAT_MAX_MATERIALS; i++)
        names[i] = pb->heat.materials[i].region;
    if (!status) status = run_region_tags(&r->mesh, h.md, pb->heat.nmaterials, names, regions);
    if (!status) status = results_frame(h.sp, (const int32_t *const *)regions, pb->path, &h.frame);
    run_free_tags(regions);
    if (!status) status = results_open(&h.rs, r->set, pb, &h.frame);
    int opened = !status;
    if (!status && pb->time.scheme == TIME_STEADY) {
        status = heat_solve(&h, NULL, "steady solve");
        if (!status) status = heat_output(&h, 0.0);
    } else if (!status) {
        status = heat_transient(&h);
    }
    if (opened) {
        int cs = results_close(&h.rs, status == FEM_OK);
        if (!status) status = cs;
    }
    if (!status) heat_summary(&h);
    if (!status && pb->elasticity.coupled_temperature) { /* hand the temperature to the elasticity step */
        r->temperature = h.u;
        r->temperature_space = h.sp;
        h.u = NULL;
        h.sp = NULL;
    }
done:
    outframe_destroy(&h.frame);
    newton_destroy(&h.nw);
    if (h.op.dev) op_destroy(&h.op);
    if (h.u) device_free(&r->dev, h.u);
    free(h.host);
    model_destroy(h.md);
    free(h.md);
    if (h.sp) space_destroy(h.sp), free(h.sp);
    return status;
}
