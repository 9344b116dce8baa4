/* One physics of `femto-app run` or `check`, whichever it is (physics/physics.h): space and model, checks,
 * operator, Newton and the stepper, results, and the summary the physics writes. A field that a later physics
 * of the run reads is kept in the Run. */
#include "run.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fem/solvers/coarse.h"
#include "fem/solvers/stepper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Run *r;
    const PhysicsType *t;
    Space *sp;   /* malloc'ed: handed to the Run when a later physics reads the field */
    Model md;    /* the physics' model: on the whole space, or over MPI ranks on the rank's part */
    Operator op; /* the solve's: on the whole space, or on the rank's part over MPI ranks */
    Newton nw;
    Stepper st;
    Vec u;
    double *host; /* the solution on the host, current after each write and before the summary (over MPI
                   * ranks: the initial values only; lhost holds the part's solution) */
    /* over MPI ranks: the rank's part, on which the hooks, the probes and the output's point arrays work
     * (physics.h PhysicsState) */
    RunDist dist;
    double *lhost;     /* the rank's owned and ghost values (host), current after each write */
    const double *aux; /* the field read from an earlier physics (host; over MPI ranks its part), or NULL */
    const double *aux_dev; /* and on the device, every node of the solve's space */
    ResultSeries rs;
    OutFrame frame;
    RunSeries series; /* probes and convergence as CSV (app/run_series.c) */
    PhysicsTrack track;
    int hook_status; /* the first failure inside the stepper's report hook, which cannot return one */
    int have_model, opened;
} PhysicsRun;

static const RunField *find_field(const Run *r, const char *name) {
    for (int i = 0; i < r->nfields; i++)
        if (strcmp(r->fields[i].name, name) == 0) return &r->fields[i];
    return NULL;
}

/* PhysicsState.residual: the solve's operator at the solution (over MPI ranks on the rank's part: its owned
 * dofs, the ghosts zeroed). */
static int residual(const PhysicsState *s, double *r) {
    PhysicsRun *p = s->run;
    Vec R;
    FEM_TRY(vec_duplicate(&R, &p->u));
    int status = op_residual_unconstrained(&p->op, &p->u, &R);
    if (!status) status = vec_download(&R, r);
    vec_destroy(&R);
    for (int64_t i = s->sp->ndofs_owned; i < s->sp->ndofs && !status; i++) r[i] = 0.0;
    return p->dist.on ? comm_agree(status) : status;
}

static PhysicsState state_of(PhysicsRun *p) {
    PhysicsState s = {.pb = &p->r->pb,
                      .sp = p->sp,
                      .md = &p->md,
                      .op = &p->op,
                      .u = &p->u,
                      .u_host = p->host,
                      .aux = p->aux,
                      .aux_dev = p->aux_dev,
                      .track = p->t->transient(&p->r->pb) ? &p->track : NULL,
                      .residual = residual,
                      .run = p};
    if (p->dist.on) { /* the rank's part (physics.h) */
        s.sp = &p->dist.d.space;
        s.u_host = p->lhost;
    }
    return s;
}

/* Over MPI ranks only rank 0 writes the probes, the series and the summary's lines. The output fields, the
 * step hook and the summary run on every rank, each on its part: their evaluations, extremes and balances
 * are collective. */
static int writer(const PhysicsRun *p) {
    return !p->dist.on || comm_rank() == 0;
}

/* The solution on the host: p->host, the whole solution (one process), or over MPI ranks p->lhost, the rank's
 * owned and ghost values (the ghosts made current). */
static int solution_to_host(PhysicsRun *p) {
    if (!p->dist.on) return vec_download(&p->u, p->host);
    int status = halo_forward(&p->dist.halo, &p->u);
    if (!status) status = vec_download(&p->u, p->lhost);
    return comm_agree(status);
}

/* The rows of an output point array: the frame's points (over MPI ranks the rank's piece's). */
static int64_t output_rows(const PhysicsRun *p) {
    return p->dist.on ? p->dist.d.space.nnodes : p->sp->nnodes;
}

