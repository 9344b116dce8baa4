/* femto-bench: the interpolation and integration kernels on unstructured meshes of about a million elements
 * (triangles, quadrilaterals, tetrahedra, hexahedra; p = 1, 2, 3), on the CPU (serial, threaded with atomic
 * and with gather assembly) and on the GPU (atomic assembly; gather assembly as element kernel + assembly
 * kernel). It reproduces the table of the femto author's CUDA write-up (docs/gpu-backend.md says what is
 * measured and how bytes are counted).
 *
 * Times are medians over --repeat runs after warm-up: wall clock on the CPU, CUDA events on the GPU. Each GPU
 * kernel also gets the minimal bytes it must move, the bandwidth that makes, and that bandwidth as a share of
 * a device-to-device copy measured in the same run. The GPU results are checked against the CPU's once per
 * case; a disagreement makes the exit status 1. */
#include "cpu/cpu.h"
#include "fem/device.h"
#include "fem/error.h"
#include "fem/quadrature.h"
#include "fem/space.h"
#include "fem/tables.h"
#include "io/mesh_read.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FEMTO_BENCH_MESHES
#define FEMTO_BENCH_MESHES "bench/meshes"
#endif
#ifndef FEMTO_SOURCE_DIR
#define FEMTO_SOURCE_DIR "."
#endif

enum { MAX_ORDERS = 8, EXIT_SKIP = 77 };

typedef struct {
    int64_t elements;
    char shapes[64];
    int orders[MAX_ORDERS], norders;
    int repeat, cpu_repeat;
    int cpu, gpu, gpu_required;
    int threads;
    const char *markdown, *meshes, *tables, *path;
} Options;

/* ------------------------------------------------------------------------------------------------ output */

static FILE *md_file;

/* Prints to stdout and, with --markdown, to the file. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
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

static void die(const char *what) {
    fprintf(stderr, "femto-bench: %s: %s\n", what, fem_last_error());
    exit(1);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ------------------------------------------------------------------------------------------------ meshes */

static int shape_dim_of(const char *s) {
    return strcmp(s, "tri") && strcmp(s, "quad") ? 3 : 2;
}
static Shape shape_of(const char *s) {
    return !strcmp(s, "tri")    ? SHAPE_TRI
           : !strcmp(s, "quad") ? SHAPE_QUAD
           : !strcmp(s, "tet")  ? SHAPE_TET
                                : SHAPE_HEX;
}
static const char *shape_title(const char *s) {
    return !strcmp(s, "tri")    ? "triangles"
           : !strcmp(s, "quad") ? "quadrilaterals"
           : !strcmp(s, "tet")  ? "tetrahedra"
                                : "hexahedra";
}
static const char *shape_how(const char *s) {
    return !strcmp(s, "tri") ? "Gmsh Frontal-Delaunay on the unit square"
           : !strcmp(s, "quad")
               ? "Gmsh Frontal-Delaunay triangles on the unit square, recombined, every element "
                 "split into quadrilaterals"
           : !strcmp(s, "tet") ? "Gmsh HXT Delaunay on the unit cube"
                               : "Gmsh HXT tetrahedra on the unit cube, each split into 4 hexahedra";
}

static int64_t cells_of(const Mesh *m, Shape s) {
    int64_t n = 0;
    for (int b = 0; b < m->ncell_blocks; b++)
        if (m->cells[b].shape == s) n += m->cells[b].count;
    return n;
}

/* A mesh of about o->elements elements: a mesh of a sixteenth of that calibrates the element count against
 * the size h (count ~ h^-dim), then the final mesh is made at the scaled size (within about 10% of the
 * target). */
static void make_mesh(const Options *o, const char *shape, Mesh *m, double *seconds) {
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_%s.geo", o->meshes, shape);
    int d = shape_dim_of(shape);
    Shape s = shape_of(shape);
    double t0 = now_us();
    int64_t calib = o->elements / 16;
    if (calib < 2000) calib = o->elements < 2000 ? o->elements : 2000;
    /* first guess from a rough density (elements per unit volume at size h: c / h^d) */
    double c = d == 2 ? 2.3 : 6.0;
    double h0 = pow(c / (double)(calib > 0 ? calib : 1), 1.0 / d);
    MeshReadOptions mo = {.size = h0, .order = 1};
    if (mesh_read(path, &mo, m)) die("meshing the calibration mesh");
    int64_t n0 = cells_of(m, s);
    mesh_destroy(m);
    if (n0 <= 0) {
        fprintf(stderr, "femto-bench: %s made no %s\n", path, shape_title(shape));
        exit(1);
    }
    double h = h0 * pow((double)n0 / (double)o->elements, 1.0 / d);
    mo.size = h;
    if (mesh_read(path, &mo, m)) die("meshing");
    *seconds = (now_us() - t0) * 1e-6;
}

