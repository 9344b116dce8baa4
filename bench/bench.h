/* femto-bench's shared pieces: the options, the devices every table runs on, output to stdout and the
 * markdown file, timing (medians of wall-clock or CUDA-event runs), the benchmark meshes, and the reference
 * copy bandwidths the byte models are compared with. femto-bench.c holds the kernel table (the seed's) and
 * main; bench_operator.c the operator table; bench_cg.c the CG iteration rows. docs/gpu-backend.md and
 * docs/PERFORMANCE.md say what is measured and how bytes are counted. */
#ifndef FEMTO_BENCH_H
#define FEMTO_BENCH_H

#include "fem/device.h"
#include "fem/mesh.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <stdint.h>
#include <stdio.h>

enum { BENCH_MAX_ORDERS = 8, BENCH_EXIT_SKIP = 77 };
/* The default elements per mesh: a million where a GPU runs the rows. On the CPU alone 20,000, so that the
 * whole default run takes minutes on a few cores (at 100,000 it took about 45 minutes on 2 shared cores, the
 * hexahedra at p = 3..6 most of it); its smaller working sets partly fit in a large L3, so CPU bandwidth
 * figures want --elements 100000 or more. */
enum { BENCH_ELEMENTS_GPU = 1000000, BENCH_ELEMENTS_CPU = 20000 };
/* CG iterations per timed solve of the CG rows: on the CPU alone 50 iterations of the 745k-dof cantilever
 * took 7 of the run's minutes on 2 shared cores; 10 still give the time of one iteration. */
enum { BENCH_CG_ITERATIONS_GPU = 50, BENCH_CG_ITERATIONS_CPU = 10 };
enum { ROWS_KERNELS = 1, ROWS_OPERATOR = 2, ROWS_CG = 4 };

typedef struct {
    int64_t elements;
    char shapes[64];
    int orders[BENCH_MAX_ORDERS], norders;       /* kernel table */
    int op_orders[BENCH_MAX_ORDERS], nop_orders; /* operator table (0: per shape, see bench_operator.c) */
    unsigned rows;                               /* ROWS_* */
    unsigned physics;                            /* operator table: bit 0 heat, 1 elasticity, 2 neo-Hookean */
    int dirichlet;                               /* operator rows with the x = 0 face constrained */
    const char *cg_problem;                      /* problem file of the CG rows */
    double cg_size;                              /* its mesh size (0: the file's) */
    int cg_iterations;
    const char *cg_pc; /* jacobi, multigrid */
    int repeat, cpu_repeat;
    int cpu, gpu, gpu_required;
    int threads;
    const char *markdown, *meshes, *tables, *path;
    /* mesh_read's cache_dir for every mesh femto-bench makes: "" beside the .geo, NULL none */
    const char *mesh_cache;
} Options;

/* The devices every table runs on, and the copy bandwidths they are compared with. */
typedef struct {
    Device cpu1, cpun, cpun_gather;
    int threads;
    int have_gpu;
    Device gpa, gpg; /* GPU, atomic and gather assembly */
#ifdef FEMTO_HAVE_CUDA
    GpuTimer *timer;
    GpuTuning tuning; /* from --tables and --path; the operator rows toggle .unfused */
#endif
    double copy_gbps;        /* GPU device-to-device copy, read + write */
    double cpu_copy_gbps[2]; /* host copy, read + write: one thread, all threads */
    char gpu_name[512];      /* the GPU's description, or "none (why)" */
    char cpu_name[160];      /* /proc/cpuinfo's model name */
    char commit[160], date[64];
    int mismatches;
} Bench;

/* ---- output: stdout and, after bench_markdown, the markdown file */
void bench_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_markdown(const char *path); /* 0, or -1 when the file cannot be written */
void bench_markdown_close(void);
/* A failure of femto (the last error's sentence): message and exit status 1. */
void bench_die(const char *what) __attribute__((noreturn));
void *bench_malloc(size_t bytes); /* exits on failure */

/* ---- timing */
double bench_now_us(void);
double bench_median(double *t, int n);
typedef int (*BenchFn)(void *ctx);
/* Median wall-clock microseconds of `repeat` calls after one warm-up. */
double bench_time_cpu(BenchFn fn, void *ctx, int repeat);
#ifdef FEMTO_HAVE_CUDA
/* Median CUDA-event microseconds of `repeat` calls after 3 warm-ups. */
double bench_time_gpu(BenchFn fn, void *ctx, int repeat, GpuTimer *timer);
#endif
/* On the device that ran it: CUDA events on a GPU, wall clock on the CPU. */
double bench_time(const Bench *B, const Device *d, const Options *o, BenchFn fn, void *ctx);
/* Host copy b[i] = a[i] of `bytes` on `threads` threads: median GB/s counting read + write. */
double bench_host_copy_gbps(int threads, size_t bytes);

/* ---- meshes and shapes ("tri", "quad", "tet", "hex") */
int bench_shape_dim(const char *s);
Shape bench_shape(const char *s);
const char *bench_shape_title(const char *s);
const char *bench_shape_how(const char *s);
int64_t bench_cells(const Mesh *m, Shape s);
/* A mesh of about `elements` cells of bench/meshes/bench_<shape>.geo (the size from a calibration mesh), from
 * femto's mesh cache when o->mesh_cache allows and an entry is there (*cached 1 when cached is not NULL; the
 * next run finds the same mesh, so runs compared with each other run on the same cells). */
void bench_make_mesh(const Options *o, const char *shape, int64_t elements, Mesh *m, double *seconds,
                     int *cached);

/* ---- data */
double bench_rnd(void); /* uniform in [-1, 1), reproducible */
/* ||g - c|| / ||c|| (infinite when g has a non-finite entry) */
double bench_rel_err(const double *g, const double *c, int64_t n);
void bench_fmt_us(char *buf, size_t len, double us);

#endif
