/* femto-bench: the interpolation and integration kernels on unstructured meshes of about a million elements
 * (20,000 by default without a GPU; triangles, quadrilaterals, tetrahedra, hexahedra; p = 1, 2, 3),
 * on the CPU (serial, threaded with atomic and with gather assembly) and on the GPU (atomic assembly; gather
 * assembly as element kernel + assembly kernel). It reproduces the table of the femto author's CUDA write-up
 * (docs/gpu-backend.md says what is measured and how bytes are counted). Then the operator table
 * (bench_operator.c, bench_cg.c): operators of the physics models and a whole CG iteration, on the CPU and
 * the GPU (fused and separate kernels).
 *
 * Times are medians over --repeat runs after warm-up: wall clock on the CPU, CUDA events on the GPU. Each GPU
 * kernel also gets the minimal bytes it must move, the bandwidth that makes, and that bandwidth as a share of
 * a device-to-device copy measured in the same run. The GPU results are checked against the CPU's once per
 * case; a disagreement makes the exit status 1. */
#include "bench_operator.h"
#include "cpu/cpu.h"
#include "fem/error.h"
#include "fem/quadrature.h"
#include "fem/space.h"
#include "fem/tables.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FEMTO_BENCH_MESHES
#define FEMTO_BENCH_MESHES "bench/meshes"
#endif
#ifndef FEMTO_SOURCE_DIR
#define FEMTO_SOURCE_DIR "."
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

/* ------------------------------------------------------------------------------------------------ one case
 */