/* ------------------------------------------------------------------------------------------------ timing */

typedef int (*BenchFn)(void *ctx);

static double time_cpu(BenchFn fn, void *ctx, int repeat) {
    double *t = malloc(sizeof(double) * (size_t)repeat);
    if (fn(ctx)) die("a CPU kernel"); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        double t0 = now_us();
        if (fn(ctx)) die("a CPU kernel");
        t[r] = now_us() - t0;
    }
    double med = median(t, repeat);
    free(t);
    return med;
}

#ifdef FEMTO_HAVE_CUDA
static double time_gpu(BenchFn fn, void *ctx, int repeat, GpuTimer *timer) {
    double *t = malloc(sizeof(double) * (size_t)repeat);
    for (int w = 0; w < 3; w++)
        if (fn(ctx)) die("a GPU kernel"); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        if (gpu_timer_start(timer) || fn(ctx) || gpu_timer_stop(timer, &t[r])) die("a GPU kernel");
    }
    double med = median(t, repeat);
    free(t);
    return med;
}
#endif

/* What one kernel call needs. */
typedef struct {
    Device *d;
    const ElemView *v;
    const double *u, *fq;
    double *duq, *r, *evec;
} Call;

static int call_interp(void *p) {
    Call *c = p;
    return c->d->ops.interpolate(c->d, c->v, c->u, NULL, c->duq);
}
static int call_integ(void *p) {
    Call *c = p;
    return c->d->ops.integrate(c->d, c->v, NULL, c->fq, c->r, c->evec);
}
#ifdef FEMTO_HAVE_CUDA
static int call_evec(void *p) {
    Call *c = p;
    return gpu_integrate_evec(c->d, c->v, NULL, c->fq, c->evec);
}
static int call_assemble(void *p) {
    Call *c = p;
    return c->d->ops.assemble(c->d, c->v, c->evec, c->r);
}
#endif

/* ------------------------------------------------------------------------------------------------ results */

enum {
    R_INTERP_SERIAL,
    R_INTERP_THREADS,
    R_INTERP_GPU,
    R_INTEG_SERIAL,
    R_INTEG_ATOMIC,
    R_INTEG_GATHER,
    R_INTEG_GPU_ATOMIC,
    R_INTEG_GPU_EVEC,
    R_INTEG_GPU_ASSEMBLE,
    R_COUNT
};

typedef struct {
    double us[R_COUNT]; /* < 0: not run */
    double bytes[R_COUNT];
    char launch[R_COUNT][160];
} Case;