/* Over MPI ranks, nodal values v (the unknown's layout, at every node of the rank's part) with each ghost
 * node's values replaced by its owner's, so that every copy of a shared point holds the same bits (values a
 * rank interpolates at a node from its own cells can differ from its neighbour's in the last bits).
 * Collective, with the status of the caller's work (returned when it failed). */
static int ghosts_from_owners(PhysicsRun *p, double *v, int status) {
    const Space *sp = &p->dist.d.space;
    Vec x = {0};
    status = comm_agree(status ? status : vec_create_split(&x, &p->r->dev, sp->ndofs, sp->ndofs_owned));
    if (!status) status = comm_agree(vec_upload(&x, v));
    if (!status) status = halo_forward(&p->dist.halo, &x);
    if (!status) status = vec_download(&x, v);
    vec_destroy(&x);
    return status;
}

/* ghosts_from_owners for n values a node (v: [nnodes][n]), in rounds of the unknown's components. */
static int ghost_points_from_owners(PhysicsRun *p, double *v, int n, int status) {
    const Space *sp = &p->dist.d.space;
    int nc = sp->ncomp;
    double *w = calloc((size_t)sp->ndofs + 1, sizeof *w);
    if (!status && !w) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the output points");
    for (int c0 = 0; c0 < n; c0 += nc) {
        for (int64_t i = 0; w && i < sp->nnodes; i++)
            for (int c = 0; c < nc; c++) w[i * nc + c] = c0 + c < n ? v[i * n + c0 + c] : 0.0;
        status = ghosts_from_owners(p, w, status);
        for (int64_t i = 0; !status && i < sp->nnodes; i++)
            for (int c = 0; c < nc && c0 + c < n; c++) v[i * n + c0 + c] = w[i * nc + c];
    }
    free(w);
    return status;
}

/* ---------------------------------------------------------------- output */

/* The unknown at the output points (vectors padded to three components for ParaView). */
static int add_unknown(PhysicsRun *p) {
    const PhysicsState s = state_of(p); /* over MPI ranks the rank's part */
    int nc = s.sp->ncomp, out = nc > 1 ? 3 : 1;
    int64_t nn = output_rows(p);
    double *vals = malloc(sizeof(double) * (size_t)(s.sp->nnodes * nc + 1)),
           *pad = calloc((size_t)(nn * out + 1), sizeof(double));
    int status = vals && pad ? results_nodal_field(s.sp, s.u_host, nc, vals)
                             : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (p->dist.on && s.sp->order > 2) status = ghosts_from_owners(p, vals, status);
    for (int64_t n = 0; n < nn && !status; n++)
        for (int c = 0; c < nc; c++) pad[n * out + c] = vals[n * nc + c];
    if (!status) status = results_add_point_array(&p->frame, p->t->field, p->t->unit, out, nn, pad);
    free(vals);
    free(pad);
    return status;
}

/* The x of the time series: the time of a transient run, else the load factor (a steady solve without load
 * steps is the full load, written by the stepper at time 0). */
static double series_x(const PhysicsRun *p, double t) {
    return p->t->transient(&p->r->pb) || p->t->set_load ? t : 1.0;
}

/* The solution and derived fields at the output points, into the frame (over MPI ranks each rank's part, into
 * the rows of its piece), and the probes' row (rank 0's series). */
static int frame_fields(PhysicsRun *p, double time) {
    PhysicsState s = state_of(p); /* (over MPI ranks the probes are collective, on the ranks' parts) */
    FEM_TRY(run_series_probes(writer(p) ? &p->series : NULL, p->r, s.sp, s.u_host, series_x(p, time)));
    if (!p->r->pb.output.vtu && !p->r->pb.output.hdf5) return FEM_OK; /* nothing to write: no fields either */
    NodalField fields[PHYSICS_MAX_FIELDS];
    int n = 0;
    double t = app_seconds();
    int status = add_unknown(p);
    if (p->dist.on) status = comm_agree(status); /* the fields' evaluations are collective */
    if (!status) status = p->t->fields(&s, fields, &n);
    run_tick(p->r, PHASE_FIELDS, t);
    for (int i = 0; i < n; i++) {
        if (!status)
            status = results_add_point_array(&p->frame, fields[i].name, fields[i].unit, fields[i].ncomp,
                                             output_rows(p), fields[i].data);
        free(fields[i].data);
    }
    return status;
}

