/* Vectors on a device (see vec.h). */
#include "vec.h"

#include "comm.h"
#include "error.h"

#include <math.h>
#include <string.h>

static size_t bytes(const Vec *v) {
    return sizeof(double) * (size_t)v->n;
}

int vec_create(Vec *v, Device *dev, int64_t n) {
    memset(v, 0, sizeof *v);
    FEM_TRY(device_alloc(dev, (void **)&v->data, sizeof(double) * (size_t)n));
    v->dev = dev;
    v->n = v->nowned = n;
    v->owned_memory = 1;
    return FEM_OK;
}

int vec_create_split(Vec *v, Device *dev, int64_t n, int64_t nowned) {
    FEM_TRY(vec_create(v, dev, n));
    v->nowned = nowned;
    return FEM_OK;
}

int vec_duplicate(Vec *v, const Vec *like) {
    return vec_create_split(v, like->dev, like->n, like->nowned);
}

Vec vec_wrap(Device *dev, int64_t n, double *data) {
    return (Vec){.dev = dev, .n = n, .nowned = n, .data = data, .owned_memory = 0};
}

void vec_destroy(Vec *v) {
    if (v->owned_memory && v->dev) device_free(v->dev, v->data);
    memset(v, 0, sizeof *v);
}

int vec_zero(Vec *v) {
    return v->dev->ops.zero(v->dev, v->data, bytes(v));
}

int vec_set(Vec *v, double value) {
    return v->dev->ops.fill(v->dev, v->n, 1, &value, v->data);
}

int vec_copy(Vec *dst, const Vec *src) {
    return dst->dev->ops.copy(dst->dev, dst->data, src->data, bytes(src));
}

int vec_axpby(double a, const Vec *x, double b, Vec *y) {
    return y->dev->ops.axpby(y->dev, y->n, a, x->data, b, y->data);
}

int vec_pointwise_mult(const Vec *a, const Vec *x, Vec *y) {
    return y->dev->ops.mult(y->dev, y->n, a->data, x->data, y->data);
}

int vec_cheb_step(double a, const Vec *inv_diag, const Vec *r, const Vec *t, double b, Vec *d, Vec *z) {
    return z->dev->ops.cheb_step(z->dev, z->n, a, inv_diag->data, r->data, t->data, b, d->data, z->data);
}

int vec_reciprocal(const Vec *x, Vec *y) {
    return y->dev->ops.recip(y->dev, y->n, x->data, y->data);
}

int vec_dot(const Vec *x, const Vec *y, double *out) {
    FEM_TRY(x->dev->ops.dot(x->dev, x->nowned, x->data, y->data, out));
    return comm_sum(out, 1);
}

int vec_norm(const Vec *x, double *out) {
    double xx;
    FEM_TRY(vec_dot(x, x, &xx));
    *out = sqrt(xx);
    return FEM_OK;
}

int vec_upload(Vec *v, const double *host) {
    return v->dev->ops.upload(v->dev, v->data, host, bytes(v));
}

int vec_download(const Vec *v, double *host) {
    return v->dev->ops.download(v->dev, host, v->data, bytes(v));
}