#ifdef FEMTO_HAVE_CUDA
static double rel_err(const double *g, const double *c, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(g[i])) return INFINITY;
        num += (g[i] - c[i]) * (g[i] - c[i]);
        den += c[i] * c[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
#endif

static void fmt_us(char *buf, size_t len, double us) {
    if (us < 0)
        snprintf(buf, len, "-");
    else if (us >= 100)
        snprintf(buf, len, "%.0f", us);
    else
        snprintf(buf, len, "%.1f", us);
}

/* ------------------------------------------------------------------------------------------------ one case
 */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

typedef struct {
    Device cpu1, cpun, cpun_gather;
    int have_gpu;
    Device gpa, gpg;
#ifdef FEMTO_HAVE_CUDA
    GpuTimer *timer;
#endif
    double copy_gbps;
    int mismatches;
} Bench;

static void run_case(Bench *B, const Options *o, const Mesh *m, Shape s, int p, Case *cs) {
    for (int k = 0; k < R_COUNT; k++) cs->us[k] = -1, cs->bytes[k] = 0, cs->launch[k][0] = 0;
    Space sp;
    if (space_create(m, p, 1, &sp)) die("creating the space");
    int bi = 0;
    while (bi < sp.ncell_blocks && sp.cells[bi].shape != s) bi++;
    const SpaceBlock *sb = &sp.cells[bi];
    ElementTables t;
    if (tables_create(s, p, quadrature_default_degree(p, m->cells[bi].order), &t)) die("tables");
    ElemView v = {.nelem = sb->count,
                  .ndof = t.ndof,
                  .nq = t.nq,
                  .dim = t.dim,
                  .ncomp = 1,
                  .dofs = sb->dofs,
                  .B = t.B,
                  .G = t.G,
                  .tensor = t.tensor,
                  .nd1 = t.nd1,
                  .nq1 = t.nq1,
                  .B1 = t.B1,
                  .G1 = t.G1,
                  .nnodes = sp.nnodes,
                  .t_offsets = sb->t_offsets,
                  .t_slots = sb->t_slots};
    const int64_t ne = v.nelem, nn = sp.nnodes, nqd = ne * v.nq * v.dim, nev = ne * v.ndof;
    double *u = malloc(sizeof(double) * (size_t)nn), *fq = malloc(sizeof(double) * (size_t)nqd);
    double *duq = calloc((size_t)nqd, sizeof(double)), *r = calloc((size_t)nn, sizeof(double));
    double *evec = calloc((size_t)nev, sizeof(double));
    double *duq_ref = NULL, *r_ref = NULL;
    if (!u || !fq || !duq || !r || !evec) {
        fprintf(stderr, "femto-bench: out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < nn; i++) u[i] = rnd();
    for (int64_t i = 0; i < nqd; i++) fq[i] = rnd();

    /* minimal bytes (ncomp = 1): see docs/gpu-backend.md */
    double b_dofs = 4.0 * (double)nev, b_q = 8.0 * (double)nqd, b_e = 8.0 * (double)nev;
    cs->bytes[R_INTERP_GPU] = 8.0 * (double)nn + b_dofs + b_q;
    cs->bytes[R_INTEG_GPU_ATOMIC] = b_q + b_dofs + 16.0 * (double)nn;
    cs->bytes[R_INTEG_GPU_EVEC] = b_q + b_e;
    cs->bytes[R_INTEG_GPU_ASSEMBLE] = b_e + b_dofs + 8.0 * (double)(nn + 1) + 16.0 * (double)nn;

    if (o->cpu) {
        Call c = {&B->cpu1, &v, u, fq, duq, r, NULL};
        cs->us[R_INTERP_SERIAL] = time_cpu(call_interp, &c, o->cpu_repeat);
        cs->us[R_INTEG_SERIAL] = time_cpu(call_integ, &c, o->cpu_repeat);
        c.d = &B->cpun;
        cs->us[R_INTERP_THREADS] = time_cpu(call_interp, &c, o->cpu_repeat);
        cs->us[R_INTEG_ATOMIC] = time_cpu(call_integ, &c, o->cpu_repeat);
        c.d = &B->cpun_gather;
        c.evec = evec;
        cs->us[R_INTEG_GATHER] = time_cpu(call_integ, &c, o->cpu_repeat);
    }
#ifdef FEMTO_HAVE_CUDA
    if (B->have_gpu) {
        /* reference results on the CPU (threaded), for the check */
        duq_ref = malloc(sizeof(double) * (size_t)nqd);
        r_ref = calloc((size_t)nn, sizeof(double));
        if (!duq_ref || !r_ref) fprintf(stderr, "femto-bench: out of host memory\n"), exit(1);
        if (B->cpun.ops.interpolate(&B->cpun, &v, u, NULL, duq_ref)) die("the CPU reference");
        if (B->cpun_gather.ops.integrate(&B->cpun_gather, &v, NULL, fq, r_ref, evec))
            die("the CPU reference");

        Device *g = &B->gpa;
        ElemView gv = v;
        void *p_dofs, *p_B, *p_G, *p_B1 = NULL, *p_G1 = NULL, *p_off, *p_slots, *p_u, *p_fq, *p_duq, *p_r,
                                  *p_ev;
        if (device_alloc_copy(g, &p_dofs, sb->dofs, sizeof(fem_idx) * (size_t)nev) ||
            device_alloc_copy(g, &p_B, t.B, sizeof(double) * (size_t)t.nq * t.ndof) ||
            device_alloc_copy(g, &p_G, t.G, sizeof(double) * (size_t)t.nq * t.ndof * t.dim) ||
            (t.tensor && device_alloc_copy(g, &p_B1, t.B1, sizeof(double) * (size_t)t.nq1 * t.nd1)) ||
            (t.tensor && device_alloc_copy(g, &p_G1, t.G1, sizeof(double) * (size_t)t.nq1 * t.nd1)) ||
            device_alloc_copy(g, &p_off, sb->t_offsets, sizeof(int64_t) * (size_t)(nn + 1)) ||
            device_alloc_copy(g, &p_slots, sb->t_slots, sizeof(int32_t) * (size_t)nev) ||
            device_alloc_copy(g, &p_u, u, sizeof(double) * (size_t)nn) ||
            device_alloc_copy(g, &p_fq, fq, sizeof(double) * (size_t)nqd) ||
            device_alloc(g, &p_duq, sizeof(double) * (size_t)nqd) ||
            device_alloc(g, &p_r, sizeof(double) * (size_t)nn) ||
            device_alloc(g, &p_ev, sizeof(double) * (size_t)nev))
            die("copying the case to the GPU");
        gv.dofs = p_dofs, gv.B = p_B, gv.G = p_G, gv.B1 = p_B1, gv.G1 = p_G1;
        gv.t_offsets = p_off, gv.t_slots = p_slots;
        Call c = {g, &gv, p_u, p_fq, p_duq, p_r, NULL};

        /* check once: interpolation, atomic and gather integration against the CPU */
        double e1, e2, e3;
        if (call_interp(&c) || g->ops.download(g, duq, p_duq, sizeof(double) * (size_t)nqd)) die("GPU check");
        e1 = rel_err(duq, duq_ref, nqd);
        if (g->ops.zero(g, p_r, sizeof(double) * (size_t)nn) || call_integ(&c) ||
            g->ops.download(g, r, p_r, sizeof(double) * (size_t)nn))
            die("GPU check");
        e2 = rel_err(r, r_ref, nn);
        Call cg = {&B->gpg, &gv, p_u, p_fq, p_duq, p_r, p_ev};
        if (g->ops.zero(g, p_r, sizeof(double) * (size_t)nn) || call_integ(&cg) ||
            g->ops.download(g, r, p_r, sizeof(double) * (size_t)nn))
            die("GPU check");
        e3 = rel_err(r, r_ref, nn);
        if (!(e1 <= 1e-12 && e2 <= 1e-12 && e3 <= 1e-12)) {
            B->mismatches++;
            fprintf(
                stderr,
                "femto-bench: MISMATCH %s p=%d: GPU vs CPU relative errors: interpolation %.2e, integration "
                "atomics %.2e, gather %.2e\n",
                shape_name(s), p, e1, e2, e3);
        }

        cs->us[R_INTERP_GPU] = time_gpu(call_interp, &c, o->repeat, B->timer);
        snprintf(cs->launch[R_INTERP_GPU], sizeof cs->launch[0], "%s", gpu_last_launch(g));
        cs->us[R_INTEG_GPU_ATOMIC] = time_gpu(call_integ, &c, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_ATOMIC], sizeof cs->launch[0], "%s", gpu_last_launch(g));
        cs->us[R_INTEG_GPU_EVEC] = time_gpu(call_evec, &cg, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_EVEC], sizeof cs->launch[0], "%s", gpu_last_launch(&B->gpg));
        cs->us[R_INTEG_GPU_ASSEMBLE] = time_gpu(call_assemble, &cg, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_ASSEMBLE], sizeof cs->launch[0],
                 "one thread per node, %d threads/block", 256);
        if (B->gpa.ops.sync(&B->gpa)) die("GPU");
        void *owned[] = {p_dofs, p_B, p_G, p_B1, p_G1, p_off, p_slots, p_u, p_fq, p_duq, p_r, p_ev};
        for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) device_free(g, owned[k]);
    }
