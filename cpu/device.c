/* The CPU backend: host memory, vector operations on OpenMP threads, the element kernels of kernels.c and the
 * q-function instances of qfunctions.c, in one Device table. */
#include "cpu/cpu.h"

#include "fem/error.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- memory and vectors */

static int cpu_alloc(Device *d, void **p, size_t bytes) {
    (void)d;
    *p = fem_malloc(bytes, "a vector");
    return *p ? FEM_OK : FEM_ERR_INTERNAL;
}
static void cpu_free(Device *d, void *p) {
    (void)d, free(p);
}
static int cpu_copy(Device *d, void *dst, const void *src, size_t bytes) {
    (void)d;
    if (bytes) memcpy(dst, src, bytes);
    return FEM_OK;
}
static int cpu_zero(Device *d, void *p, size_t bytes) {
    (void)d;
    if (bytes) memset(p, 0, bytes);
    return FEM_OK;
}

static int cpu_axpby(Device *d, int64_t n, double a, const double *x, double b, double *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i] + (b == 0.0 ? 0.0 : b * y[i]);
    return FEM_OK;
}

static int cpu_cheb_step(Device *dev, int64_t n, double a, const double *inv_diag, const double *r,
                         const double *t, double b, double *d, double *z) {
#pragma omp parallel for num_threads(dev->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) {
        d[i] = a * (inv_diag[i] * (r[i] - t[i])) + b * d[i];
        z[i] += d[i];
    }
    return FEM_OK;
}

static int cpu_dot(Device *d, int64_t n, const double *x, const double *y, double *out) {
    double s = 0.0;
#pragma omp parallel for num_threads(d->threads) schedule(static) reduction(+ : s) if (n > 20000)
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    *out = s;
    return FEM_OK;
}

static int cpu_mult(Device *d, int64_t n, const double *a, const double *x, double *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) y[i] = a[i] * x[i];
    return FEM_OK;
}

static int cpu_recip(Device *d, int64_t n, const double *x, double *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) y[i] = 1.0 / x[i];
    return FEM_OK;
}

static int cpu_scatter(Device *d, int64_t n, const int32_t *idx, const double *vals, double *y) {
    (void)d;
    for (int64_t i = 0; i < n; i++) y[idx[i]] = vals ? vals[i] : 0.0;
    return FEM_OK;
}

static int cpu_gather(Device *d, int64_t n, const int32_t *idx, const double *x, double *out) {
    (void)d;
    for (int64_t i = 0; i < n; i++) out[i] = x[idx[i]];
    return FEM_OK;
}

static int cpu_sum_copies(Device *d, int64_t n, const int32_t *dof, const int32_t *off, const int32_t *src,
                          const double *vals, double *v) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int32_t k = off[i]; k < off[i + 1]; k++) s += src[k] < 0 ? v[dof[i]] : vals[src[k]];
        v[dof[i]] = s;
    }
    return FEM_OK;
}

static int cpu_node_spmv(Device *d, int64_t nrows, int ncomp, const int32_t *ptr, const int32_t *col,
                         const double *val, const double *x, double *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (nrows > 5000)
    for (int64_t r = 0; r < nrows; r++) {
        double s[8] = {0};
        for (int32_t k = ptr[r]; k < ptr[r + 1]; k++)
            for (int c = 0; c < ncomp && c < 8; c++) s[c] += val[k] * x[(int64_t)col[k] * ncomp + c];
        for (int c = 0; c < ncomp && c < 8; c++) y[r * ncomp + c] = s[c];
        for (int c = 8; c < ncomp; c++) { /* more components than a physics has: one at a time */
            double t = 0.0;
            for (int32_t k = ptr[r]; k < ptr[r + 1]; k++) t += val[k] * x[(int64_t)col[k] * ncomp + c];
            y[r * ncomp + c] = t;
        }
    }
    return FEM_OK;
}

static int cpu_fill(Device *d, int64_t n, int m, const double *pattern, double *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < m; k++) y[i * m + k] = pattern[k];
    return FEM_OK;
}

static int cpu_sync(Device *d) {
    return (void)d, FEM_OK;
}
static void cpu_destroy(Device *d) {
    (void)d;
}

void cpu_device_set_threads(Device *d, int threads) {
    d->threads = threads > 0 ? threads : 1;
    snprintf(d->description, sizeof d->description, "CPU, %d thread%s, %s assembly", d->threads,
             d->threads > 1 ? "s" : "", d->assembly == ASSEMBLE_GATHER ? "gather" : "atomic");
}

int cpu_device_create(Device *d, int threads, AssembleKind assembly) {
    memset(d, 0, sizeof *d);
    d->kind = DEV_CPU;
    snprintf(d->name, sizeof d->name, "cpu");
    d->assembly = assembly;
    cpu_device_set_threads(d, threads > 0 ? threads : omp_get_max_threads());
    d->qf = cpu_qfunctions;
    d->nqf = cpu_nqfunctions;
    d->ops = (DeviceOps){.alloc = cpu_alloc,
                         .free = cpu_free,
                         .upload = cpu_copy,
                         .download = cpu_copy,
                         .copy = cpu_copy,
                         .zero = cpu_zero,
                         .axpby = cpu_axpby,
                         .cheb_step = cpu_cheb_step,
                         .dot = cpu_dot,
                         .mult = cpu_mult,
                         .recip = cpu_recip,
                         .scatter = cpu_scatter,
                         .gather = cpu_gather,
                         .sum_copies = cpu_sum_copies,
                         .node_spmv = cpu_node_spmv,
                         .interpolate = cpu_interpolate,
                         .integrate = cpu_integrate,
                         .fill = cpu_fill,
                         .diag_add = cpu_diag_add,
                         .assemble = cpu_assemble,
                         .sync = cpu_sync,
                         .destroy = cpu_destroy,
                         .operator_setup = cpu_operator_setup};
    return FEM_OK;
}

