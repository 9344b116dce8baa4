/* Reaction-diffusion at one q-point: R(u) = int k grad u . grad v + (c u - f) v. The residual is affine in u,
 * so one point function serves as residual and as Jacobian action (which drops f). FEM_HD: every backend
 * instantiates it from physics/qfunctions.h. */
#ifndef FEMTO_REACTION_DIFFUSION_QF_H
#define FEMTO_REACTION_DIFFUSION_QF_H

#include "fem/qfunction.h"
#include "physics/reaction_diffusion.h"

enum { RD_MAX_MATERIALS = 32 };

typedef struct {
    int nmat;
    ReactionMaterial mat[RD_MAX_MATERIALS]; /* the records as the problem reader stored them */
} ReactionCtx;

FEM_HD static inline void rd_cell(const QfArgs *a, int64_t i) {
    const ReactionCtx *ctx = (const ReactionCtx *)a->ctx;
    const ReactionMaterial *m = &ctx->mat[qf_tag(a, i)];
    double u = 0.0, g[3] = {0, 0, 0}, f[3];
    qf_cell_in(a, i, &u, g);
    for (int b = 0; b < a->dim; b++) f[b] = m->diffusivity * g[b];
    double s = m->reaction * u - (a->residual ? m->source : 0.0);
    qf_cell_out(a, i, &s, f);
}

#endif
