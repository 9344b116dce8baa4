/* Devices: where vectors live and kernels run. One table of functions per backend (cpu/, gpu/), picked at run
 * time from a registry by kind, so one binary serves every machine and solvers are written once. A backend
 * fills the table with its memory and vector operations, its element kernels (the default operator
 * implementation in fem/operator.c is made of them), its instances of the q-functions (by id, from
 * physics/qfunctions.h) and, optionally, an operator_setup that overrides entries of an Operator's table
 * (a fused kernel) while the others fall back on the default.
 *
 * Pointers handed to a device's functions are that device's memory (device_alloc). Only scalars (dot
 * products) come back to the host during a solve. Programs register the backends they were built with
 * (device_register), so fem/ never links against a backend. */
#ifndef FEMTO_DEVICE_H
#define FEMTO_DEVICE_H

#include "hd.h"
#include "qfunction.h"

#include <stddef.h>

FEM_EXTERN_C_BEGIN

typedef enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_CUDA = 2, DEV_NKINDS = 3 } DevKind;
typedef enum { ASSEMBLE_GATHER = 0, ASSEMBLE_ATOMIC = 1 } AssembleKind;

/* What the interpolation and integration kernels read for one block of elements of one type: passed by
 * value, owns nothing; on a GPU its pointers are device pointers.
 * Q-point arrays: values uq[e][q][ncomp], reference gradients duq[e][q][ncomp][dim]. L-vectors interleave
 * components (dof = node * ncomp + c). */
typedef struct {
    int64_t nelem;
    int ndof, nq, dim, ncomp;
    const fem_idx *dofs;      /* [nelem][ndof] node numbers */
    const double *B, *G;      /* [nq][ndof], [nq][ndof][dim] */
    int tensor, nd1, nq1;     /* sum factorisation (quads, hexes) */
    const double *B1, *G1;    /* [nq1][nd1] */
    int64_t nnodes;           /* length of the scalar L-vector */
    const int64_t *t_offsets; /* transpose of dofs (gather assembly) */
    const int32_t *t_slots;
} ElemView;

typedef struct Device Device;
struct Operator;

typedef struct {
    int (*alloc)(Device *, void **p, size_t bytes);
    void (*free)(Device *, void *p);
    int (*upload)(Device *, void *dst, const void *src, size_t bytes);
    int (*download)(Device *, void *dst, const void *src, size_t bytes);
    int (*copy)(Device *, void *dst, const void *src, size_t bytes);
    int (*zero)(Device *, void *p, size_t bytes);
    /* y = a x + b y */
    int (*axpby)(Device *, int64_t n, double a, const double *x, double b, double *y);
    /* *out = x . y */
    int (*dot)(Device *, int64_t n, const double *x, const double *y, double *out);
    /* y = 1 / x (pointwise) */
    int (*recip)(Device *, int64_t n, const double *x, double *y);
    /* y = a .* x (pointwise) */
    int (*mult)(Device *, int64_t n, const double *a, const double *x, double *y);
    /* One Chebyshev smoothing step in one pass: d = a inv_diag .* (r - t) + b d, then z += d
     * (fem/solvers/pc.c; five separate vector passes before) */
    int (*cheb_step)(Device *, int64_t n, double a, const double *inv_diag, const double *r, const double *t,
                     double b, double *d, double *z);
    /* y[idx[i]] = vals ? vals[i] : 0 */
    int (*scatter)(Device *, int64_t n, const int32_t *idx, const double *vals, double *y);
    /* out[i] = x[idx[i]] */
    int (*gather)(Device *, int64_t n, const int32_t *idx, const double *x, double *out);
    /* Optional (NULL: gather then scatter, or two scatters), one pass where a launch costs more than the
     * work: take: out[i] = x[idx[i]], then x[idx[i]] = 0; put2: y[idx[i]] = z[idx[i]] = vals[i] */
    int (*take)(Device *, int64_t n, const int32_t *idx, double *x, double *out);
    int (*put2)(Device *, int64_t n, const int32_t *idx, const double *vals, double *y, double *z);
    /* Sums over the copies of shared entries in a fixed order (fem/halo.c): for i < n, v[dof[i]] = the sum
     * over k in [off[i], off[i+1]) of (src[k] < 0 ? v[dof[i]] : vals[src[k]]), added in k order; dof[] has
     * no repeats. vals may be host memory from host_alloc, which the device reads in place. */
    int (*sum_copies)(Device *, int64_t n, const int32_t *dof, const int32_t *off, const int32_t *src,
                      const double *vals, double *v);
    /* Optional: y = A x for a sparse matrix over nodes (fem/transfer.h's NodeMatrix: rows ptr, columns col,
     * values val), applied to each of ncomp interleaved components: y[r ncomp + c] = sum over k in
     * [ptr[r], ptr[r+1]) of val[k] x[col[k] ncomp + c], for every row r < nrows. NULL: the transfers use the
     * element kernels. */
    int (*node_spmv)(Device *, int64_t nrows, int ncomp, const int32_t *ptr, const int32_t *col,
                     const double *val, const double *x, double *y);
    /* q-point values (uq, may be NULL) and reference gradients (duq, may be NULL) of the L-vector u */
    int (*interpolate)(Device *, const ElemView *v, const double *u, double *uq, double *duq);
    /* r += sum over elements of B^T sq + G^T fq (either may be NULL); evec: [nelem][ncomp][ndof] scratch used
     * by gather assembly */
    int (*integrate)(Device *, const ElemView *v, const double *sq, const double *fq, double *r,
                     double *evec);
    /* y[i][k] = pattern[k] for i < n, k < m (q-point arrays of one repeated record) */
    int (*fill)(Device *, int64_t n, int m, const double *pattern, double *y);
    /* Jacobian diagonal, component c, probe slot b (0: value, 1 + a: reference gradient a): for every element
     * and local dof i, evec[e][c][i] += sum_q Phi_b(q,i) (B[q][i] s_q + sum_a G[q][i][a] f_q,a), where s, f
     * are the linearised q-point function's response to a unit input in slot b of component c and
     * Phi_0 = B, Phi_1+a = G[..][a]. Summed over b this is the exact diagonal of each element matrix. */
    int (*diag_add)(Device *, const ElemView *v, int c, int b, const double *sq, const double *fq,
                    double *evec);
    /* r += P^T evec (gather or atomics, per the device's assembly) */
    int (*assemble)(Device *, const ElemView *v, const double *evec, double *r);
    int (*sync)(Device *);
    void (*destroy)(Device *);
    /* Optional: host memory that download and upload move fastest (pinned on a GPU), for buffers staged
     * between the device and other processes (fem/halo.c), which the device's gather and scatter must also
     * read and write in place (mapped on a GPU; on the CPU host memory is the device's). NULL: plain host
     * memory serves. Use through device_host_alloc / device_host_free. */
    int (*host_alloc)(Device *, void **p, size_t bytes);
    void (*host_free)(Device *, void *p);
    /* Optional: exchanges of doubles between the ranks' devices, ordered on the device's own queue (NCCL on a
     * GPU: fem/halo.h's device path), so that the host waits neither for the device before an exchange nor
     * for the messages. peer_init is collective (every rank calls it, on its first halo) and runs once: it
     * sets the path up when every rank can use it and answers FEM_OK either way; peer_ready then says
     * whether the path is there (1) and why (why: a few words, may be NULL). peer_exchange_begin, in the
     * device's order after the work already asked of it, sends send[send_off[i] .. send_off[i+1]) to
     * ranks[i] and receives recv[recv_off[i] .. recv_off[i+1]) from it (device memory); *ticket names it
     * for peer_exchange_end, after which the device's later work sees recv filled. beside 1: on a queue of
     * its own, so that the device's work asked between begin and end runs beside the messages; 0: in the
     * device's queue itself (an exchange its caller ends at once: no hand-offs between queues). NULL: no
     * such path. */
    int (*peer_init)(Device *);
    int (*peer_ready)(const Device *, char *why, size_t size);
    int (*peer_exchange_begin)(Device *, int n, const int *ranks, const int64_t *send_off, const double *send,
                               const int64_t *recv_off, double *recv, int beside, int64_t *ticket);
    int (*peer_exchange_end)(Device *, int64_t ticket);
    /* Optional: replace entries of a new operator's table (Operator.ops) with this backend's own, keeping the
     * default ones for the rest. NULL: the defaults serve. */
    int (*operator_setup)(struct Operator *op);
} DeviceOps;