#endif
    (void)o;
    free(u), free(fq), free(duq), free(r), free(evec), free(duq_ref), free(r_ref);
    tables_destroy(&t);
    space_destroy(&sp);
}

/* ------------------------------------------------------------------------------------------------ tables */

static void print_shape(const Options *o, const Bench *B, const char *shape, const Mesh *m, double mesh_s,
                        Case *cases) {
    Shape s = shape_of(shape);
    out("\n## %s: %lld elements, %lld vertices\n\n", shape_title(shape), (long long)cells_of(m, s),
        (long long)m->nnodes);
    out("Mesh: %s (element size chosen from a calibration mesh; %.1f s).\n\n", shape_how(shape), mesh_s);
    char head[256] = "", sep[256] = "", cell[64];
    for (int k = 0; k < o->norders; k++) {
        size_t l = strlen(head);
        snprintf(head + l, sizeof head - l, " p = %d |", o->orders[k]);
        l = strlen(sep);
        snprintf(sep + l, sizeof sep - l, "---:|");
    }
    struct {
        const char *name;
        int row, row2;
    } interp_rows[] = {{"CPU (serial)", R_INTERP_SERIAL, -1},
                       {"CPU (threaded)", R_INTERP_THREADS, -1},
                       {"GPU", R_INTERP_GPU, -1}},
      integ_rows[] = {{"CPU (serial)", R_INTEG_SERIAL, -1},
                      {"CPU (threaded, atomics)", R_INTEG_ATOMIC, -1},
                      {"CPU (threaded, gather)", R_INTEG_GATHER, -1},
                      {"GPU (atomics)", R_INTEG_GPU_ATOMIC, -1},
                      {"GPU (gather)*", R_INTEG_GPU_EVEC, R_INTEG_GPU_ASSEMBLE}};
    for (int table = 0; table < 2; table++) {
        out("| %s (µs) |%s\n|---|%s\n", table ? "integration" : "interpolation", head, sep);
        int nrows = table ? 5 : 3;
        for (int i = 0; i < nrows; i++) {
            const char *name = table ? integ_rows[i].name : interp_rows[i].name;
            int row = table ? integ_rows[i].row : interp_rows[i].row;
            int row2 = table ? integ_rows[i].row2 : interp_rows[i].row2;
            int gpu_row = row == R_INTERP_GPU || row >= R_INTEG_GPU_ATOMIC;
            if ((gpu_row && !B->have_gpu) || (!gpu_row && !o->cpu)) continue;
            out("| %s |", name);
            for (int k = 0; k < o->norders; k++) {
                fmt_us(cell, sizeof cell, cases[k].us[row]);
                if (row2 >= 0) {
                    char c2[32];
                    fmt_us(c2, sizeof c2, cases[k].us[row2]);
                    out(" {%s, %s} |", cell, c2);
                } else
                    out(" %s |", cell);
            }
            out("\n");
        }
        out("\n");
    }
    if (B->have_gpu) {
        out("\\* GPU (gather): {element kernel, gather-assembly kernel}. The GPU (atomics) kernel integrates "
            "and "
            "assembles in one kernel (not deterministic).\n\n");
        out("| GPU kernel | p | minimal bytes | µs | GB/s | %% of copy | launch "
            "|\n|---|---:|---:|---:|---:|---:|---|\n");
        struct {
            const char *name;
            int row;
        } k_rows[] = {{"gradient interpolation", R_INTERP_GPU},
                      {"integration + atomic assembly", R_INTEG_GPU_ATOMIC},
                      {"integration to E-vector (gather, 1/2)", R_INTEG_GPU_EVEC},
                      {"gather assembly (gather, 2/2)", R_INTEG_GPU_ASSEMBLE}};
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < o->norders; k++) {
                const Case *c = &cases[k];
                int row = k_rows[i].row;
                double gbps = c->bytes[row] / (c->us[row] * 1e-6) / 1e9;
                fmt_us(cell, sizeof cell, c->us[row]);
                out("| %s | %d | %.1f MB | %s | %.0f | %.0f%% | %s |\n", k_rows[i].name, o->orders[k],
                    c->bytes[row] / 1e6, cell, gbps, 100.0 * gbps / B->copy_gbps, c->launch[row]);
            }
        out("\n");
    }
}

