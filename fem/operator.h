/* The operator: R(u) = sum_e P_e^T B_e^T D(B_e P_e u), its Jacobian action, its diagonal and its assembled
 * matrix, matrix-free.
 *
 * P_e is an element restriction (restriction.h), B_e a basis (basis.h), D the physics' q-functions
 * (qfunction.h). An Operator has two layers:
 *   - a table of element-level entries (OperatorOps: residual, apply_add, diagonal, assemble, destroy) that
 *     know nothing of boundary conditions. op_create fills it with the default implementation made of the
 *     device's element kernels (operator_ref.c); a backend's operator_setup may then replace any entry with
 *     its own (a fused GPU kernel) and keeps the default for the rest, the pattern of libCEED's operators;
 *   - the functions below, which add what every implementation shares: Dirichlet dofs eliminated (their
 *     residual rows zero, their Jacobian rows the identity, so the operator on the free dofs keeps the
 *     physics' symmetry), and counts for the summary.
 * The Jacobian's action reuses the q-point state the physics stored at the last residual evaluation.
 *
 * On a space split over MPI ranks (fem/dist.h) the operator is built on the rank's local space and given the
 * halo (op_set_halo): its entries then compute the rank's partial sums, and the functions below wrap them in
 * the exchanges: forward the input's ghosts from their owners, apply, reverse-add the ghost rows into their
 * owners. The constrained dofs are then every local dof that is constrained, owned or ghost: a ghost's column
 * must drop out on the rank that holds it, and the owner's row is set after the sums arrive.
 *
 * Everything the operator holds lives on its device; vectors are Vecs of length space->ndofs there. */
#ifndef FEMTO_OPERATOR_H
#define FEMTO_OPERATOR_H

#include "basis.h"
#include "restriction.h"
#include "space.h"
#include "vec.h"

FEM_EXTERN_C_BEGIN

/* What a physics gives the operator: its q-functions (a facet descriptor with name NULL: no natural boundary
 * terms) and its constants. The inputs the descriptors name decide what is interpolated: the unknown's
 * gradients, an auxiliary scalar field (op->aux), q-point coordinates. */
typedef struct {
    int ncomp;
    int nstate, nfstate; /* doubles per q-point kept for the Jacobian (cells, facets) */
    QFunction cell_residual, cell_jacobian;
    QFunction facet_residual, facet_jacobian;
    const void *ctx; /* constants, copied to the device by op_create and op_update_ctx */
    size_t ctx_bytes;
    /* The polynomial degree of the integrand on affine simplices (constant Jacobian) at element order p, on
     * cells (facet 0) or boundary facets (1): the quadrature rule of that degree integrates the residual and
     * Jacobian exactly there. 0: not a polynomial (nonlinear physics, variable coefficients), use the
     * default rule. NULL: always the default. */
    int (*exact_degree)(const void *ctx, int p, int facet);
} OpPhysics;

/* The quadrature degree of a block of cells or facets (shape s) at element order p whose geometric map has
 * order g (mesh_block_geometry_order: 1 for affine simplices of any node count): qdegree when positive (the
 * user's), else the physics' exact degree where the cells are affine simplices (or straight lines), else the
 * default 2p + g - 1. Output integrals (fem/evaluate.h) use the same rule, so that a balance of residual
 * terms holds to round-off. */
int op_quadrature_degree(const OpPhysics *phys, int qdegree, int p, int g, Shape s, int facet);

/* One block of elements (a mesh block's cells, or the facets of a facet block that carry a condition). */
typedef struct {
    int64_t nelem;
    Restriction restriction;
    Basis basis;
    ElemView view, aux_view; /* the kernels' view of both; aux_view: the same with one component */
    fem_idx *list;           /* facets: which facets of the mesh block (host) */
    int32_t *tag;            /* device: material (cells) or condition record (facets) per element */
    double *geo, *x, *state, *src;
    /* the default implementation's q-point arrays: made on its first full-block apply (op_block_qpoints),
     * never where a backend's override serves every apply (the diagonal and element matrices then take
     * chunks of their own) */
    double *uq, *duq, *s, *f;
    double *auxq;
    double *evec; /* [nelem][ncomp][ndof], made on first use (op_block_evec) */
    /* cells: the Jacobian's compact q-point data (QfQdata; NULL: none), [nelem][nq][size], or [nelem][size]
     * (q-point 0's, the others w_q / w_0 times it) where qdata_per_elem: affine simplices */
    double *qdata;
    int qdata_per_elem;
    int gorder; /* the order of the cells' geometric map: 1 where affine (mesh_block_geometry_order) */
} OpBlock;

typedef struct Operator Operator;

