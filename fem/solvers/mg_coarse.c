/* The coarsest multigrid level (see multigrid.h). */
#include "multigrid.h"

#include "fem/error.h"

#include <stdio.h>
#include <string.h>

enum { COARSE_CHEB_DEGREE = 8 };

int mg_coarse_setup(MgCoarse *c, Operator *op, const Vec *diag, const PcSettings *set) {
    (void)set;
    c->op = op;
    if (!c->have_cheb) {
        FEM_TRY(chebyshev_create(&c->cheb, diag, COARSE_CHEB_DEGREE));
        c->have_cheb = 1;
    }
    snprintf(c->description, sizeof c->description, "Chebyshev(%d)", COARSE_CHEB_DEGREE);
    return chebyshev_setup(&c->cheb, op_linop(op), diag, 0.0);
}

int mg_coarse_apply(MgCoarse *c, const Vec *b, Vec *x) {
    return chebyshev_apply(&c->cheb, op_linop(c->op), b, x);
}

const char *mg_coarse_describe(const MgCoarse *c) {
    return c->description;
}

void mg_coarse_destroy(MgCoarse *c) {
    if (c->have_cheb) chebyshev_destroy(&c->cheb);
    memset(c, 0, sizeof *c);
}