/* Over MPI ranks every rank writes its piece (io/results.h) of the fields the ranks computed together. */
static int write_frame(PhysicsRun *p, double time) {
    FEM_TRY(solution_to_host(p));
    int status = frame_fields(p, time);
    if (p->dist.on) status = comm_agree(status); /* the write below is collective */
    double t = app_seconds();
    if (!status && (p->r->pb.output.vtu || p->r->pb.output.hdf5))
        status = results_write(&p->rs, time, &p->frame);
    for (int i = 0; i < p->frame.npoint_arrays; i++) free(p->frame.point[i].data);
    p->frame.npoint_arrays = 0;
    run_tick(p->r, PHASE_WRITE, t);
    return status;
}

/* The stepper's write hook: results at a time or load factor, timed as output. */
static int write_hook(void *ctx, double time) {
    PhysicsRun *p = ctx;
    double t0 = app_seconds();
    int status = write_frame(p, time);
    p->r->t_output += app_seconds() - t0;
    return p->dist.on ? comm_agree(status) : status; /* rank 0 wrote: every rank goes on, or none */
}

/* ---------------------------------------------------------------- the stepper's other hooks */

static int load_hook(void *ctx, double L) {
    PhysicsRun *p = ctx;
    p->t->set_load(&p->md, L);
    return FEM_OK;
}

static int time_hook(void *ctx, double a, double theta) {
    PhysicsRun *p = ctx;
    p->t->set_time(&p->md, a, theta);
    return FEM_OK;
}

/* After a time step: what the physics accumulates over time (heat through its boundaries). Over MPI ranks
 * every rank gathers and accumulates, whatever its status, so that no rank waits for another (the ranks
 * agree on every status in the hook's evaluations and in the write hook). */
static int track_step(PhysicsRun *p, const StepReport *s) {
    if (s->kind != STEP_TIME || !p->t->step || s->failed) return FEM_OK;
    FEM_TRY(solution_to_host(p));
    if (p->hook_status) return FEM_OK;
    PhysicsState st = state_of(p);
    return p->t->step(&st, s->t);
}

/* One line per solve: what was solved, Newton's iterations and residuals, the linear iterations, seconds. */
static void step_hook(void *ctx, const StepReport *s) {
    PhysicsRun *p = ctx;
    int tracked = track_step(p, s);
    if (!p->hook_status) p->hook_status = tracked;
    if (!writer(p)) return;
    const NewtonResult *res = s->newton;
    run_account(p->r, res, &p->nw.set);
    run_series_solve(&p->series, s, series_x(p, s->t));
    char what[96];
    if (s->kind == STEP_TIME)
        snprintf(what, sizeof what, "step %d/%d, t = %.6g s", s->index, s->count, s->t);
    else if (s->kind == STEP_LOAD)
        snprintf(what, sizeof what, "load %.4g", s->t);
    else
        snprintf(what, sizeof what, "steady solve");
    if (s->failed) {
        app_say(p->r->o, 1, "%s: Newton did not converge (%s); cutting the increment to %.4g\n", what,
                res->reason, s->next);
        return;
    }
    app_say(p->r->o, 1, "%s: Newton %d iteration%s (|R| %.2e -> %.2e), %d %s iterations, %.2f s\n", what,
            res->iterations, res->iterations == 1 ? "" : "s", res->rnorm0, res->rnorm, res->linear_iterations,
            ksp_name(p->nw.set.ksp.type), s->seconds);
}

/* ---------------------------------------------------------------- setup, solve, summary */

/* The model on the solve's space, joined over MPI ranks (model_join_part), and the physics' checks of it.
 * Collective over MPI ranks (they agree on the status before each collective step). */
