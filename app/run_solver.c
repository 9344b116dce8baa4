/* The solver's side of a run: Newton and Krylov settings from the problem file, the progress lines of long
 * solves, and the counts every solve adds to the run's summary. */
#include "run.h"

#include "fem/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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
                            .symmetric = symmetric,
                            .rebuild_pc = !s->reuse_pc,
                            .linear = linear,
                            .pc = {.type = pc,
                                   .cheb_degree = s->smoothing_degree,
                                   .mg_levels = s->mg_levels,
                                   .coarse = (int)s->coarse,
                                   .coarse_cycles = s->coarse_cycles,
                                   .coarse_precision = (int)s->coarse_precision,
                                   .coarse_inverse = (int)s->coarse_inverse,
                                   .cache_dir = r->order_cache[0] ? r->order_cache : NULL},
                            .ksp = {.type = ksp,
                                    .rtol = s->linear_rtol,
                                    .max_iterations = s->linear_max_iterations,
                                    .restart = s->restart,
                                    .monitor = ksp_progress,
                                    .monitor_ctx = r}};
}

void run_report(void *ctx, const NewtonStep *st) {
    Run *r = ctx;
    if (r->series) run_series_iteration(r->series, st);
    app_say(r->o, r->single_solve ? 1 : 2, "    Newton %2d: |R| = %.3e (%.1e of scale), %4d linear iterations%s, step %.3g, %.2f s\n",
            st->iteration, st->rnorm, st->rnorm / st->scale, st->linear_iterations,
            st->linear_converged ? "" : " (not converged)", st->step, st->seconds);
}

void run_account(Run *r, const NewtonResult *res, const NewtonSettings *ns) {
    r->newton_its += res->iterations;
    r->linear_its += res->linear_iterations;
    r->pc_setups += res->pc_setups;
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

int run_region_tags(const Mesh *m, const Model *md, int32_t **out) {
    int32_t *tag_of = calloc((size_t)md->nregions + 1, sizeof *tag_of); /* each material's physical tag */
    if (!tag_of) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for region tags");
    for (int mat = 0; mat < md->nregions; mat++) {
        const char *name = md->region_names[mat];
        const PhysicalGroup *g = name && name[0] ? mesh_find_group(m, name, m->dim) : NULL;
        tag_of[mat] = g ? g->tag : 0;
    }
    int status = FEM_OK;
    for (int b = 0; b < m->ncell_blocks && !status; b++) {
        out[b] = malloc(sizeof(int32_t) * (size_t)(m->cells[b].count + 1));
        if (!out[b]) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for region tags");
        for (int64_t c = 0; c < m->cells[b].count && !status; c++) {
            int mat = md->cell_tags[b][c];
            out[b][c] = mat >= 0 && mat < md->nregions ? tag_of[mat] : 0;
        }
    }
    free(tag_of);
    return status;
}

void run_free_tags(int32_t **tags) {
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(tags[b]), tags[b] = NULL;
}

