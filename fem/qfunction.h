/* Q-point functions: the physics at every quadrature point of a block, and the glue that maps between the
 * reference cell and physical space so that a physics only ever sees physical quantities.
 *
 * The residual of a physics is R(u) = sum over cells of int s . v + f : grad v, plus sum over boundary
 * facets of int s . v. At each q-point a physics turns (u, grad u) into (s, f) and stores what its
 * linearisation needs (state); the Jacobian q-function turns a direction (du, grad du) into (ds, df) from
 * that state. The helpers below read inputs (gradients mapped to physical space) and write outputs (weighted
 * by w det J and mapped back to reference gradients), so a physics point function is a few lines of FEM_HD
 * code that both the CPU loop (FEM_QF_CPU) and a CUDA kernel (gpu/qfunction.cuh, FEM_QF_CUDA) run. */
#ifndef FEMTO_QFUNCTION_H
#define FEMTO_QFUNCTION_H

#include "geometry.h"
#include "hd.h"

FEM_EXTERN_C_BEGIN

enum { QF_MAX_COMP = 3 };

typedef struct {
    int64_t n;         /* q-points: elements x nq */
    int nq, dim, rdim; /* q-points per element, space dimension, reference dimension (dim - 1 on facets) */
    int ncomp, nstate;
    int threads;        /* CPU loops */
    int residual;       /* 1: residual (writes state, subtracts src); 0: Jacobian action */
    const double *u;    /* [n][ncomp] values (or direction) */
    const double *du;   /* [n][ncomp][rdim] reference gradients */
    const double *geo;  /* cells [n][GEO_STRIDE(dim)], facets [n][FGEO_STRIDE] */
    const double *x;    /* [n][3] physical coordinates, or NULL */
    const double *aux;  /* [n] an extra scalar field (history term, temperature), or NULL */
    const double *src;  /* [n][ncomp] extra source added to -s (manufactured solutions), or NULL */
    const int32_t *tag; /* [n / nq] material (cells) or boundary condition (facets) of each element */
    const void *ctx;    /* the physics' constants, in the memory of the device that runs this */
    double *s;          /* [n][ncomp] (an output q-function: [n][nout]) */
    double *f;          /* [n][ncomp][rdim] (cells only) */
    double *state;      /* [n][nstate] */
    int nout;           /* an output q-function's values per point (fem/evaluate.h); 0 otherwise */
    int weighted;       /* ... multiplied by the point's weight (w det J, or w dA on facets): an integrand */
} QfArgs;

/* A q-point function over a block, on one device: a backend's instance of a FEM_HD point function. */
typedef int (*QfFn)(const QfArgs *a);

/* ---- what a q-function is, for the operator that runs it and for the reader

 * A physics writes each point function once, in a FEM_HD header, and lists it in physics/qfunctions.h; every
 * backend instantiates that list into its own table of QfFn (cpu/qfunctions.c, gpu/qfunctions.cu), indexed by
 * the q-function's id. The descriptor names the fields it reads and writes, so the operator knows what to
 * interpolate at the q-points (the unknown's values and gradients, an auxiliary field, coordinates) and what
 * to integrate (s against test values, f against test gradients). */
enum { QF_VALUE = 1, QF_GRAD = 2 };
typedef enum { QF_UNKNOWN = 0, QF_AUX = 1, QF_COORDS = 2 } QfFieldKind;
typedef struct {
    const char *name; /* "T", "u", "T_history", "x": for people and messages */
    QfFieldKind kind;
    unsigned eval; /* QF_VALUE | QF_GRAD */
} QfField;

/* A compact q-point data form of a Jacobian q-function (what libCEED's Poisson operators store): where the
 * linearisation does not depend on the state (a linear, constant-coefficient physics), everything the
 * Jacobian action needs from the geometry and the constants at a q-point is folded once, at operator setup,
 * into a few doubles (for heat: the symmetric D = k w det J J^-1 A J^-T, 6 doubles in 3D instead of the
 * geometry's 10), and a second point function applies it in reference coordinates. Both are FEM_HD functions
 * of the physics' header; backends that serve it (the fused kernels) pass the qdata where the point function
 * reads `geo`.
 *
 * setup(a, i) runs on the host at q-point i: it reads a->geo (the cells' geometry), a->tag and a->ctx and
 * writes qf_geo_doubles(layout, dim) doubles at a->s + i * that. apply is the id of the point function
 * (physics/qfunctions.h) that reads them from a->geo instead of the geometry, with the same inputs and
 * outputs as the Jacobian q-function it stands for; it reads nothing else per point or element (no state,
 * tag, coordinates or auxiliary field), so that a kernel need not pass those. valid(ctx) says whether the
 * compact form is exact for the physics' constants now (host; checked at setup and at every application,
 * since a physics may change its constants between them). */
enum { QF_QDATA_SYM = 1 }; /* layouts: a symmetric dim x dim matrix, upper triangle by rows */
typedef struct {
    int apply;
    int layout;
    void (*setup)(const QfArgs *a, int64_t i);
    int (*valid)(const void *ctx);
} QfQdata;

/* Doubles per q-point of a point function's `geo` records: the cells' geometry (layout 0) or a qdata layout
 * (the macro: a constant expression, for kernels specialised on it). */
#define QF_GEO_DOUBLES(layout, dim) ((layout) == QF_QDATA_SYM ? (dim) * ((dim) + 1) / 2 : GEO_STRIDE(dim))
FEM_HD static inline int qf_geo_doubles(int layout, int dim) {
    return QF_GEO_DOUBLES(layout, dim);
}

/* Index of entry (r, s), r <= s, of a symmetric d x d matrix stored as its upper triangle by rows. */
FEM_HD static inline int qf_sym_index(int d, int r, int s) {
    return r * d - r * (r - 1) / 2 + (s - r);
}