static int make_model(PhysicsRun *p) {
    const Problem *pb = &p->r->pb;
    const Space *sp = p->dist.on ? &p->dist.d.space : p->sp;
    int status = p->t->create(pb, sp, &p->md);
    p->have_model = !status;
    if (p->dist.on) status = comm_agree(status);
    if (!status && p->dist.on) status = model_join_part(&p->md, &p->dist.d);
    if (!status) status = p->t->check(pb, sp, &p->md);
    return p->dist.on ? comm_agree(status) : status;
}

/* Over MPI ranks: rank 0's count of the whole space's nodes into the other ranks' outlines of it. */
static int share_space_size(Space *sp) {
    int64_t n = sp->nnodes;
    FEM_TRY(comm_bcast(&n, sizeof n, 0));
    if (sp->mesh->outline) sp->nnodes = sp->nnodes_owned = n, sp->ndofs = sp->ndofs_owned = n * sp->ncomp;
    return FEM_OK;
}

/* Space (over MPI ranks rank 0's, the others' its outline), the rank's part of it, the model and the checks
 * that `check` runs too. */
static int prepare(PhysicsRun *p) {
    Run *r = p->r;
    const PhysicsType *t = p->t;
    int split = comm_size() > 1;
    p->sp = calloc(1, sizeof *p->sp);
    if (!p->sp) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    double t0 = app_seconds();
    int status = run_space(r, t->components ? r->mesh.dim : 1, p->sp);
    if (status) free(p->sp), p->sp = NULL;
    t0 = run_tick(r, PHASE_SPACE, t0);
    if (split) { /* the partition and the rank's part of the space (the model is made on it) */
        status = comm_agree(status);
        if (!status) status = share_space_size(p->sp);
        if (!status) status = run_dist_setup(&p->dist, p->sp);
        status = comm_agree(status);
        t0 = run_tick(r, PHASE_RANKS, t0);
    }
    FEM_TRY(status);
    FEM_TRY(make_model(p));
    status = !split || comm_rank() == 0 ? run_check_probes(r, p->sp) : FEM_OK; /* rank 0 holds the mesh */
    /* over MPI ranks the whole space has served (the parts are made, the probes checked): rank 0 too keeps
     * its outline only (multigrid makes its coarser orders' parts from the mesh) */
    if (split && !status && !p->sp->mesh->outline) {
        Space o;
        status = space_outline(p->sp->mesh, p->sp->order, p->sp->ncomp, p->sp->nnodes, &o);
        space_destroy(p->sp);
        *p->sp = o;
    }
    run_tick(r, PHASE_MODEL, t0);
    return status;
}

/* The field an earlier physics solved, as this one's auxiliary field (device and host). */
static int read_field(PhysicsRun *p) {
    const char *name = p->t->reads(&p->r->pb);
    if (!name) return FEM_OK;
    const RunField *f = find_field(p->r, name);
    if (!f)
        return fem_fail(FEM_ERR_INTERNAL, "the %s field that %s reads was not computed", name, p->t->name);
    /* over MPI ranks f is the keeper's part of the field, which must be on the same nodes as this physics'
     * part (the same mesh, order and partition make the same parts) */
    const Dist *d = p->dist.on ? &p->dist.d : NULL;
    if (d && (!f->node_global || f->nlocal != d->space.nnodes ||
              memcmp(f->node_global, d->node_global, sizeof(int64_t) * (size_t)d->space.nnodes) != 0))
        return fem_fail(FEM_ERR_INTERNAL, "rank %d's part of the %s field is not on %s's part", d->rank, name,
                        p->t->name);
    p->aux = f->host;
    p->aux_dev = f->u.data;
    p->op.aux = f->u.data;
    return FEM_OK;
}

/* An operator of the model md on space sp, with its constrained dofs and, over MPI ranks, its halo. */
static int model_operator(PhysicsRun *p, Operator *op, const Space *sp, const Model *md, Halo *halo) {
    FEM_TRY(
        op_create(op, &p->r->dev, sp, &md->phys, p->r->pb.quadrature_degree, md->cell_tags, md->facet_tags));
    op_set_halo(op, halo);
    return op_set_dirichlet(op, md->ndir, md->dir_dofs);
}

/* The solve's operator, Newton and solution vector: on the whole space, or over MPI ranks on this rank's part
 * (and the whole solution, which the output and the summary read, with the whole space's evaluations shared
 * over the ranks). */