static void run_case(Bench *B, const Options *o, const Mesh *m, Shape s, int p, Case *cs) {
    for (int k = 0; k < R_COUNT; k++) cs->us[k] = -1, cs->bytes[k] = 0, cs->launch[k][0] = 0;
    Space sp;
    if (space_create(m, p, 1, &sp)) bench_die("creating the space");
    int bi = 0;
    while (bi < sp.ncell_blocks && sp.cells[bi].shape != s) bi++;
    const SpaceBlock *sb = &sp.cells[bi];
    ElementTables t;
    if (tables_create(s, p, quadrature_default_degree(p, m->cells[bi].order), &t)) bench_die("tables");
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
    for (int64_t i = 0; i < nn; i++) u[i] = bench_rnd();
    for (int64_t i = 0; i < nqd; i++) fq[i] = bench_rnd();

    /* minimal bytes (ncomp = 1): see docs/gpu-backend.md */
    double b_dofs = 4.0 * (double)nev, b_q = 8.0 * (double)nqd, b_e = 8.0 * (double)nev;
    cs->bytes[R_INTERP_GPU] = 8.0 * (double)nn + b_dofs + b_q;
    cs->bytes[R_INTEG_GPU_ATOMIC] = b_q + b_dofs + 16.0 * (double)nn;
    cs->bytes[R_INTEG_GPU_EVEC] = b_q + b_e;
    cs->bytes[R_INTEG_GPU_ASSEMBLE] = b_e + b_dofs + 8.0 * (double)(nn + 1) + 16.0 * (double)nn;

    if (o->cpu) {
        Call c = {&B->cpu1, &v, u, fq, duq, r, NULL};
        cs->us[R_INTERP_SERIAL] = bench_time_cpu(call_interp, &c, o->cpu_repeat);
        cs->us[R_INTEG_SERIAL] = bench_time_cpu(call_integ, &c, o->cpu_repeat);
        c.d = &B->cpun;
        cs->us[R_INTERP_THREADS] = bench_time_cpu(call_interp, &c, o->cpu_repeat);
        cs->us[R_INTEG_ATOMIC] = bench_time_cpu(call_integ, &c, o->cpu_repeat);
        c.d = &B->cpun_gather;
        c.evec = evec;
        cs->us[R_INTEG_GATHER] = bench_time_cpu(call_integ, &c, o->cpu_repeat);
    }
#ifdef FEMTO_HAVE_CUDA
    if (B->have_gpu) {
        /* reference results on the CPU (threaded), for the check */
        duq_ref = malloc(sizeof(double) * (size_t)nqd);
        r_ref = calloc((size_t)nn, sizeof(double));
        if (!duq_ref || !r_ref) fprintf(stderr, "femto-bench: out of host memory\n"), exit(1);
        if (B->cpun.ops.interpolate(&B->cpun, &v, u, NULL, duq_ref)) bench_die("the CPU reference");
        if (B->cpun_gather.ops.integrate(&B->cpun_gather, &v, NULL, fq, r_ref, evec))
            bench_die("the CPU reference");

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
            bench_die("copying the case to the GPU");
        gv.dofs = p_dofs, gv.B = p_B, gv.G = p_G, gv.B1 = p_B1, gv.G1 = p_G1;
        gv.t_offsets = p_off, gv.t_slots = p_slots;
        Call c = {g, &gv, p_u, p_fq, p_duq, p_r, NULL};

        /* check once: interpolation, atomic and gather integration against the CPU */
        double e1, e2, e3;
        if (call_interp(&c) || g->ops.download(g, duq, p_duq, sizeof(double) * (size_t)nqd))
            bench_die("GPU check");
        e1 = bench_rel_err(duq, duq_ref, nqd);
        if (g->ops.zero(g, p_r, sizeof(double) * (size_t)nn) || call_integ(&c) ||
            g->ops.download(g, r, p_r, sizeof(double) * (size_t)nn))
            bench_die("GPU check");
        e2 = bench_rel_err(r, r_ref, nn);
        Call cg = {&B->gpg, &gv, p_u, p_fq, p_duq, p_r, p_ev};
        if (g->ops.zero(g, p_r, sizeof(double) * (size_t)nn) || call_integ(&cg) ||
            g->ops.download(g, r, p_r, sizeof(double) * (size_t)nn))
            bench_die("GPU check");
        e3 = bench_rel_err(r, r_ref, nn);
        if (!(e1 <= 1e-12 && e2 <= 1e-12 && e3 <= 1e-12)) {
            B->mismatches++;
            fprintf(
                stderr,
                "femto-bench: MISMATCH %s p=%d: GPU vs CPU relative errors: interpolation %.2e, integration "
                "atomics %.2e, gather %.2e\n",
                shape_name(s), p, e1, e2, e3);
        }

        cs->us[R_INTERP_GPU] = bench_time_gpu(call_interp, &c, o->repeat, B->timer);
        snprintf(cs->launch[R_INTERP_GPU], sizeof cs->launch[0], "%s", gpu_last_launch(g));
        cs->us[R_INTEG_GPU_ATOMIC] = bench_time_gpu(call_integ, &c, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_ATOMIC], sizeof cs->launch[0], "%s", gpu_last_launch(g));
        cs->us[R_INTEG_GPU_EVEC] = bench_time_gpu(call_evec, &cg, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_EVEC], sizeof cs->launch[0], "%s", gpu_last_launch(&B->gpg));
        cs->us[R_INTEG_GPU_ASSEMBLE] = bench_time_gpu(call_assemble, &cg, o->repeat, B->timer);
        snprintf(cs->launch[R_INTEG_GPU_ASSEMBLE], sizeof cs->launch[0],
                 "one thread per node, %d threads/block", 256);
        if (B->gpa.ops.sync(&B->gpa)) bench_die("GPU");
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
                        int cached, Case *cases) {
    Shape s = bench_shape(shape);
    bench_out("\n## %s: %lld elements, %lld vertices\n\n", bench_shape_title(shape),
              (long long)bench_cells(m, s), (long long)m->nnodes);
    bench_out("Mesh: %s (element size chosen from a calibration mesh; %.1f s%s).\n\n", bench_shape_how(shape),
              mesh_s, cached ? ", read from femto's mesh cache" : "");
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
        bench_out("| %s (µs) |%s\n|---|%s\n", table ? "integration" : "interpolation", head, sep);
        int nrows = table ? 5 : 3;
        for (int i = 0; i < nrows; i++) {
            const char *name = table ? integ_rows[i].name : interp_rows[i].name;
            int row = table ? integ_rows[i].row : interp_rows[i].row;
            int row2 = table ? integ_rows[i].row2 : interp_rows[i].row2;
            int gpu_row = row == R_INTERP_GPU || row >= R_INTEG_GPU_ATOMIC;
            if ((gpu_row && !B->have_gpu) || (!gpu_row && !o->cpu)) continue;
            bench_out("| %s |", name);
            for (int k = 0; k < o->norders; k++) {
                bench_fmt_us(cell, sizeof cell, cases[k].us[row]);
                if (row2 >= 0) {
                    char c2[32];
                    bench_fmt_us(c2, sizeof c2, cases[k].us[row2]);
                    bench_out(" {%s, %s} |", cell, c2);
                } else
                    bench_out(" %s |", cell);
            }
            bench_out("\n");
        }
        bench_out("\n");
    }
    if (B->have_gpu) {
        bench_out(
            "\\* GPU (gather): {element kernel, gather-assembly kernel}. The GPU (atomics) kernel integrates "
            "and "
            "assembles in one kernel (not deterministic).\n\n");
        bench_out("| GPU kernel | p | minimal bytes | µs | GB/s | %% of copy | launch "
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
                bench_fmt_us(cell, sizeof cell, c->us[row]);
                bench_out("| %s | %d | %.1f MB | %s | %.0f | %.0f%% | %s |\n", k_rows[i].name, o->orders[k],
                          c->bytes[row] / 1e6, cell, gbps, 100.0 * gbps / B->copy_gbps, c->launch[row]);
            }
        bench_out("\n");
    }
}