enum { QF_MAX_INPUTS = 3 };
typedef struct {
    int id;           /* index into the backends' tables; a descriptor with name NULL is "none" */
    const char *name; /* "heat_cell_residual" */
    QfField in[QF_MAX_INPUTS];
    QfField out; /* eval QF_VALUE: s; QF_GRAD: f (without QF_VALUE the point function writes s = 0) */
    int zero;    /* its output is identically zero (a dead load's Jacobian): operators skip its blocks */
    const QfQdata *qdata; /* a cell Jacobian's compact q-point data form, or NULL */
} QFunction;

/* What the descriptor reads: eval bits of its unknown, and whether it reads an aux field / coordinates. */
FEM_HD static inline unsigned qf_reads(const QFunction *q, QfFieldKind kind) {
    unsigned e = 0;
    for (int k = 0; k < QF_MAX_INPUTS; k++)
        if (q->in[k].name && q->in[k].kind == kind) e |= q->in[k].eval ? q->in[k].eval : (unsigned)QF_VALUE;
    return e;
}

/* ---- cells */

/* u[c] and physical gradients g[c][b] at q-point i. */
FEM_HD static inline void qf_cell_in(const QfArgs *a, int64_t i, double *u, double *g) {
    int d = a->dim, nc = a->ncomp;
    const double *Jinv = a->geo + i * GEO_STRIDE(d) + 1;
    for (int c = 0; c < nc; c++) {
        u[c] = a->u[i * nc + c];
        const double *dr = a->du + (i * nc + c) * d;
        for (int b = 0; b < d; b++) {
            double v = 0.0;
            for (int r = 0; r < d; r++) v += dr[r] * Jinv[r * d + b];
            g[c * d + b] = v;
        }
    }
}

/* Writes s[c] and f[c][b] (physical) as reference-space integrand coefficients. */
FEM_HD static inline void qf_cell_out(const QfArgs *a, int64_t i, const double *s, const double *f) {
    int d = a->dim, nc = a->ncomp;
    const double *geo = a->geo + i * GEO_STRIDE(d);
    double w = geo[0];
    const double *Jinv = geo + 1;
    for (int c = 0; c < nc; c++) {
        double sc = s[c];
        if (a->residual && a->src) sc -= a->src[i * nc + c];
        a->s[i * nc + c] = w * sc;
        double *fr = a->f + (i * nc + c) * d;
        for (int r = 0; r < d; r++) {
            double v = 0.0;
            for (int b = 0; b < d; b++) v += Jinv[r * d + b] * f[c * d + b];
            fr[r] = w * v;
        }
    }
}

/* ---- facets: values only, plus the geometry a boundary condition may need */

FEM_HD static inline const double *qf_facet_geo(const QfArgs *a, int64_t i) {
    return a->geo + i * FGEO_STRIDE;
}

FEM_HD static inline void qf_facet_out(const QfArgs *a, int64_t i, const double *s) {
    double w = qf_facet_geo(a, i)[FGEO_WDA];
    for (int c = 0; c < a->ncomp; c++) a->s[i * a->ncomp + c] = w * s[c];
}

/* ---- output q-functions (fem/evaluate.h): nout values per point, weighted when they are integrated */

FEM_HD static inline void qf_output(const QfArgs *a, int64_t i, int facet, const double *vals) {
    double w = 1.0;
    if (a->weighted) w = facet ? a->geo[i * FGEO_STRIDE + FGEO_WDA] : a->geo[i * GEO_STRIDE(a->dim)];
    for (int k = 0; k < a->nout; k++) a->s[i * a->nout + k] = w * vals[k];
}

/* The element (for tag lookups) of q-point i. */
FEM_HD static inline int32_t qf_tag(const QfArgs *a, int64_t i) {
    return a->tag ? a->tag[i / a->nq] : 0;
}

/* The cells' geometry at evaluation points, from the mesh's coordinate field (fem/evaluate.c): reads the
 * reference gradients of the coordinates, du [n][3][rdim] (ncomp 3: dX_a/dxi_r), and the points' weights, ctx
 * [nq]; writes s [n][GEO_STRIDE(dim)] as geometry_cells does (w det J, J^-1) and state [n]: 1 where det J is
 * not positive, else 0. Not a physics: physics/qfunctions.h's list starts with FEMTO_FEM_QFUNCTIONS, so every
 * backend instantiates it and its id is QF_ID_GEOMETRY. */
#define FEMTO_FEM_QFUNCTIONS(X) X(geometry_out)
enum { QF_ID_GEOMETRY = 0 };
FEM_HD static inline void geometry_out(const QfArgs *a, int64_t i) {
    int d = a->dim, rd = a->rdim;
    double J[9], *g = a->s + i * GEO_STRIDE(d);
    for (int p = 0; p < d; p++)
        for (int r = 0; r < d; r++) J[p * d + r] = a->du[(i * 3 + p) * rd + r];
    double det = geometry_invert(d, J, g + 1);
    g[0] = ((const double *)a->ctx)[i % a->nq] * det;
    a->state[i] = det > 0.0 ? 0.0 : 1.0;
}

/* Defines `int name(const QfArgs *a)` running `point(a, i)` over every q-point on the CPU. */
#define FEM_QF_CPU(name, point)                                                                              \
    int name(const QfArgs *a) {                                                                              \
        _Pragma(                                                                                             \
            "omp parallel for num_threads(a->threads) schedule(static) if (a->n > 20000)") for (int64_t i =  \
                                                                                                    0;       \
                                                                                                i < a->n;    \
                                                                                                i++)         \
            point(a, i);                                                                                     \
        return 0;                                                                                            \
    }

FEM_EXTERN_C_END

#endif