static int build_solver(PhysicsRun *p, const NewtonSettings *ns) {
    Run *r = p->r;
    const Space *sp = p->dist.on ? &p->dist.d.space : p->sp;
    FEM_TRY(model_operator(p, &p->op, sp, &p->md, p->dist.on ? &p->dist.halo : NULL));
    if (p->dist.on) FEM_ALLOC(p->lhost, sp->ndofs + 1, "the rank's solution");
    FEM_TRY(read_field(p));
    FEM_TRY(newton_create(&p->nw, &p->op, ns, writer(p) ? run_report : NULL, r));
    FEM_TRY(vec_create_split(&p->u, &r->dev, sp->ndofs, sp->ndofs_owned));
    FEM_ALLOC(p->host, sp->ndofs + 1, "the solution");
    double u0 = p->t->initial(&r->pb);
    for (int64_t i = 0; i < sp->ndofs; i++) p->host[i] = u0;
    return vec_upload(&p->u, p->host); /* the first of the host's values: as many as the solve's space has */
}

/* Operator, Newton, the solution vector and the results series (over MPI ranks every rank opens the series:
 * it writes its piece of each output time). */
static int build(PhysicsRun *p, const NewtonSettings *ns, int series) {
    Run *r = p->r;
    const Problem *pb = &r->pb;
    double t0 = app_seconds();
    int status = build_solver(p, ns);
    if (p->dist.on) status = comm_agree(status); /* opening the results is collective */
    FEM_TRY(status);
    t0 = run_tick(r, PHASE_OPERATOR, t0);
    int32_t *regions[MESH_MAX_BLOCKS] = {0};
    /* the output mesh, only where something is written: over MPI ranks the rank's piece, made from its part
     * (io/output.h OutPart), its ghost points at their owners' coordinates */
    const Space *osp = p->dist.on ? &p->dist.d.space : p->sp;
    if (pb->output.vtu || pb->output.hdf5) {
        status = run_region_tags(osp->mesh, &p->md, regions);
        if (!status) status = results_frame(osp, (const int32_t *const *)regions, pb->path, &p->frame);
        run_free_tags(regions);
        if (p->dist.on) status = ghost_points_from_owners(p, p->frame.x, 3, status);
    }
    if (p->dist.on) status = comm_agree(status);
    FEM_TRY(status);
    FEM_TRY(results_open_part(&p->rs, r->set, pb, series ? p->t->name : NULL, &p->frame,
                              p->dist.on ? &p->dist.out : NULL));
    p->opened = 1;
    run_tick(r, PHASE_RESULTS, t0);
    return writer(p) ? run_series_open(&p->series, r, p->t, p->sp) : FEM_OK;
}

static int solve(PhysicsRun *p) {
    Run *r = p->r;
    const Problem *pb = &r->pb;
    const PhysicsType *t = p->t;
    StepperHooks hooks = {p, t->set_load ? load_hook : NULL, t->set_time ? time_hook : NULL, write_hook,
                          step_hook};
    FEM_TRY(stepper_create(&p->st, &p->op, &p->nw, &p->u, !p->md.linear, p->md.ndir, p->md.dir_dofs,
                           p->md.dir_values, &hooks));
    int status;
    if (t->transient(pb)) {
        static const StepScheme schemes[] = {[TIME_BACKWARD_EULER] = TIME_SCHEME_BACKWARD_EULER,
                                             [TIME_BDF2] = TIME_SCHEME_BDF2,
                                             [TIME_CRANK_NICOLSON] = TIME_SCHEME_CRANK_NICOLSON};
        TimeStepping ts = {schemes[pb->time.scheme], pb->time.start, pb->time.end, pb->time.step,
                           pb->time.output_every};
        status = stepper_transient(&p->st, &ts);
    } else {
        status = stepper_steady(&p->st, pb->solver.load_steps);
    }
    r->t_solve += p->st.solve_seconds;
    if (!status) status = p->hook_status;
    if (status != FEM_ERR_SOLVER) return status;
    /* the failing solve was not reported: its counts and warnings now, and the physics named */
    run_account(r, &p->st.last, &p->nw.set);
    const char *why = fem_last_error(), *newton = "Newton did not converge: ";
    if (strncmp(why, newton, strlen(newton)) == 0) why += strlen(newton);
    return fem_fail(FEM_ERR_SOLVER, "the %s solve did not converge: %s", t->name, why);
}