/* ------------------------------------------------------------------------------------------------ main */

static void usage(void) {
    printf(
        "usage: femto-bench [options]\n"
        "  --elements N        elements per mesh (default 1000000 with a GPU, 20000 without one or with\n"
        "                      --cpu-only)\n"
        "  --shapes LIST       of tri,quad,tet,hex (default all)\n"
        "  --rows LIST         of kernels,operator,cg (default all): the seed's kernel table, the operator\n"
        "                      rows of the physics models, the CG iteration rows\n"
        "  --orders LIST       kernel table: polynomial orders (default 1,2,3)\n"
        "  --op-orders LIST    operator rows: orders (default 1,2,3; hexahedra 1..6)\n"
        "  --physics LIST      operator rows: of heat,elasticity,neo-hookean (default all)\n"
        "  --no-dirichlet      operator rows without the Dirichlet face x = 0\n"
        "  --cg-problem FILE   problem of the CG rows (default bench/problems/cantilever-tet.xml)\n"
        "  --cg-size H         its mesh size in m (default: the file's)\n"
        "  --cg-iterations N   CG iterations per timed solve (default 50 with a GPU, 10 without)\n"
        "  --cg-pc jacobi|multigrid   the CG rows' preconditioner (default jacobi)\n"
        "  --repeat R          timed GPU runs per kernel, after 3 warm-ups (default 10)\n"
        "  --cpu-repeat R      timed CPU runs per kernel, after 1 warm-up (default 3)\n"
        "  --threads T         CPU threads of the threaded rows (default: all)\n"
        "  --cpu-only          CPU rows only\n"
        "  --gpu-only          GPU rows only (exit 77 when there is no GPU)\n"
        "  --tables auto|shared|global   where the GPU kernels keep shape tables (default auto)\n"
        "  --path auto|full|tensor       quads and hexes: full tables or sum factorisation (default auto)\n"
        "  --markdown FILE     also write the tables to FILE\n"
        "  --meshes DIR        folder of bench_<shape>.geo (default: the source tree's bench/meshes)\n"
        "  --mesh-cache DIR    keep the meshes made from .geo files (these and the CG problem's) in DIR and\n"
        "                      reuse them (default: .femto-cache beside each .geo, as femto-app does;\n"
        "                      docs/meshes.md)\n"
        "  --no-mesh-cache     mesh every time\n");
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

/* Bit i set for names[i] in the comma-separated list s; -1 for a name not in names. */
static int parse_names(const char *s, const char *const *names, int n) {
    int bits = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < n && strcmp(tok, names[i])) i++;
        if (i == n) return -1;
        bits |= 1 << i;
    }
    return bits;
}