/* Element-level entries: no constraints (see above). */
typedef struct {
    int (*residual)(Operator *op, const Vec *u, Vec *r);  /* r = R(u); stores the q-point state */
    int (*apply_add)(Operator *op, const Vec *x, Vec *y); /* y += J x at the state of the last residual */
    int (*diagonal)(Operator *op, Vec *d);                /* d = diag(J) */
    /* K[e][(i, c)][(j, c')] (host, row-major, element dofs i * ncomp + c) of every element of cell block b
     * (facet 0) or facet block b (facet 1), at the state of the last residual */
    int (*element_matrices)(Operator *op, int facet, int b, double *K);
    void (*destroy)(Operator *op); /* what a backend's override keeps in op->impl */
} OperatorOps;

struct Operator {
    Device *dev;
    const Space *space;
    OpPhysics phys;
    OperatorOps ops;
    const char *implementation; /* "ref", or the overriding backend's name for its entries */
    void *impl;                 /* a backend override's state */
    void *ctx;                  /* device copy of phys.ctx */
    int ncells, nfacets;
    int grads, facet_grads, needs_x, aux_used; /* what the q-functions read (from their descriptors) */
    QfFn cell_residual, cell_jacobian, facet_residual, facet_jacobian; /* the device's instances */
    OpBlock cells[MESH_MAX_BLOCKS], facets[MESH_MAX_BLOCKS];
    int qdegree;             /* as given to op_create (0: each order's default) */
    int64_t qp_chunk_points; /* the diagonal's and element matrices' q-points a chunk where the blocks have no
                              * q-point arrays of their own (0: 2^17; tests set a few) */
    int32_t *const *cell_tags_host; /* as given to op_create (the caller's, kept alive by it) */
    int32_t *const *facet_tags_host;
    int64_t ndir;
    int64_t ndir_owned; /* dir lists the owned dofs first (over MPI ranks: then the ghosts) */
    int32_t *dir;       /* device: constrained dofs */
    int32_t *dir_host;  /* the same on the host (owned first, each part as given) */
    double *dir_tmp, *ones;
    struct Halo *halo; /* the space's halo over MPI ranks (NULL: one process) */
    /* Over MPI ranks, the cell blocks that touch no shared node (Dist.cell_boundary 0): the element entries
     * then run in two phases, OP_PHASE_INTERIOR while the halo's exchange travels and OP_PHASE_BOUNDARY (the
     * other cell blocks and every facet block) after it; OP_PHASE_ALL otherwise (op_block_runs). */
    unsigned char interior[MESH_MAX_BLOCKS];
    int overlap; /* some block is interior: op_jacobian and op_residual overlap the exchange */
    int phase;
    const double *aux;                 /* device scalar L-vector (space->nnodes) or NULL */
    int64_t evaluations, applications; /* counts, for the summary */
};

/* cell_tags[b][c]: material index of cell c of block b (all >= 0). facet_tags[b][c]: boundary-condition
 * index of facet c of facet block b, or -1 where the physics has no natural term (NULL: none in the block).
 * qdegree 0: quadrature_default_degree. */
int op_create(Operator *op, Device *dev, const Space *sp, const OpPhysics *phys, int qdegree,
              int32_t *const *cell_tags, int32_t *const *facet_tags);
void op_destroy(Operator *op);
/* An operator of the same physics, tags and quadrature choice on another space of the same mesh (a multigrid
 * level); no constrained dofs yet. */
int op_create_like(Operator *op, const Operator *like, const Space *sp);

/* The halo over MPI ranks of the operator's (local) space with phys.ncomp components, owned by the caller;
 * NULL: one process. The Dist's interior cell blocks (dist.h, cell_boundary) then run while the exchanges
 * travel: forward_begin, interior blocks, forward_end, boundary blocks, reverse-add. */
void op_set_halo(Operator *op, struct Halo *halo);

/* Re-uploads phys.ctx after the physics changed it (time step, load factor). */
int op_update_ctx(Operator *op);
/* The constrained dofs (host list); they stay fixed at whatever value u has there. */
int op_set_dirichlet(Operator *op, int64_t n, const int32_t *dofs);
/* An extra q-point source (host array [nelem][nq][ncomp]) for cell block b, subtracted from s; NULL clears.
 */
int op_set_source(Operator *op, int b, const double *src);
/* Coordinates of the q-points of cell block b, host array [nelem][nq][3] (malloc'ed). */
int op_qpoint_coordinates(const Operator *op, int b, double **x);

/* With a halo, the ghost entries of the input vector (u, v) are refreshed from their owners first, and the
 * results hold the sums over ranks on owned dofs (zero on unconstrained ghosts; op_diagonal's ghosts are the
 * owners' values). */