static void summary_line(void *ctx, const char *text) {
    app_say(((Run *)ctx)->o, 1, "%s", text);
}

static void summary_key(void *ctx, const char *key, double value, const char *unit) {
    summary_add(&((Run *)ctx)->summary, key, value, unit);
}

/* The physics' summary, then what every physics shares: solver counts, preconditioner, probes. */
static void summary(PhysicsRun *p, const char *model) {
    Run *r = p->r;
    const Stepper *st = &p->st;
    if (!p->dist.on && vec_download(&p->u, p->host)) return; /* over MPI ranks: lhost, since the last write */
    app_say(r->o, 1, "summary (%s, %s):\n", p->t->name, model);
    Report rep = {r, summary_line, summary_key, &r->warnings};
    PhysicsState s = state_of(p);
    if (p->t->summary(&s, &rep)) app_say(r->o, 1, "  (summary not available: %s)\n", fem_last_error());
    fem_clear_error();
    app_say(
        r->o, 1,
        "  solver: %d step%s (%d cut back), %d Newton iteration%s, %d linear iteration%s, %d preconditioner "
        "setup%s\n",
        st->steps, st->steps == 1 ? "" : "s", st->cutbacks, st->newton_iterations,
        st->newton_iterations == 1 ? "" : "s", st->linear_iterations, st->linear_iterations == 1 ? "" : "s",
        st->pc_setups, st->pc_setups == 1 ? "" : "s");
    app_say(r->o, 1, "  preconditioner: %s; operator: %s\n", pc_describe(&p->nw.pc), p->op.implementation);
    char key[PROBLEM_NAME_MAX];
    snprintf(key, sizeof key, "%s_newton_iterations", p->t->name);
    summary_add(&r->summary, key, st->newton_iterations, "");
    run_report_probes(r, s.sp, s.u_host, p->t->field, p->t->components, p->t->unit); /* collective */
}

/* The time series' files, timed as output. */
static int write_series(PhysicsRun *p, int series) {
    double t0 = app_seconds();
    int status = run_series_write(&p->series, p->r, series ? p->t->name : NULL);
    p->r->t_output += app_seconds() - t0;
    return status;
}

/* A later physics reads this one's field: the Run keeps it (device and host) and its space. */
static int keep_field(PhysicsRun *p) {
    Run *r = p->r;
    if (r->nfields >= RUN_MAX_FIELDS)
        return fem_fail(FEM_ERR_INTERNAL, "too many fields kept across physics");
    /* over MPI ranks the Run keeps the rank's part: its nodes' values (the ghosts current) and their whole
     * numbers (collective) */
    int64_t *ng = NULL, n = p->dist.on ? p->dist.d.space.nnodes : 0;
    if (p->dist.on) {
        FEM_TRY(solution_to_host(p));
        FEM_ALLOC(ng, n + 1, "the kept field's nodes");
        memcpy(ng, p->dist.d.node_global, sizeof(int64_t) * (size_t)n);
        free(p->host);
        p->host = p->lhost;
        p->lhost = NULL;
    }
    RunField *f = &r->fields[r->nfields++];
    *f = (RunField){p->t->field, p->sp, p->u, p->host, n, ng};
    p->sp = NULL;
    p->host = NULL;
    memset(&p->u, 0, sizeof p->u);
    return FEM_OK;
}

static int read_later(const Run *r, const PhysicsType *t) {
    int after = 0;
    for (int i = 0; i < physics_ntypes; i++) {
        const PhysicsType *o = physics_types[i];
        if (o == t)
            after = 1;
        else if (after && problem_has_physics(&r->pb, o->name) && o->reads(&r->pb) &&
                 strcmp(o->reads(&r->pb), t->field) == 0)
            return 1;
    }
    return 0;
}