struct Device {
    DevKind kind;
    char name[16];         /* "cpu", "cuda" */
    char description[256]; /* for the summary: CPU threads, or the GPU's name and memory */
    int threads;           /* CPU threads (1: serial) */
    AssembleKind assembly;
    DeviceOps ops;
    const QfFn *qf; /* the backend's instances of the q-functions, indexed by id */
    int nqf;
    void *impl; /* backend state */
    /* Bytes allocated through device_alloc and not yet freed, and the most at any one time (the run's peak
     * device memory); allocs keeps each live allocation's size for device_free. A backend's own scratch
     * (a few bytes of reduction space) is not counted. */
    int64_t bytes_in_use, bytes_peak;
    struct DeviceAllocs *allocs;
};

/* A backend's constructor; threads: CPU threads (0: OpenMP's default), ignored by GPU backends. */
typedef int (*DeviceFactory)(Device *d, int threads, AssembleKind assembly);
void device_register(DevKind kind, DeviceFactory factory);
int device_available(DevKind kind); /* a backend of that kind is registered (built into this program) */

/* kind DEV_AUTO: CUDA when registered and a GPU is present, else the CPU. */
int device_create(Device *d, DevKind kind, int threads, AssembleKind assembly);
void device_destroy(Device *d);
/* The device's instance of q-function `id` (NULL when it has none). */
QfFn device_qfunction(const Device *d, int id);

/* Memory: these count the bytes in use and their peak (bytes_in_use, bytes_peak); allocate and free through
 * them rather than through d->ops so that the counts hold. */
int device_alloc(Device *d, void **p, size_t bytes);
int device_alloc_copy(Device *d, void **p, const void *host, size_t bytes); /* alloc + upload */
void device_free(Device *d, void *p);
/* Host memory for staging the device's data (DeviceOps.host_alloc: pinned on a GPU; malloc otherwise). */
int device_host_alloc(Device *d, void **p, size_t bytes);
void device_host_free(Device *d, void *p);
/* Counts bytes that a library allocated on the device by itself (a memory handler's allocation: bytes > 0;
 * its free: bytes < 0) in bytes_in_use and bytes_peak, as device_alloc counts its own. */
void device_count_bytes(Device *d, int64_t bytes);

FEM_EXTERN_C_END

#endif