/* r = R(u) (r zero on constrained dofs); stores the q-point state. */
int op_residual(Operator *op, const Vec *u, Vec *r);
/* r = R(u) without zeroing the constrained rows: there r holds the reaction (force or heat flow) that the
 * constraint exerts, used for boundary reactions and energy balances. */
int op_residual_unconstrained(Operator *op, const Vec *u, Vec *r);
/* Jv = J(u) v at the u of the last residual; identity on constrained dofs. */
int op_jacobian(Operator *op, const Vec *v, Vec *Jv);
/* The same Jv for a consistent v, a vector whose ghosts hold their owners' values (up to round-off), and
 * consistent itself: every copy of a dof, owned or ghost, holds the sum over ranks (halo_share: one round of
 * messages where op_jacobian's forward and reverse-add take two). Multigrid's cycle keeps its vectors so.
 * Without a halo it is op_jacobian. */
int op_jacobian_consistent(Operator *op, const Vec *v, Vec *Jv);
/* The assembled diagonal of J, computed matrix-free (1 on constrained dofs). */
int op_diagonal(Operator *op, Vec *diag);

/* The default implementation's entries (operator_ref.c), for backends that wrap one of them. */
int op_ref_residual(Operator *op, const Vec *u, Vec *r);
int op_ref_apply_add(Operator *op, const Vec *x, Vec *y);
int op_ref_diagonal(Operator *op, Vec *d);
int op_ref_element_matrices(Operator *op, int facet, int b, double *K);
/* Pieces of the default implementation a backend's override reuses: one block's contribution to out (+=);
 * the q-function arguments of a block (device pointers); the auxiliary field at a block's q-points. */
int op_ref_apply_block(Operator *op, OpBlock *b, int facet, int residual, const double *in, double *out);
QfArgs op_block_args(const Operator *op, const OpBlock *b, int facet, int residual);
/* *p = count doubles of the operator's device memory, zeroed (at least one, so that the pointer is valid). */
int op_alloc_zero(Operator *op, double **p, int64_t count);
/* Block b's q-point arrays uq, duq, s, f for all its elements, made on first use. */
int op_block_qpoints(Operator *op, OpBlock *b, int facet);
/* Block b's element vectors (evec), made on first use: what a gather-assembly device's kernels write before
 * the assembly, where they do not assemble on element patches. */
int op_block_evec(Operator *op, OpBlock *b);
/* The arguments of cell block b's Jacobian action from its compact q-point data (op_block_qdata): the qdata
 * as the geometry, and none of what the compact form does not read (state, tags, coordinates, aux, sources).
 */
QfArgs op_block_qdata_args(const Operator *op, const OpBlock *b);
/* The descriptor of the q-function that a cell (facet 0) or facet block runs for the residual or the
 * Jacobian. */
static inline const QFunction *op_qfunction(const Operator *op, int facet, int residual) {
    return facet ? (residual ? &op->phys.facet_residual : &op->phys.facet_jacobian)
                 : (residual ? &op->phys.cell_residual : &op->phys.cell_jacobian);
}
enum { OP_PHASE_ALL = 0, OP_PHASE_INTERIOR = 1, OP_PHASE_BOUNDARY = 2 };
/* Whether cell block b (facet 0) or facet block b (1) runs in the operator's current phase; every
 * implementation's residual and Jacobian action skip the others (and the residual zeroes its output only
 * outside the boundary phase, which adds to the interior phase's sums). */
static inline int op_block_runs(const Operator *op, int facet, int b) {
    if (op->phase == OP_PHASE_ALL) return 1;
    int interior = !facet && op->interior[b];
    return op->phase == OP_PHASE_INTERIOR ? interior : !interior;
}
static inline int op_zeroes_output(const Operator *op) {
    return op->phase != OP_PHASE_BOUNDARY;
}
/* Whether a block's Jacobian action adds nothing (its q-function is marked zero: a dead load on facets). */
static inline int op_block_skipped(const Operator *op, int facet, int residual) {
    return op_qfunction(op, facet, residual)->zero;
}
int op_block_aux(Operator *op, OpBlock *b);
/* The compact q-point data form (fem/qfunction.h) that cell block b's residual (1) or Jacobian action (0) may
 * run now, or NULL: the Jacobian's, where the operator built the block's qdata at setup and the physics'
 * constants still allow it. Kernels that serve it run q->apply with b->qdata as the geometry; the others keep
 * the Jacobian q-function. FEMTO_QDATA=0 in the environment at op_create builds none (to compare). */
static inline const QfQdata *op_block_qdata(const Operator *op, const OpBlock *b, int residual) {
    const QfQdata *qd = op->phys.cell_jacobian.qdata;
    return !residual && b->qdata && qd && qd->valid(op->phys.ctx) ? qd : NULL;
}

FEM_EXTERN_C_END

#endif
