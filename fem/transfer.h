/* Transfers between two spaces of different order on one mesh: the grid transfers of p-multigrid.
 *
 * Prolongation P (coarse -> fine) interpolates: on every cell the coarse field is evaluated at the fine
 * nodes (the coarse basis tabulated there), and a fine node shared by several cells, which each give it the
 * same value, takes their average. Restriction is its transpose, P^T, so that a multigrid cycle stays
 * symmetric. Injection (fine -> coarse) is the coarse nodal interpolant of a fine field, exact for fields of
 * the coarse order: it carries the state a nonlinear Jacobian is linearised at down to the coarse levels.
 *
 * Over MPI ranks (transfer_set_halo), every rank maps through its own cells. Prolongation's and restriction's
 * inputs are consistent (every ghost holds its owner's value: multigrid's cycle keeps them so); injection's
 * ghosts are first forwarded unless the caller says they hold their owners' values (fine_consistent).
 * Prolongation and injection then give owned and ghost nodes the same values as one process (every cell of a
 * node gives it the same value), and restriction sums each rank's part of P^T and shares the coarse sums over
 * the ranks (halo_share), so that it stays P^T with consistent output.
 *
 * All three are sparse matrices over the nodes where the device has Device.ops.node_spmv (Transfer.nodal: the
 * CPU and the GPU), built from element tables: the other order's basis at this order's nodes. Otherwise, or
 * with FEMTO_TRANSFER_ELEMENTS=1, they are made of the device's element kernels (interpolate, integrate) with
 * those tables and the identity, whose integration sums element values into nodes. */
#ifndef FEMTO_TRANSFER_H
#define FEMTO_TRANSFER_H

#include "basis.h"
#include "space.h"
#include "vec.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    Restriction rf, rc;      /* the cells' dofs in both spaces */
    Basis ident_f, ident_c;  /* identity on the fine / coarse nodes */
    Basis c_at_f, f_at_c;    /* the coarse basis at the fine nodes, the fine basis at the coarse nodes */
    double *ef, *ec;         /* element values [nelem][nodes][ncomp], fine and coarse */
    double *evf, *evc;       /* the kernels' gather scratch [nelem][ncomp][nodes] */
} TransferBlock;

/* A sparse matrix between the nodes of two spaces (rows, then their entries ptr[r] .. ptr[r+1]: columns col,
 * values val; on the device), applied to each of ncomp interleaved components (Device.ops.node_spmv). */
typedef struct {
    int64_t nrows;
    int32_t *ptr, *col;
    double *val;
} NodeMatrix;

typedef struct {
    Device *dev;
    const Space *fine, *coarse;
    int ncomp, nblocks;
    /* nodal: the transfers as node matrices, where the device has Device.ops.node_spmv (the CPU and the GPU)
     * and FEMTO_TRANSFER_ELEMENTS=1 does not ask for the element kernels: P (each fine node's row from the
     * first cell that has it: the cells agree), PT its transpose over the fine nodes this rank owns (all
     * without a halo), I the injection (each coarse node's row from its first cell). One pass over each
     * vector, with no element arrays, no multiplicities and no zeroing. Otherwise the element kernels below. */
    int nodal;
    NodeMatrix P, PT, I;
    TransferBlock b[MESH_MAX_BLOCKS];
    Vec inv_mult_f, inv_mult_c; /* 1 / the number of this rank's cells sharing each dof */
    Vec inv_mult_all_f;         /* 1 / the number of all ranks' cells sharing each fine dof (with halos) */
    Vec tmp_f;
    struct Halo *halo_f, *halo_c; /* over MPI ranks (the caller's), else NULL */
    /* Set by a caller whose fine inputs to inject already hold their owners' values in every ghost
     * (multigrid's transfer to a coarser mesh, which gathers them from a forwarded vector): the fine halo's
     * forward is then skipped. */
    int fine_consistent;
} Transfer;

/* Transfers for ncomp interleaved components between two spaces on the same mesh (coarse->order <
 * fine->order; spaces of ncomp components or scalar spaces used with ncomp components). */
int transfer_create(Transfer *t, Device *dev, const Space *fine, const Space *coarse, int ncomp);
void transfer_destroy(Transfer *t);
/* Over MPI ranks: the halos of the fine and coarse spaces (ncomp components, the caller's); computes the
 * global multiplicities (a collective). */
int transfer_set_halo(Transfer *t, struct Halo *fine, struct Halo *coarse);
/* uf = P uc. Over MPI ranks uc is consistent (its ghosts hold their owners' values: multigrid's cycle keeps
 * its vectors so, op_jacobian_consistent) and so is uf, each copy of a fine dof computed from this rank's
 * cells (equal to the owner's up to round-off). */
int transfer_prolong(Transfer *t, const Vec *uc, Vec *uf);
/* rc = P^T rf. Over MPI ranks rf is consistent and so is rc: every copy of a coarse dof holds the sum over
 * ranks (halo_share), with no exchange of rf. */
int transfer_restrict(Transfer *t, const Vec *rf, Vec *rc);
/* uc = the coarse nodal interpolant of uf */
int transfer_inject(Transfer *t, const Vec *uf, Vec *uc);

FEM_EXTERN_C_END

#endif