/* ------------------------------------------------------------------------------------------------ main */

static void usage(void) {
    printf("usage: femto-bench [options]\n"
           "  --elements N        elements per mesh (default 1000000)\n"
           "  --shapes LIST       of tri,quad,tet,hex (default all)\n"
           "  --orders LIST       polynomial orders (default 1,2,3)\n"
           "  --repeat R          timed GPU runs per kernel, after 3 warm-ups (default 10)\n"
           "  --cpu-repeat R      timed CPU runs per kernel, after 1 warm-up (default 3)\n"
           "  --threads T         CPU threads of the threaded rows (default: all)\n"
           "  --cpu-only          CPU rows only\n"
           "  --gpu-only          GPU rows only (exit 77 when there is no GPU)\n"
           "  --tables auto|shared|global   where the GPU kernels keep shape tables (default auto)\n"
           "  --path auto|full|tensor       quads and hexes: full tables or sum factorisation (default auto)\n"
           "  --markdown FILE     also write the tables to FILE\n"
           "  --meshes DIR        folder of bench_<shape>.geo (default: the source tree's bench/meshes)\n");
}

static int parse_list(const char *s, int *v, int max) {
    int n = 0;
    while (*s && n < max) {
        v[n++] = atoi(s);
        s = strchr(s, ',');
        if (!s) break;
        s++;
    }
    return n;
}

