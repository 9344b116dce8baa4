/* The operator: R(u) = sum_e P_e^T B_e^T D(B_e P_e u), its Jacobian action and its diagonal, matrix-free.
 *
 * P_e is the restriction (space.h), B_e interpolation at q-points (tables.h, the device's kernels), D the
 * physics' q-point function (qfunction.h). The Jacobian's action reuses the same kernels with the q-point
 * state the physics stored at the last residual evaluation; no matrix is assembled anywhere. Dirichlet dofs
 * are eliminated: their residual rows are zero and their Jacobian rows the identity, so the operator on the
 * free dofs keeps the physics' symmetry.
 *
 * Everything the operator holds lives on its device; the caller's vectors are device vectors of length
 * space->ndofs (device_alloc). */
#ifndef FEMTO_OPERATOR_H
#define FEMTO_OPERATOR_H

#include "device.h"
#include "qfunction.h"
#include "space.h"
#include "tables.h"

FEM_EXTERN_C_BEGIN

/* What a physics gives the operator. Functions are indexed by DevKind (DEV_CPU, DEV_CUDA); a NULL facet
 * function means the physics has no natural boundary terms. */
typedef struct {
    int ncomp;
    int nstate, nfstate; /* doubles per q-point kept for the Jacobian (cells, facets) */
    QfFn cell_residual[3], cell_jacobian[3];
    QfFn facet_residual[3], facet_jacobian[3];
    int facet_grad;  /* facet q-functions read reference gradients (follower loads) */
    int uses_aux;    /* the q-functions read a scalar auxiliary field */
    int needs_x;     /* the q-functions read q-point coordinates */
    const void *ctx; /* constants, copied to the device by op_create and op_update_ctx */
    size_t ctx_bytes;
} OpPhysics;

typedef struct {
    int64_t nelem;
    ElementTables tables;    /* host */
    ElemView view, aux_view; /* device pointers; aux_view: the same with one component */
    fem_idx *list;           /* facets: which facets of the mesh block (host) */
    int32_t *tag;            /* device */
    double *geo, *x, *state, *src;
    double *uq, *duq, *s, *f, *auxq, *evec;
    void *owned[8]; /* device arrays behind view */
} OpBlock;

typedef struct Operator {
    Device *dev;
    const Space *space;
    OpPhysics phys;
    void *ctx; /* device copy of phys.ctx */
    int ncells, nfacets;
    OpBlock cells[MESH_MAX_BLOCKS], facets[MESH_MAX_BLOCKS];
    int64_t ndir;
    int32_t *dir; /* device: constrained dofs */
    double *dir_tmp, *ones, *work;
    const double *aux;                 /* device scalar L-vector (space->nnodes) or NULL */
    int64_t evaluations, applications; /* counts, for the summary */
} Operator;

/* cell_tags[b][c]: material index of cell c of block b (all >= 0). facet_tags[b][c]: boundary-condition
 * index of facet c of facet block b, or -1 where the physics has no natural term (NULL: none in the block).
 * qdegree 0: quadrature_default_degree. */
int op_create(Operator *op, Device *dev, const Space *sp, const OpPhysics *phys, int qdegree,
              int32_t *const *cell_tags, int32_t *const *facet_tags);
void op_destroy(Operator *op);

/* Re-uploads phys.ctx after the physics changed it (time step, load factor). */
int op_update_ctx(Operator *op);
/* The constrained dofs (host list); they stay fixed at whatever value u has there. */
int op_set_dirichlet(Operator *op, int64_t n, const int32_t *dofs);
/* An extra q-point source (host array [nelem][nq][ncomp]) for cell block b, subtracted from s; NULL clears.
 */
int op_set_source(Operator *op, int b, const double *src);
/* Coordinates of the q-points of cell block b, host array [nelem][nq][3] (malloc'ed). */
int op_qpoint_coordinates(const Operator *op, int b, double **x);

/* r = R(u) (r zero on constrained dofs); stores the q-point state. */
int op_residual(Operator *op, const double *u, double *r);
/* r = R(u) without zeroing the constrained rows: there r holds the reaction (force or heat flow) that the
 * constraint exerts, used for boundary reactions and energy balances. */
int op_residual_unconstrained(Operator *op, const double *u, double *r);
/* Jv = J(u) v at the u of the last residual; identity on constrained dofs. */
int op_jacobian(Operator *op, const double *v, double *Jv);
/* The assembled diagonal of J, computed matrix-free (1 on constrained dofs). */
int op_diagonal(Operator *op, double *diag);

FEM_EXTERN_C_END

#endif
