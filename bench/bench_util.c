/* femto-bench's shared pieces (see bench.h): output, timing, meshes, reference copies. */
#include "bench.h"

#include "fem/error.h"
#include "io/mesh_read.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------------ output */

static FILE *md_file; /* the --markdown file, for the process's one run */

void bench_out(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (md_file) {
        va_start(ap, fmt);
        vfprintf(md_file, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

int bench_markdown(const char *path) {
    md_file = fopen(path, "w");
    return md_file ? 0 : -1;
}

void bench_markdown_close(void) {
    if (md_file) fclose(md_file);
    md_file = NULL;
}

void bench_die(const char *what) {
    fprintf(stderr, "femto-bench: %s: %s\n", what, fem_last_error());
    exit(1);
}

void *bench_malloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "femto-bench: out of host memory (%.1f MB)\n", (double)bytes / 1e6);
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------------------------------------ timing */

double bench_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double bench_time_cpu(BenchFn fn, void *ctx, int repeat) {
    double *t = bench_malloc(sizeof(double) * (size_t)repeat);
    if (fn(ctx)) bench_die("a CPU kernel"); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        double t0 = bench_now_us();
        if (fn(ctx)) bench_die("a CPU kernel");
        t[r] = bench_now_us() - t0;
    }
    double med = bench_median(t, repeat);
    free(t);
    return med;
}

#ifdef FEMTO_HAVE_CUDA
double bench_time_gpu(BenchFn fn, void *ctx, int repeat, GpuTimer *timer) {
    double *t = bench_malloc(sizeof(double) * (size_t)repeat);
    for (int w = 0; w < 3; w++)
        if (fn(ctx)) bench_die("a GPU kernel"); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        if (gpu_timer_start(timer) || fn(ctx) || gpu_timer_stop(timer, &t[r])) bench_die("a GPU kernel");
    }
    double med = bench_median(t, repeat);
    free(t);
    return med;
}
#endif

double bench_time(const Bench *B, const Device *d, const Options *o, BenchFn fn, void *ctx) {
#ifdef FEMTO_HAVE_CUDA
    if (B->have_gpu && (d == &B->gpa || d == &B->gpg)) return bench_time_gpu(fn, ctx, o->repeat, B->timer);
#else
    (void)B, (void)d;
#endif
    return bench_time_cpu(fn, ctx, o->cpu_repeat);
}

double bench_host_copy_gbps(int threads, size_t bytes) {
    int64_t n = (int64_t)(bytes / sizeof(double));
    double *a = bench_malloc(sizeof(double) * (size_t)n), *b = bench_malloc(sizeof(double) * (size_t)n);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] = (double)i, b[i] = 0.0; /* first touch by the copying threads */
    double t[7];
    for (int r = 0; r < 7; r++) {
        double t0 = bench_now_us();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; i++) b[i] = a[i];
        t[r] = bench_now_us() - t0;
    }
    double us = bench_median(t, 7);
    volatile double sink = b[n - 1]; /* the copy is used */
    (void)sink;
    free(a);
    free(b);
    return 2.0 * (double)n * sizeof(double) / (us * 1e-6) / 1e9;
}

/* ------------------------------------------------------------------------------------------------ meshes */

int bench_shape_dim(const char *s) {
    return strcmp(s, "tri") && strcmp(s, "quad") ? 3 : 2;
}

Shape bench_shape(const char *s) {
    return !strcmp(s, "tri")    ? SHAPE_TRI
           : !strcmp(s, "quad") ? SHAPE_QUAD
           : !strcmp(s, "tet")  ? SHAPE_TET
                                : SHAPE_HEX;
}

const char *bench_shape_title(const char *s) {
    return !strcmp(s, "tri")    ? "triangles"
           : !strcmp(s, "quad") ? "quadrilaterals"
           : !strcmp(s, "tet")  ? "tetrahedra"
                                : "hexahedra";
}

const char *bench_shape_how(const char *s) {
    return !strcmp(s, "tri") ? "Gmsh Frontal-Delaunay on the unit square"
           : !strcmp(s, "quad")
               ? "Gmsh Frontal-Delaunay triangles on the unit square, recombined, every element "
                 "split into quadrilaterals"
           : !strcmp(s, "tet") ? "Gmsh HXT Delaunay on the unit cube"
                               : "Gmsh HXT tetrahedra on the unit cube, each split into 4 hexahedra";
}

int64_t bench_cells(const Mesh *m, Shape s) {
    int64_t n = 0;
    for (int b = 0; b < m->ncell_blocks; b++)
        if (m->cells[b].shape == s) n += m->cells[b].count;
    return n;
}

/* A mesh of a sixteenth of the target calibrates the element count against the size h (count ~ h^-dim), then
 * the final mesh is made at the scaled size (within about 10% of the target). */
void bench_make_mesh(const Options *o, const char *shape, int64_t elements, Mesh *m, double *seconds,
                     int *cached) {
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_%s.geo", o->meshes, shape);
    int d = bench_shape_dim(shape);
    Shape s = bench_shape(shape);
    double t0 = bench_now_us();
    int64_t calib = elements / 16;
    if (calib < 2000) calib = elements < 2000 ? elements : 2000;
    /* first guess from a rough density (elements per unit volume at size h: c / h^d) */
    double c = d == 2 ? 2.3 : 6.0;
    double h0 = pow(c / (double)(calib > 0 ? calib : 1), 1.0 / d);
    MeshReadResult got;
    MeshReadOptions mo = {.size = h0, .order = 1, .cache_dir = o->mesh_cache, .result = &got};
    if (mesh_read(path, &mo, m)) bench_die("meshing the calibration mesh");
    int64_t n0 = bench_cells(m, s);
    mesh_destroy(m);
    if (n0 <= 0) {
        fprintf(stderr, "femto-bench: %s made no %s\n", path, bench_shape_title(shape));
        exit(1);
    }
    mo.size = h0 * pow((double)n0 / (double)elements, 1.0 / d);
    if (mesh_read(path, &mo, m)) bench_die("meshing");
    *seconds = (bench_now_us() - t0) * 1e-6;
    if (cached) *cached = got.origin == MESH_FROM_CACHE;
}

/* ------------------------------------------------------------------------------------------------ data */

static uint64_t rng = 0x2545F4914F6CDD1Dull; /* one sequence for the process: runs repeat exactly */

double bench_rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

double bench_rel_err(const double *g, const double *c, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(g[i])) return INFINITY;
        num += (g[i] - c[i]) * (g[i] - c[i]);
        den += c[i] * c[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void bench_fmt_us(char *buf, size_t len, double us) {
    if (us < 0)
        snprintf(buf, len, "-");
    else if (us >= 100)
        snprintf(buf, len, "%.0f", us);
    else
        snprintf(buf, len, "%.1f", us);
}