int main(int argc, char **argv) {
    Options o = {.elements = 1000000,
                 .shapes = "tri,quad,tet,hex",
                 .orders = {1, 2, 3},
                 .norders = 3,
                 .repeat = 10,
                 .cpu_repeat = 3,
                 .cpu = 1,
                 .gpu = 1,
                 .meshes = FEMTO_BENCH_MESHES,
                 .tables = "auto",
                 .path = "auto"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--elements") && val)
            o.elements = (int64_t)atof(val);
        else if (!strcmp(a, "--shapes") && val)
            snprintf(o.shapes, sizeof o.shapes, "%s", val);
        else if (!strcmp(a, "--orders") && val)
            o.norders = parse_list(val, o.orders, MAX_ORDERS);
        else if (!strcmp(a, "--repeat") && val)
            o.repeat = atoi(val);
        else if (!strcmp(a, "--cpu-repeat") && val)
            o.cpu_repeat = atoi(val);
        else if (!strcmp(a, "--threads") && val)
            o.threads = atoi(val);
        else if (!strcmp(a, "--markdown") && val)
            o.markdown = val;
        else if (!strcmp(a, "--meshes") && val)
            o.meshes = val;
        else if (!strcmp(a, "--tables") && val)
            o.tables = val;
        else if (!strcmp(a, "--path") && val)
            o.path = val;
        else {
            takes = 0;
            if (!strcmp(a, "--cpu-only"))
                o.gpu = 0;
            else if (!strcmp(a, "--gpu-only"))
                o.cpu = 0, o.gpu_required = 1;
            else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
                return usage(), 0;
            else
                return fprintf(stderr, "femto-bench: unknown or incomplete option '%s'\n", a), usage(), 2;
        }
        i += takes;
    }
    if (o.elements < 1 || o.repeat < 1 || o.cpu_repeat < 1 || o.norders < 1 || (!o.cpu && !o.gpu))
        return fprintf(stderr, "femto-bench: nothing to do with these options\n"), 2;
    for (int k = 0; k < o.norders; k++)
        if (o.orders[k] < 1 || o.orders[k] > 3)
            return fprintf(stderr, "femto-bench: orders are 1, 2 or 3 (simplices go to 3)\n"), 2;

    Bench B;
    memset(&B, 0, sizeof B);
    int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    if (cpu_device_create(&B.cpu1, 1, ASSEMBLE_ATOMIC) ||
        cpu_device_create(&B.cpun, threads, ASSEMBLE_ATOMIC) ||
        cpu_device_create(&B.cpun_gather, threads, ASSEMBLE_GATHER))
        die("creating the CPU devices");
    char gpu_note[512] = "none";
#ifdef FEMTO_HAVE_CUDA
    if (o.gpu) {
        device_register(DEV_CUDA, gpu_device_create);
        if (device_create(&B.gpa, DEV_CUDA, 0, ASSEMBLE_ATOMIC) == 0 &&
            device_create(&B.gpg, DEV_CUDA, 0, ASSEMBLE_GATHER) == 0)
            B.have_gpu = 1;
        else
            snprintf(gpu_note, sizeof gpu_note, "none (%s)", fem_last_error());
    }
    if (B.have_gpu) {
        GpuTuning tu;
        memset(&tu, 0, sizeof tu);
        tu.tables = !strcmp(o.tables, "shared")   ? GPU_PLACE_SHARED
                    : !strcmp(o.tables, "global") ? GPU_PLACE_GLOBAL
                                                  : GPU_PLACE_AUTO;
        tu.path = !strcmp(o.path, "full") ? GPU_PATH_FULL : !strcmp(o.path, "tensor") ? GPU_PATH_TENSOR : GPU_PATH_AUTO;
        if (gpu_device_tune(&B.gpa, &tu) || gpu_device_tune(&B.gpg, &tu)) die("tuning");
        if (gpu_timer_create(&B.timer)) die("creating a GPU timer");
        double us;
        if (gpu_copy_bandwidth(&B.gpa, (size_t)1 << 30, 20, &us, &B.copy_gbps))
            die("measuring copy bandwidth");
        snprintf(gpu_note, sizeof gpu_note, "%s; device-to-device copy of 1 GiB: %.0f GB/s (read + write)",
                 B.gpa.description, B.copy_gbps);
    }
#else
    if (o.gpu) snprintf(gpu_note, sizeof gpu_note, "none (femto was built without CUDA)");
#endif
    if (o.gpu_required && !B.have_gpu) {
        printf("skipped: no GPU: %s\n", gpu_note);
        return EXIT_SKIP;
    }
    if (o.markdown && !(md_file = fopen(o.markdown, "w"))) {
        fprintf(stderr, "femto-bench: cannot write '%s'\n", o.markdown);
        return 1;
    }

    /* the commit the build was configured at; the source tree's HEAD is named too where it differs (a copy
     * of the tree on another machine may carry an older .git) */
    char date[64] = "?", head[64] = "", rev[160];
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&tt));
    FILE *git = popen("git -C '" FEMTO_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", "r");
    if (git) {
        if (!fgets(head, sizeof head, git)) head[0] = 0;
        head[strcspn(head, "\n")] = 0;
        if (pclose(git) != 0) head[0] = 0;
    }
    if (head[0] && strcmp(head, FEMTO_CONFIGURED_COMMIT))
        snprintf(rev, sizeof rev, "%s (configured; the source tree's HEAD is %s)", FEMTO_CONFIGURED_COMMIT, head);
    else
        snprintf(rev, sizeof rev, "%s", FEMTO_CONFIGURED_COMMIT);
    out("# femto-bench\n\n");
    out("- date: %s; femto %s, git %s\n", date, FEMTO_VERSION, rev);
    out("- GPU: %s\n", gpu_note);
    out("- CPU: %d threads for the threaded rows (OpenMP)\n", threads);
    out("- gradient interpolation of a scalar field (p-th order Lagrange, femto's default quadrature of "
        "degree "
        "2p), and integration against test-function gradients with assembly into the L-vector; median of %d "
        "GPU runs (CUDA events) after 3 warm-ups, %d CPU runs (wall clock) after 1\n",
        o.repeat, o.cpu_repeat);

    char shapes[64];
    snprintf(shapes, sizeof shapes, "%s", o.shapes);
    for (char *tok = strtok(shapes, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "tri") && strcmp(tok, "quad") && strcmp(tok, "tet") && strcmp(tok, "hex")) {
            fprintf(stderr, "femto-bench: unknown shape '%s' (tri, quad, tet, hex)\n", tok);
            return 2;
        }
        Mesh m;
        double mesh_s;
        fprintf(stderr, "femto-bench: meshing %s ...\n", shape_title(tok));
        make_mesh(&o, tok, &m, &mesh_s);
        Case cases[MAX_ORDERS];
        for (int k = 0; k < o.norders; k++) {
            fprintf(stderr, "femto-bench: %s p = %d ...\n", shape_title(tok), o.orders[k]);
            run_case(&B, &o, &m, shape_of(tok), o.orders[k], &cases[k]);
        }
        print_shape(&o, &B, tok, &m, mesh_s, cases);
        mesh_destroy(&m);
    }
    out("Minimal bytes: interpolation reads the L-vector once (8 nnodes) and the dof map (4 nelem ndof) and "
        "writes the q-point gradients (8 nelem nq dim); integration with atomics reads the q-point fluxes (8 "
        "nelem nq dim) and the dof map and reads and writes the L-vector once (16 nnodes); the gather "
        "element "
        "kernel reads the fluxes and writes the E-vector (8 nelem ndof); the gather-assembly kernel reads "
        "the "
        "E-vector, the slot list (4 nelem ndof) and offsets (8 nnodes) and reads and writes the L-vector. "
        "GB/s = minimal bytes / time; %% of copy = that against the device-to-device copy above.\n\n");
    if (B.mismatches)
        out("\n**%d case(s) where the GPU disagreed with the CPU: see stderr.**\n", B.mismatches);
    if (md_file) fclose(md_file);
#ifdef FEMTO_HAVE_CUDA
    if (B.have_gpu) {
        gpu_timer_destroy(B.timer);
        device_destroy(&B.gpa);
        device_destroy(&B.gpg);
    }
#endif
    device_destroy(&B.cpu1);
    device_destroy(&B.cpun);
    device_destroy(&B.cpun_gather);
    return B.mismatches ? 1 : 0;
}
