/* Vectors of a solve: a length, the range this process owns, and the device memory that holds them.
 *
 * Entries [0, nowned) belong to this process; [nowned, n) are ghosts, copies of entries that another process
 * owns (none in a one-process run). Operators read ghosts and write partial sums into them; reductions (dot,
 * norm) count owned entries only and then go through comm_sum, so a solver written on Vec runs unchanged when
 * a mesh is split over processes. A Vec owns its memory unless it was made with vec_wrap. */
#ifndef FEMTO_VEC_H
#define FEMTO_VEC_H

#include "device.h"

FEM_EXTERN_C_BEGIN

typedef struct Vec {
    Device *dev;
    int64_t n;      /* local length: owned + ghost */
    int64_t nowned; /* owned entries come first */
    double *data;   /* device memory */
    int owned_memory;
} Vec;

/* A vector of n entries (all owned), not initialised. */
int vec_create(Vec *v, Device *dev, int64_t n);
/* A vector of n entries of which the first nowned are this process's (the rest ghosts), not initialised. */
int vec_create_split(Vec *v, Device *dev, int64_t n, int64_t nowned);
/* A vector with the same device and layout as `like`. */
int vec_duplicate(Vec *v, const Vec *like);
/* A view of n entries of device memory that someone else owns. */
Vec vec_wrap(Device *dev, int64_t n, double *data);
void vec_destroy(Vec *v);

int vec_zero(Vec *v);
int vec_set(Vec *v, double value);
int vec_copy(Vec *dst, const Vec *src);
/* y = a x + b y */
int vec_axpby(double a, const Vec *x, double b, Vec *y);
/* y = a .* x (pointwise) */
int vec_pointwise_mult(const Vec *a, const Vec *x, Vec *y);
/* d = a inv_diag .* (r - t) + b d; z += d: a Chebyshev-Jacobi step (Device.cheb_step), every entry. */
int vec_cheb_step(double a, const Vec *inv_diag, const Vec *r, const Vec *t, double b, Vec *d, Vec *z);
/* y = 1 ./ x */
int vec_reciprocal(const Vec *x, Vec *y);
/* x . y over owned entries, summed over processes */
int vec_dot(const Vec *x, const Vec *y, double *out);
int vec_norm(const Vec *x, double *out);
int vec_upload(Vec *v, const double *host);
int vec_download(const Vec *v, double *host);

FEM_EXTERN_C_END

#endif