static void release(PhysicsRun *p) {
    if (p->r->series == &p->series) p->r->series = NULL;
    run_series_destroy(&p->series);
    outframe_destroy(&p->frame);
    stepper_destroy(&p->st);
    newton_destroy(&p->nw);
    if (p->op.dev) op_destroy(&p->op);
    run_dist_destroy(&p->dist);
    vec_destroy(&p->u);
    free(p->host);
    free(p->lhost);
    if (p->have_model) model_destroy(&p->md);
    if (p->sp) space_destroy(p->sp), free(p->sp);
}

/* Over MPI ranks: the halo of the rank's part (made in prepare). Every preconditioner works across ranks;
 * multigrid's coarse level goes to the solver one process would use, gathered to rank 0, or to BoomerAMG over
 * all ranks when it is too large to gather (fem/solvers/coarse_gather.h); the preconditioner line says which.
 */
static int split_over_ranks(PhysicsRun *p) {
    Run *r = p->r;
    FEM_TRY(run_dist_halo(&p->dist, &r->dev));
    char halo[320];
    halo_describe(&p->dist.halo, halo, sizeof halo);
    app_say(r->o, 2, "halo: %s\n", halo);
    return FEM_OK;
}

int run_physics(Run *r, const PhysicsType *t, int series, int check_only) {
    PhysicsRun p;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.t = t;
    int split = comm_size() > 1;
    int status = prepare(&p);
    if (!status && !check_only) status = run_device_ready(r); /* started while the host built the above */
    if (split) status = comm_agree(status);
    if (status || check_only) return release(&p), status;
    char model[96];
    t->describe(&r->pb, &p.md, model, sizeof model);
    NewtonSettings ns = run_newton_settings(r, p.md.symmetric, p.md.linear);
    /* <linear coarse-inverse="auto">: the coarse level's explicit inverse where one preconditioner serves
     * every time step (a linear time-dependent problem); computing it costs more than one solve's V-cycles
     * save */
    if (r->pb.solver.coarse_inverse == EXPLICIT_INVERSE_AUTO && !(t->transient(&r->pb) && p.md.linear))
        ns.pc.coarse_inverse = COARSE_INVERSE_NO;
    r->single_solve = !t->transient(&r->pb) && (p.md.linear || r->pb.solver.load_steps <= 1);
    int64_t fixed = 0;
    if (split) {
        double t0 = app_seconds();
        status = comm_agree(split_over_ranks(&p));
        run_tick(r, PHASE_RANKS, t0);
    }
    if (!status) status = model_count_dirichlet(&p.md, &fixed); /* (collective over MPI ranks) */
    app_say(r->o, 1, "%s (%s): order %d, %lld dofs (%lld fixed), %s with %s preconditioning", t->name, model,
            r->pb.order, (long long)p.sp->ndofs, (long long)fixed, ksp_name(ns.ksp.type),
            pc_name(ns.pc.type));
    if (split)
        app_say(r->o, 1, ", over %d MPI ranks\n", comm_size());
    else
        app_say(r->o, 1, "\n");
    if (!status) status = build(&p, &ns, series);
    if (split) status = comm_agree(status);
    r->series = &p.series;
    if (!status) status = solve(&p);
    if (split) status = comm_agree(status); /* closing the results is collective */
    if (p.opened) {
        int cs = results_close(&p.rs, status == FEM_OK);
        if (!status) status = cs;
    }
    /* the plots draw in their children while the summary is computed; write_series waits for them */
    if (!status && writer(&p)) run_series_plot(&p.series, r, series ? t->name : NULL);
    double t0 = app_seconds();
    if (!status) summary(&p, model); /* over MPI ranks on every rank's part: its evaluations are collective */
    run_tick(r, PHASE_SUMMARY, t0);
    if (!status && writer(&p)) status = write_series(&p, series);
    if (split) status = comm_agree(status); /* rank 0 wrote the series; keeping the field is collective */
    if (!status && read_later(r, t)) status = keep_field(&p);
    if (split) status = comm_agree(status);
    release(&p);
    return status;
}
