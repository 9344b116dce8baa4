/* Evaluations of a solved field by a physics' output q-functions, on the device that solved it: derived
 * fields at the output points (heat flux, stress), and integrals over cells or over the facets of a boundary
 * (heat flows, applied loads, energies). An output q-function is a FEM_HD point function like the operator's
 * (fem/qfunction.h, listed in physics/qfunctions.h, so every backend has it) that reads the field's value and
 * gradient (and an auxiliary field) at a point and writes nout values through qf_output; here the points are
 * the output lattice (nodal fields, averaged over the cells that share a node) or a quadrature rule
 * (integrals, weighted). Probes, single points found by a search, are fem/probe.h. */
#ifndef FEMTO_EVALUATE_H
#define FEMTO_EVALUATE_H

#include "dist.h"
#include "mesh.h"
#include "operator.h"
#include "space.h"
#include "vec.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    QFunction qf;     /* its descriptor: the device instance by id, what it reads */
    int nout;         /* values per point */
    const void *ctx;  /* its constants (copied to the device) */
    size_t ctx_bytes;
} OutputFn;

/* The solved field and what the physics' q-functions need beside it. */
typedef struct {
    const Space *sp;
    const Vec *u;                /* the field (device), sp->ndofs */
    const double *aux;           /* an auxiliary scalar field (device, sp->nnodes values) or NULL */
    int32_t *const *cell_tags;   /* material of every cell (host, per cell block) */
    int qdegree;                 /* quadrature of integrals (0: the operator's rule for phys) */
    const OpPhysics *phys;       /* the physics whose operator's rule picks the degree (NULL: 2p + g - 1) */
    /* Over MPI ranks, the rank's part that sp is (sp == &dist->space; u holds its owned and ghost dofs, the
     * ghosts current): every evaluation is collective, each rank evaluating its own cells and facets, the
     * integrals summed over the ranks, and a node another rank shares (Dist.share) averaged over the cells of
     * every rank around it, so that each rank holds the whole field's values at its nodes. NULL: sp is the
     * whole space, evaluated by this process alone. */
    const Dist *dist;
} EvalField;

/* out[node][k] (host, sp->nnodes x nout): fn at every node, averaged over the cells that share it; the nodes
 * at their equispaced lattice positions (equispaced = 1: where femto's output points are) or their own. */
int eval_nodal(const EvalField *f, const OutputFn *fn, int equispaced, double *out);
/* eval_nodal of n functions at once (out[i] for fns[i]): the points' geometry is computed once per chunk of
 * cells for all of them. */
int eval_nodal_many(const EvalField *f, int n, const OutputFn *fns, int equispaced, double *const *out);
/* result[k]: the integral of fn over the cells of group g (NULL: every cell). */
int eval_cells(const EvalField *f, const OutputFn *fn, const PhysicalGroup *g, double *result);
/* result[k]: the integral of fn over the facets of boundary group g. */
int eval_facets(const EvalField *f, const OutputFn *fn, const PhysicalGroup *g, double *result);

/* The geometry of n cells of block bi (list: which; NULL: cells first .. first + n - 1) at the points of q,
 * computed on device d from the mesh's node coordinates xnodes (device, [nnodes][3]): geo [n][nq][GEO_STRIDE(dim)]
 * and x [n][nq][3] (device), as geometry_cells computes them on the host (operators and evaluations use it);
 * *bad: how many points have a det J that is not positive (geometry_cells names the first such element; here
 * they are only counted). Scratch on d: 10 doubles a point. */
int eval_geometry_cells(Device *d, const Mesh *m, int bi, const Quadrature *q, int64_t first, int64_t n,
                        const fem_idx *list, const double *xnodes, double *geo, double *x, double *bad);

FEM_EXTERN_C_END

#endif