/* An option that takes a value; 0 when a is not one of them. */
static int value_option(Options *o, const char *a, const char *val) {
    static const char *rows[] = {"kernels", "operator", "cg"},
                      *phys[] = {"heat", "elasticity", "neo-hookean"};
    if (!strcmp(a, "--elements"))
        o->elements = atof(val) >= 1 ? (int64_t)atof(val) : 0; /* 0: not a size */
    else if (!strcmp(a, "--shapes"))
        snprintf(o->shapes, sizeof o->shapes, "%s", val);
    else if (!strcmp(a, "--rows"))
        o->rows = (unsigned)parse_names(val, rows, 3);
    else if (!strcmp(a, "--orders"))
        o->norders = parse_list(val, o->orders, BENCH_MAX_ORDERS);
    else if (!strcmp(a, "--op-orders"))
        o->nop_orders = parse_list(val, o->op_orders, BENCH_MAX_ORDERS);
    else if (!strcmp(a, "--physics"))
        o->physics = (unsigned)parse_names(val, phys, 3);
    else if (!strcmp(a, "--cg-problem"))
        o->cg_problem = val;
    else if (!strcmp(a, "--cg-size"))
        o->cg_size = atof(val);
    else if (!strcmp(a, "--cg-iterations"))
        o->cg_iterations = atoi(val) >= 1 ? atoi(val) : 0; /* 0: not a count */
    else if (!strcmp(a, "--cg-pc"))
        o->cg_pc = val;
    else if (!strcmp(a, "--repeat"))
        o->repeat = atoi(val);
    else if (!strcmp(a, "--cpu-repeat"))
        o->cpu_repeat = atoi(val);
    else if (!strcmp(a, "--threads"))
        o->threads = atoi(val);
    else if (!strcmp(a, "--markdown"))
        o->markdown = val;
    else if (!strcmp(a, "--meshes"))
        o->meshes = val;
    else if (!strcmp(a, "--mesh-cache"))
        o->mesh_cache = val;
    else if (!strcmp(a, "--tables"))
        o->tables = val;
    else if (!strcmp(a, "--path"))
        o->path = val;
    else
        return 0;
    return 1;
}

/* 0, or the exit status of a usage error (with its message). */
static int parse_options(int argc, char **argv, Options *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (val && value_option(o, a, val))
            i++;
        else if (!strcmp(a, "--cpu-only"))
            o->gpu = 0;
        else if (!strcmp(a, "--gpu-only"))
            o->cpu = 0, o->gpu_required = 1;
        else if (!strcmp(a, "--no-dirichlet"))
            o->dirichlet = 0;
        else if (!strcmp(a, "--no-mesh-cache"))
            o->mesh_cache = NULL;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(), -1;
        else
            return fprintf(stderr, "femto-bench: unknown or incomplete option '%s'\n", a), usage(), 2;
    }
    if (o->elements == 0 || o->elements < -1 || o->repeat < 1 || o->cpu_repeat < 1 || o->norders < 1 ||
        (!o->cpu && !o->gpu) || o->cg_iterations == 0 || o->rows == 0 || o->physics == 0)
        return fprintf(stderr, "femto-bench: nothing to do with these options\n"), 2;
    if ((int)o->rows < 0 || (int)o->physics < 0)
        return fprintf(
                   stderr,
                   "femto-bench: --rows takes kernels,operator,cg; --physics heat,elasticity,neo-hookean\n"),
               2;
    if (strcmp(o->cg_pc, "jacobi") && strcmp(o->cg_pc, "multigrid"))
        return fprintf(stderr, "femto-bench: --cg-pc takes jacobi or multigrid\n"), 2;
    for (int k = 0; k < o->norders; k++)
        if (o->orders[k] < 1 || o->orders[k] > 3)
            return fprintf(stderr, "femto-bench: orders are 1, 2 or 3 (simplices go to 3)\n"), 2;
    for (int k = 0; k < o->nop_orders; k++)
        if (o->op_orders[k] < 1 || o->op_orders[k] > 8)
            return fprintf(stderr, "femto-bench: operator orders are 1 to 8 (simplices go to 3)\n"), 2;
    return 0;
}

/* The devices, the reference copies and their descriptions. */
static void setup_devices(const Options *o, Bench *B) {
    memset(B, 0, sizeof *B);
    B->threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    if (cpu_device_create(&B->cpu1, 1, ASSEMBLE_ATOMIC) ||
        cpu_device_create(&B->cpun, B->threads, ASSEMBLE_ATOMIC) ||
        cpu_device_create(&B->cpun_gather, B->threads, ASSEMBLE_GATHER))
        bench_die("creating the CPU devices");
    snprintf(B->gpu_name, sizeof B->gpu_name, "none");
#ifdef FEMTO_HAVE_CUDA
    if (o->gpu) {
        device_register(DEV_CUDA, gpu_device_create);
#ifdef FEMTO_HAVE_CUDSS
        coarse_register_cudss(gpu_cudss_create);
#endif
        if (device_create(&B->gpa, DEV_CUDA, 0, ASSEMBLE_ATOMIC) == 0 &&
            device_create(&B->gpg, DEV_CUDA, 0, ASSEMBLE_GATHER) == 0)
            B->have_gpu = 1;
        else
            snprintf(B->gpu_name, sizeof B->gpu_name, "none (%s)", fem_last_error());
    }
    if (B->have_gpu) {
        GpuTuning *tu = &B->tuning;
        tu->tables = !strcmp(o->tables, "shared")   ? GPU_PLACE_SHARED
                     : !strcmp(o->tables, "global") ? GPU_PLACE_GLOBAL
                                                    : GPU_PLACE_AUTO;
        tu->path = !strcmp(o->path, "full")     ? GPU_PATH_FULL
                   : !strcmp(o->path, "tensor") ? GPU_PATH_TENSOR
                                                : GPU_PATH_AUTO;
        if (gpu_device_tune(&B->gpa, tu) || gpu_device_tune(&B->gpg, tu)) bench_die("tuning");
        if (gpu_timer_create(&B->timer)) bench_die("creating a GPU timer");
        double us;
        if (gpu_copy_bandwidth(&B->gpa, (size_t)1 << 30, 20, &us, &B->copy_gbps))
            bench_die("measuring copy bandwidth");
        snprintf(B->gpu_name, sizeof B->gpu_name,
                 "%s; device-to-device copy of 1 GiB: %.0f GB/s (read + write)", B->gpa.description,
                 B->copy_gbps);
    }
#else
    if (o->gpu) snprintf(B->gpu_name, sizeof B->gpu_name, "none (femto was built without CUDA)");
#endif
    if (o->cpu && (o->rows & (ROWS_OPERATOR | ROWS_CG))) {
        B->cpu_copy_gbps[0] = bench_host_copy_gbps(1, (size_t)256 << 20);
        B->cpu_copy_gbps[1] = bench_host_copy_gbps(B->threads, (size_t)256 << 20);
    }
    snprintf(B->cpu_name, sizeof B->cpu_name, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(B->cpu_name, sizeof B->cpu_name, "%s", strchr(line, ':') + 2);
            B->cpu_name[strcspn(B->cpu_name, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
}

static void destroy_devices(Bench *B) {
#ifdef FEMTO_HAVE_CUDA
    if (B->have_gpu) {
        gpu_timer_destroy(B->timer);
        device_destroy(&B->gpa);
        device_destroy(&B->gpg);
    }
#endif
    device_destroy(&B->cpu1);
    device_destroy(&B->cpun);
    device_destroy(&B->cpun_gather);
}

/* The date, and the commit the build was configured at; the source tree's HEAD is named too where it differs
 * (a copy of the tree on another machine may carry an older .git). */
static void print_header(const Options *o, Bench *B, int default_size) {
    char head[64] = "";
    time_t tt = time(NULL);
    strftime(B->date, sizeof B->date, "%Y-%m-%d %H:%M %Z", localtime(&tt));
    FILE *git = popen("git -C '" FEMTO_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", "r");
    if (git) {
        if (!fgets(head, sizeof head, git)) head[0] = 0;
        head[strcspn(head, "\n")] = 0;
        if (pclose(git) != 0) head[0] = 0;
    }
    if (head[0] && strcmp(head, FEMTO_CONFIGURED_COMMIT))
        snprintf(B->commit, sizeof B->commit, "%s (configured; the source tree's HEAD is %s)",
                 FEMTO_CONFIGURED_COMMIT, head);
    else
        snprintf(B->commit, sizeof B->commit, "%s", FEMTO_CONFIGURED_COMMIT);
    bench_out("# femto-bench\n\n");
    bench_out("- date: %s; femto %s, git %s\n", B->date, FEMTO_VERSION, B->commit);
    bench_out("- GPU: %s\n", B->gpu_name);
    bench_out("- CPU: %s; %d threads for the threaded rows (OpenMP)\n", B->cpu_name, B->threads);
    if (o->rows & (ROWS_KERNELS | ROWS_OPERATOR))
        bench_out("- meshes of about %lld elements%s\n", (long long)o->elements,
                  !default_size ? " (--elements)"
                  : B->have_gpu
                      ? " (the default with a GPU)"
                      : " (the default without a GPU: a quick run; bandwidth figures want 100000 or more)");
    if (o->rows & ROWS_KERNELS)
        bench_out(
            "- kernel tables: gradient interpolation of a scalar field (p-th order Lagrange, femto's default "
            "quadrature of degree 2p), and integration against test-function gradients with assembly into "
            "the L-vector; median of %d GPU runs (CUDA events) after 3 warm-ups, %d CPU runs (wall clock) "
            "after 1\n",
            o->repeat, o->cpu_repeat);
}

static void kernel_rows(Bench *B, const Options *o, const char *shape, const Mesh *m, double mesh_s,
                        int cached) {
    Case cases[BENCH_MAX_ORDERS];
    for (int k = 0; k < o->norders; k++) {
        fprintf(stderr, "femto-bench: %s p = %d ...\n", bench_shape_title(shape), o->orders[k]);
        run_case(B, o, m, bench_shape(shape), o->orders[k], &cases[k]);
    }
    print_shape(o, B, shape, m, mesh_s, cached, cases);
}

int main(int argc, char **argv) {
    Options o = {.elements = -1, /* the default: BENCH_ELEMENTS_GPU or _CPU */
                 .shapes = "tri,quad,tet,hex",
                 .orders = {1, 2, 3},
                 .norders = 3,
                 .rows = ROWS_KERNELS | ROWS_OPERATOR | ROWS_CG,
                 .physics = 7,
                 .dirichlet = 1,
                 .cg_problem = FEMTO_SOURCE_DIR "/bench/problems/cantilever-tet.xml",
                 .cg_iterations = -1, /* the default: BENCH_CG_ITERATIONS_GPU or _CPU */
                 .cg_pc = "jacobi",
                 .repeat = 10,
                 .cpu_repeat = 3,
                 .cpu = 1,
                 .gpu = 1,
                 .meshes = FEMTO_BENCH_MESHES,
                 .mesh_cache = "",
                 .tables = "auto",
                 .path = "auto"};
    int status = parse_options(argc, argv, &o);
    if (status) return status < 0 ? 0 : status;
    char shapes[64];
    snprintf(shapes, sizeof shapes, "%s", o.shapes);
    for (char *save = NULL, *tok = strtok_r(shapes, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, "tri") && strcmp(tok, "quad") && strcmp(tok, "tet") && strcmp(tok, "hex"))
            return fprintf(stderr, "femto-bench: unknown shape '%s' (tri, quad, tet, hex)\n", tok), 2;

    Bench B;
    setup_devices(&o, &B);
    if (o.gpu_required && !B.have_gpu) {
        printf("skipped: no GPU: %s\n", B.gpu_name);
        return BENCH_EXIT_SKIP;
    }
    if (o.markdown && bench_markdown(o.markdown)) {
        fprintf(stderr, "femto-bench: cannot write '%s'\n", o.markdown);
        return 1;
    }
    int default_size = o.elements < 0;
    if (default_size) o.elements = B.have_gpu ? BENCH_ELEMENTS_GPU : BENCH_ELEMENTS_CPU;
    if (o.cg_iterations < 0) o.cg_iterations = B.have_gpu ? BENCH_CG_ITERATIONS_GPU : BENCH_CG_ITERATIONS_CPU;
    print_header(&o, &B, default_size);

    OpTable *ops = op_table_create();
    snprintf(shapes, sizeof shapes, "%s", o.shapes);
    for (char *save = NULL, *tok = strtok_r(shapes, ",", &save);
         tok && (o.rows & (ROWS_KERNELS | ROWS_OPERATOR)); tok = strtok_r(NULL, ",", &save)) {
        Mesh m;
        double mesh_s;
        int cached;
        fprintf(stderr, "femto-bench: meshing %s ...\n", bench_shape_title(tok));
        bench_make_mesh(&o, tok, o.elements, &m, &mesh_s, &cached);
        fprintf(stderr, "femto-bench: %lld %s in %.1f s%s\n", (long long)bench_cells(&m, bench_shape(tok)),
                bench_shape_title(tok), mesh_s, cached ? " (femto's mesh cache)" : "");
        if (o.rows & ROWS_KERNELS) kernel_rows(&B, &o, tok, &m, mesh_s, cached);
        if (o.rows & ROWS_OPERATOR) bench_operator_shape(&B, &o, tok, &m, ops);
        mesh_destroy(&m);
    }
    if (o.rows & ROWS_KERNELS)
        bench_out(
            "Minimal bytes: interpolation reads the L-vector once (8 nnodes) and the dof map (4 nelem ndof) "
            "and "
            "writes the q-point gradients (8 nelem nq dim); integration with atomics reads the q-point "
            "fluxes "
            "(8 nelem nq dim) and the dof map and reads and writes the L-vector once (16 nnodes); the gather "
            "element kernel reads the fluxes and writes the E-vector (8 nelem ndof); the gather-assembly "
            "kernel reads the E-vector, the slot list (4 nelem ndof) and offsets (8 nnodes) and reads and "
            "writes the L-vector. GB/s = minimal bytes / time; %% of copy = that against the "
            "device-to-device copy above.\n\n");
    if (o.rows & ROWS_CG) bench_cg(&B, &o, ops);
    if (o.rows & (ROWS_OPERATOR | ROWS_CG)) op_table_print(&B, &o, ops);
    op_table_destroy(ops);
    if (B.mismatches) bench_out("\n**%d case(s) where the results disagreed: see stderr.**\n", B.mismatches);
    bench_markdown_close();
    destroy_devices(&B);
    return B.mismatches ? 1 : 0;
}
