/* The CUDA element kernels against the CPU device, on real spaces of a test mesh: every cell and facet block,
 * every order (simplices 1..3, quads and hexes 1..8), 1, 2 (2D meshes) and 3 components, straight cells and
 * curved ones (order-2 geometry, p <= 3), on random data drawn afresh each run (the seed is printed;
 * FEMTO_TEST_SEED=N repeats a run). GPU outputs are poisoned with NaN before each run, so an entry a kernel
 * forgets to write shows as a failure. Each case runs under several launch tunings that force every code
 * path: the automatic choice; tables and q-point data in global memory with one element per block; 3
 * elements per block (with 7 threads per element: partial last blocks and strided loops everywhere); the
 * run-time-size kernels alone; sum factorisation for every quad and hex. Where femto has a specialised kernel
 * (gpu/kernels_special.cu) the launch must have been one under the tunings that leave the choice to femto,
 * and never under the others. * usage: test_gpu_kernels FAMILY MESH.geo [MAXORDER] interp: interpolate
 * (values + gradients, values only, gradients only) integ:  integrate with atomic and with gather assembly
 * (sq + fq, sq only, fq only); the gather E-vector against the CPU's; gather assembly bitwise identical over
 * two runs diag:   diag_add for every component and slot, then assemble (bitwise identical over two runs)
 * Errors are ||gpu - cpu|| / ||cpu|| and must be <= 1e-12. Exit 77 when there is no GPU.
 * FEMTO_TEST_CPU_AS_GPU=1 runs the same checks with a 2-thread CPU device in the GPU's place: a check of this
 * program itself on machines without a GPU (it proves nothing about the CUDA kernels). */
#include "common/femto_test.h"
#include "fem/error.h"
#include "io/mesh_read.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOL 1e-12

/* ---------------------------------------------------------------- random numbers (splitmix64) */

static uint64_t rng_state;
static double rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* [-1, 1) */
}
static double *random_array(int64_t n) {
    double *a = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!a) fprintf(stderr, "out of host memory\n"), exit(1);
    for (int64_t i = 0; i < n; i++) a[i] = rnd();
    return a;
}
static double *host_array(int64_t n) {
    double *a = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!a) fprintf(stderr, "out of host memory\n"), exit(1);
    return a;
}

/* ---------------------------------------------------------------- device arrays */

static double *dev_copy(Device *d, const double *h, int64_t n) {
    void *p;
    CHECK_OK(device_alloc_copy(d, &p, h, sizeof(double) * (size_t)n));
    return p;
}
static double *dev_poisoned(Device *d, int64_t n) {
    double *h = host_array(n);
    for (int64_t i = 0; i < n; i++) h[i] = NAN;
    double *p = dev_copy(d, h, n);
    free(h);
    return p;
}
static void dev_get(Device *d, double *h, const double *p, int64_t n) {
    CHECK_OK(d->ops.download(d, h, p, sizeof(double) * (size_t)n));
}

/* ---------------------------------------------------------------- comparison and the table */

static int nchecks, nfailed;
static double worst;

/* ||g - c|| / ||c|| (absolute when c = 0); non-finite GPU entries count as an infinite error. */
static double rel_err(const double *g, const double *c, int64_t n, int64_t *bad) {
    double num = 0.0, den = 0.0;
    *bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(g[i])) {
            (*bad)++;
            continue;
        }
        num += (g[i] - c[i]) * (g[i] - c[i]);
        den += c[i] * c[i];
    }
    if (*bad) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static char case_name[160];

static void report(const char *what, const char *launch, const double *g, const double *c, int64_t n) {
    int64_t bad;
    double e = rel_err(g, c, n, &bad);
    int ok = e <= TOL;
    nchecks++;
    if (!ok) nfailed++;
    if (ok && e > worst) worst = e;
    printf("%-44s %-34s %9.2e %s", case_name, what, e, ok ? "ok" : "FAIL");
    if (bad) printf(" (%lld of %lld entries not written or not finite)", (long long)bad, (long long)n);
    printf("\n");
    if (!ok) {
        CHECK(ok, "%s %s: error %.3e (tolerance %.0e); launch: %s", case_name, what, e, TOL, launch);
        int64_t shown = 0;
        for (int64_t i = 0; i < n && shown < 5; i++)
            if (!(fabs(g[i] - c[i]) <= 1e-10 * (1 + fabs(c[i])))) {
                fprintf(stderr, "    entry %lld: gpu %.17g cpu %.17g\n", (long long)i, g[i], c[i]);
                shown++;
            }
    }
}

static void report_bitwise(const char *what, const double *a, const double *b, int64_t n) {
    int same = memcmp(a, b, sizeof(double) * (size_t)n) == 0;
    nchecks++;
    if (!same) nfailed++;
    printf("%-44s %-34s %9s %s\n", case_name, what, "bitwise", same ? "ok" : "FAIL");
    CHECK(same, "%s %s: two runs of gather assembly differ", case_name, what);
}

/* ---------------------------------------------------------------- tunings */

#ifdef FEMTO_HAVE_CUDA
/* auto, global,1/blk, 3/blk and tensor leave the choice of kernel to femto: the specialised kernels
 * (gpu/kernels_special.cu) where they serve the block (staged q-data; global q-data, one element a block;
 * partial blocks of 3 elements; quads and hexes sum factorised), else the run-time-size ones; 3/blk,7thr and
 * generic force the run-time-size ones. */
enum { NTUNINGS = 6 };
static const char *tuning_names[NTUNINGS] = {"auto",  "global,1/blk", "3/blk,7thr",
                                             "3/blk", "generic",      "tensor"};
static void tune(Device *d, int k) {
    if (d->kind != DEV_CUDA) return;
    GpuTuning t;
    memset(&t, 0, sizeof t);
    if (k == 1) t.tables = GPU_PLACE_GLOBAL, t.qdata = GPU_PLACE_GLOBAL, t.elems_per_block = 1;
    if (k == 2) t.elems_per_block = 3, t.threads_per_elem = 7;
    if (k == 3) t.elems_per_block = 3;
    if (k == 4) t.generic = 1;
    if (k == 5) t.path = GPU_PATH_TENSOR;
    CHECK_OK(gpu_device_tune(d, &t));
}
static const char *launch_of(Device *d) {
    return d->kind == DEV_CUDA ? gpu_last_launch(d) : "";
}
/* The specialised kernel tuning k's launch on v must have been: 0 none, 1 full tables, 2 sum factorised.
 * Full tables: triangles and tetrahedra of p = 1..3, quads of p <= 3 and hexes of p = 1 (unless the tuning
 * asks for sum factorisation); sum factorised: quads and hexes of p = 1..3 at Q1D = P1D; 1 or dim
 * components. FEMTO_GPU_SPECIAL=0 turns them off. */
static int expect_special(const ElemView *v, int k) {
    const char *env = getenv("FEMTO_GPU_SPECIAL");
    if ((env && !strcmp(env, "0")) || k == 2 || k == 4) return 0;
    if (v->ncomp != 1 && v->ncomp != v->dim) return 0;
    int nd = v->ndof, full = !v->tensor || (k != 5 && (int64_t)v->nq * nd <= 256);
    if (!full) return v->nq1 == v->nd1 && v->nq == nd && v->nd1 >= 2 && v->nd1 <= 4 && v->dim >= 2 ? 2 : 0;
    /* femto's own choice takes full tables for linear cells only (measured: gpu/kernels_special.cu) */
    if (k != 5 && !(nd == v->dim + 1 || (v->tensor && v->dim == 2 && nd == 4))) return 0;
    if (v->dim == 2) return nd == 3 || nd == 6 || nd == 10 || (v->tensor && (nd == 4 || nd == 9 || nd == 16));
    return v->dim == 3 && (nd == 4 || nd == 10 || nd == 20 || (v->tensor && nd == 8));
}
static void check_kernel(Device *d, const ElemView *v, int k) {
    if (d->kind != DEV_CUDA) return;
    const char *l = gpu_last_launch(d);
    int special = !strncmp(l, "special full-table", 18) ? 1 : !strncmp(l, "special tensor", 14) ? 2 : 0;
    int want = expect_special(v, k);
    static const char *kinds[3] = {"run-time-size", "specialised full-table", "specialised sum-factorised"};
    CHECK(special == want, "%s [%s]: expected the %s kernel, the launch was: %s", case_name, tuning_names[k],
          kinds[want], l);
    const char *env = getenv("FEMTO_GPU_SPECIAL");
    if (special == 1 && env && !strcmp(env, "global"))
        CHECK(strstr(l, "q-data global") != NULL, "%s: FEMTO_GPU_SPECIAL=global staged q-data: %s", case_name,
              l);
}
#else
enum { NTUNINGS = 1 };
static const char *tuning_names[NTUNINGS] = {"auto"};
static void tune(Device *d, int k) {
    (void)d, (void)k;
}
static const char *launch_of(Device *d) {
    (void)d;
    return "";
}
static void check_kernel(Device *d, const ElemView *v, int k) {
    (void)d, (void)v, (void)k;
}
#endif

/* ---------------------------------------------------------------- the three families */

typedef struct {
    Device *cpu, *cpu2, *gpa, *gpg; /* CPU serial, CPU 2 threads gather, GPU atomic, GPU gather */
} Devices;

static void check_interp(Devices *D, const Space *sp, int facet, int b) {
    TestBlock hc, hg;
    CHECK_OK(test_block_create(D->cpu, sp, facet, b, 0, &hc));
    CHECK_OK(test_block_create(D->gpa, sp, facet, b, 0, &hg));
    const ElemView *vc = &hc.view, *vg = &hg.view;
    int64_t nu = sp->ndofs, n0 = vc->nelem * vc->nq * vc->ncomp, n1 = n0 * vc->dim;
    double *u = random_array(nu), *uq_c = host_array(n0), *duq_c = host_array(n1);
    double *uq_g = host_array(n0), *duq_g = host_array(n1);
    CHECK_OK(D->cpu->ops.interpolate(D->cpu, vc, u, uq_c, duq_c));
    double *du = dev_copy(D->gpa, u, nu);
    for (int k = 0; k < NTUNINGS; k++) {
        tune(D->gpa, k);
        for (int variant = 0; variant < 3; variant++) { /* both, values, gradients */
            int want0 = variant != 2, want1 = variant != 1;
            double *d0 = dev_poisoned(D->gpa, n0), *d1 = dev_poisoned(D->gpa, n1);
            CHECK_OK(D->gpa->ops.interpolate(D->gpa, vg, du, want0 ? d0 : NULL, want1 ? d1 : NULL));
            check_kernel(D->gpa, vg, k);
            dev_get(D->gpa, uq_g, d0, n0);
            dev_get(D->gpa, duq_g, d1, n1);
            char what[96];
            static const char *vn[3] = {"values+grads", "values only", "grads only"};
            if (want0) {
                snprintf(what, sizeof what, "interp %s: values [%s]", vn[variant], tuning_names[k]);
                report(what, launch_of(D->gpa), uq_g, uq_c, n0);
            }
            if (want1) {
                snprintf(what, sizeof what, "interp %s: grads [%s]", vn[variant], tuning_names[k]);
                report(what, launch_of(D->gpa), duq_g, duq_c, n1);
            }
            /* the array that was not asked for stays untouched (NaN) */
            int64_t untouched = 0;
            const double *other = want0 ? (want1 ? NULL : duq_g) : uq_g;
            int64_t no = want0 ? n1 : n0;
            for (int64_t i = 0; other && i < no; i++) untouched += isnan(other[i]) ? 1 : 0;
            if (other) CHECK(untouched == no, "%s: interp wrote into an array it was not given", case_name);
            device_free(D->gpa, d0);
            device_free(D->gpa, d1);
        }
    }
    device_free(D->gpa, du);
    free(u), free(uq_c), free(duq_c), free(uq_g), free(duq_g);
    test_block_destroy(&hc);
    test_block_destroy(&hg);
}

static void check_integ(Devices *D, const Space *sp, int facet, int b) {
    TestBlock hc, hga, hgg;
    CHECK_OK(test_block_create(D->cpu, sp, facet, b, 0, &hc));
    CHECK_OK(test_block_create(D->gpa, sp, facet, b, 0, &hga));
    CHECK_OK(test_block_create(D->gpg, sp, facet, b, 0, &hgg));
    const ElemView *vc = &hc.view;
    int64_t nr = sp->ndofs, n0 = vc->nelem * vc->nq * vc->ncomp, n1 = n0 * vc->dim;
    int64_t ne = vc->nelem * vc->ncomp * vc->ndof;
    double *sq = random_array(n0), *fq = random_array(n1), *r0 = random_array(nr);
    double *r_c = host_array(nr), *r_g = host_array(nr), *r_g2 = host_array(nr);
    double *ev_c = host_array(ne), *ev_g = host_array(ne);
    double *dsq_a = dev_copy(D->gpa, sq, n0), *dfq_a = dev_copy(D->gpa, fq, n1);
    double *dsq_g = dev_copy(D->gpg, sq, n0), *dfq_g = dev_copy(D->gpg, fq, n1);
    static const char *vn[3] = {"s+f", "s only", "f only"};
    for (int variant = 0; variant < 3; variant++) {
        int use0 = variant != 2, use1 = variant != 1;
        /* references: serial CPU (r), 2-thread CPU gather (its E-vector) */
        memcpy(r_c, r0, sizeof(double) * (size_t)nr);
        CHECK_OK(D->cpu->ops.integrate(D->cpu, vc, use0 ? sq : NULL, use1 ? fq : NULL, r_c, NULL));
        double *r_c2 = host_array(nr);
        memcpy(r_c2, r0, sizeof(double) * (size_t)nr);
        CHECK_OK(D->cpu2->ops.integrate(D->cpu2, vc, use0 ? sq : NULL, use1 ? fq : NULL, r_c2, ev_c));
        free(r_c2);
        for (int k = 0; k < NTUNINGS; k++) {
            char what[96];
            /* atomics */
            tune(D->gpa, k);
            double *dr = dev_copy(D->gpa, r0, nr);
            CHECK_OK(
                D->gpa->ops.integrate(D->gpa, &hga.view, use0 ? dsq_a : NULL, use1 ? dfq_a : NULL, dr, NULL));
            check_kernel(D->gpa, &hga.view, k);
            dev_get(D->gpa, r_g, dr, nr);
            snprintf(what, sizeof what, "integ %s atomic [%s]", vn[variant], tuning_names[k]);
            report(what, launch_of(D->gpa), r_g, r_c, nr);
            device_free(D->gpa, dr);
            /* gather, twice */
            tune(D->gpg, k);
            double *dev_ = dev_poisoned(D->gpg, ne);
            double *dr1 = dev_copy(D->gpg, r0, nr), *dr2 = dev_copy(D->gpg, r0, nr);
            CHECK_OK(D->gpg->ops.integrate(D->gpg, &hgg.view, use0 ? dsq_g : NULL, use1 ? dfq_g : NULL, dr1,
                                           dev_));
            check_kernel(D->gpg, &hgg.view, k);
            dev_get(D->gpg, ev_g, dev_, ne);
            snprintf(what, sizeof what, "integ %s gather: evec [%s]", vn[variant], tuning_names[k]);
            report(what, launch_of(D->gpg), ev_g, ev_c, ne);
            CHECK_OK(D->gpg->ops.integrate(D->gpg, &hgg.view, use0 ? dsq_g : NULL, use1 ? dfq_g : NULL, dr2,
                                           dev_));
            dev_get(D->gpg, r_g, dr1, nr);
            dev_get(D->gpg, r_g2, dr2, nr);
            snprintf(what, sizeof what, "integ %s gather: r [%s]", vn[variant], tuning_names[k]);
            report(what, launch_of(D->gpg), r_g, r_c, nr);
            snprintf(what, sizeof what, "integ %s gather: repeat [%s]", vn[variant], tuning_names[k]);
            report_bitwise(what, r_g, r_g2, nr);
#ifdef FEMTO_HAVE_CUDA
            if (D->gpg->kind == DEV_CUDA) {
                /* the element half alone (the benchmark's first gather number) writes the same E-vector */
                CHECK_OK(D->gpg->ops.fill(D->gpg, ne, 1, &(double){NAN}, dev_));
                CHECK_OK(
                    gpu_integrate_evec(D->gpg, &hgg.view, use0 ? dsq_g : NULL, use1 ? dfq_g : NULL, dev_));
                double *ev_g2 = host_array(ne);
                dev_get(D->gpg, ev_g2, dev_, ne);
                snprintf(what, sizeof what, "integ %s evec only [%s]", vn[variant], tuning_names[k]);
                report_bitwise(what, ev_g2, ev_g, ne);
                free(ev_g2);
            }
#endif
            device_free(D->gpg, dev_);
            device_free(D->gpg, dr1);
            device_free(D->gpg, dr2);
        }
    }
    device_free(D->gpa, dsq_a), device_free(D->gpa, dfq_a);
    device_free(D->gpg, dsq_g), device_free(D->gpg, dfq_g);
    free(sq), free(fq), free(r0), free(r_c), free(r_g), free(r_g2), free(ev_c), free(ev_g);
    test_block_destroy(&hc);
    test_block_destroy(&hga);
    test_block_destroy(&hgg);
}

static void check_diag(Devices *D, const Space *sp, int facet, int b) {
    TestBlock hc, hg;
    CHECK_OK(test_block_create(D->cpu, sp, facet, b, 0, &hc));
    CHECK_OK(test_block_create(D->gpg, sp, facet, b, 0, &hg));
    const ElemView *vc = &hc.view;
    int nc = vc->ncomp, dim = vc->dim;
    int64_t nr = sp->ndofs, n0 = vc->nelem * vc->nq * nc, n1 = n0 * dim, ne = vc->nelem * nc * vc->ndof;
    double *sq = random_array(n0), *fq = random_array(n1), *ev0 = random_array(ne), *r0 = random_array(nr);
    double *ev_c = host_array(ne), *ev_g = host_array(ne), *r_c = host_array(nr), *r_g = host_array(nr),
           *r_g2 = host_array(nr);
    double *dsq = dev_copy(D->gpg, sq, n0), *dfq = dev_copy(D->gpg, fq, n1);
    /* reference: every (component, slot), cycling through s+f, s only, f only */
    memcpy(ev_c, ev0, sizeof(double) * (size_t)ne);
    for (int c = 0; c < nc; c++)
        for (int s = 0; s <= dim; s++) {
            int variant = (c * (dim + 1) + s) % 3, use0 = variant != 2, use1 = variant != 1;
            CHECK_OK(D->cpu->ops.diag_add(D->cpu, vc, c, s, use0 ? sq : NULL, use1 ? fq : NULL, ev_c));
        }
    memcpy(r_c, r0, sizeof(double) * (size_t)nr);
    CHECK_OK(D->cpu->ops.assemble(D->cpu, vc, ev_c, r_c));
    for (int k = 0; k < NTUNINGS; k++) {
        char what[96];
        tune(D->gpg, k);
        double *dev_ = dev_copy(D->gpg, ev0, ne);
        for (int c = 0; c < nc; c++)
            for (int s = 0; s <= dim; s++) {
                int variant = (c * (dim + 1) + s) % 3, use0 = variant != 2, use1 = variant != 1;
                CHECK_OK(
                    D->gpg->ops.diag_add(D->gpg, &hg.view, c, s, use0 ? dsq : NULL, use1 ? dfq : NULL, dev_));
            }
        dev_get(D->gpg, ev_g, dev_, ne);
        snprintf(what, sizeof what, "diag_add, all c and slots [%s]", tuning_names[k]);
        report(what, launch_of(D->gpg), ev_g, ev_c, ne);
        double *dr1 = dev_copy(D->gpg, r0, nr), *dr2 = dev_copy(D->gpg, r0, nr);
        CHECK_OK(D->gpg->ops.assemble(D->gpg, &hg.view, dev_, dr1));
        CHECK_OK(D->gpg->ops.assemble(D->gpg, &hg.view, dev_, dr2));
        dev_get(D->gpg, r_g, dr1, nr);
        dev_get(D->gpg, r_g2, dr2, nr);
        snprintf(what, sizeof what, "assemble [%s]", tuning_names[k]);
        report(what, "gather assembly", r_g, r_c, nr);
        snprintf(what, sizeof what, "assemble repeat [%s]", tuning_names[k]);
        report_bitwise(what, r_g, r_g2, nr);
        device_free(D->gpg, dev_), device_free(D->gpg, dr1), device_free(D->gpg, dr2);
    }
    device_free(D->gpg, dsq), device_free(D->gpg, dfq);
    free(sq), free(fq), free(ev0), free(r0), free(ev_c), free(ev_g), free(r_c), free(r_g), free(r_g2);
    test_block_destroy(&hc);
    test_block_destroy(&hg);
}

int main(int argc, char **argv) {
    if (argc < 3) return fprintf(stderr, "usage: %s interp|integ|diag MESH.geo [MAXORDER]\n", argv[0]), 2;
    const char *family = argv[1], *mesh_name = argv[2];
    int maxorder = argc > 3 ? atoi(argv[3]) : 8;
    if (strcmp(family, "interp") && strcmp(family, "integ") && strcmp(family, "diag"))
        return fprintf(stderr, "unknown family '%s'\n", family), 2;
    Device cpu, cpu2, gpa, gpg;
    if (getenv("FEMTO_TEST_CPU_AS_GPU")) {
        CHECK_OK(cpu_device_create(&gpa, 2, ASSEMBLE_ATOMIC));
        CHECK_OK(cpu_device_create(&gpg, 2, ASSEMBLE_GATHER));
    } else {
        if (test_device(&gpa, DEV_CUDA, 0, ASSEMBLE_ATOMIC)) return TEST_SKIP;
        if (test_device(&gpg, DEV_CUDA, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    }
    CHECK_OK(cpu_device_create(&cpu, 1, ASSEMBLE_GATHER));
    CHECK_OK(cpu_device_create(&cpu2, 2, ASSEMBLE_GATHER));
    Devices D = {&cpu, &cpu2, &gpa, &gpg};
    const char *env = getenv("FEMTO_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    rng_state = seed;
    printf("%s on %s, %s; random seed %llu (FEMTO_TEST_SEED=%llu repeats it)\n", family, mesh_name,
           gpa.description, (unsigned long long)seed, (unsigned long long)seed);

    /* the coarse mesh (large elements, few of them) for high orders, the refined one (many blocks per launch,
     * partial last blocks) for low orders, and curved cells (order-2 geometry: the simplices' longer default
     * rules) for the orders of the specialised kernels; 1, 2 (2D meshes) and 3 components */
    static const struct {
        int refine, gorder, plo, phi;
    } passes[] = {{0, 1, 3, 99}, {1, 1, 1, 2}, {0, 2, 1, 3}};
    for (size_t ps = 0; ps < sizeof passes / sizeof passes[0]; ps++) {
        Mesh m;
        MeshReadOptions mo = {.order = passes[ps].gorder, .refine = passes[ps].refine};
        CHECK_OK(mesh_read(test_mesh(mesh_name), &mo, &m));
        Shape cell = m.cells[0].shape;
        int pmax = element_max_order(cell);
        if (pmax > maxorder) pmax = maxorder;
        int plo = passes[ps].plo, phi = passes[ps].phi < pmax ? passes[ps].phi : pmax;
        for (int p = plo; p <= phi; p++)
            for (int nc = 1; nc <= 3; nc++) {
                if (nc == 2 && shape_dim(cell) != 2) continue;
                Space sp;
                CHECK_OK(space_create(&m, p, nc, &sp));
                for (int facet = 0; facet <= 1; facet++) {
                    int nblocks = facet ? sp.nfacet_blocks : sp.ncell_blocks;
                    for (int b = 0; b < nblocks; b++) {
                        const SpaceBlock *sb = facet ? &sp.facets[b] : &sp.cells[b];
                        if (sb->count == 0) continue;
                        snprintf(case_name, sizeof case_name, "%s %s%d p=%d nc=%d%s (%lld el)",
                                 shape_name(sb->shape), facet ? "facets" : "cells", b, p, nc,
                                 passes[ps].gorder > 1 ? " curved" : "", (long long)sb->count);
                        if (!strcmp(family, "interp")) check_interp(&D, &sp, facet, b);
                        if (!strcmp(family, "integ")) check_integ(&D, &sp, facet, b);
                        if (!strcmp(family, "diag")) check_diag(&D, &sp, facet, b);
                    }
                }
                space_destroy(&sp);
            }
        mesh_destroy(&m);
    }
    printf("%d checks, %d failed; largest error of the passing ones %.2e (tolerance %.0e)\n", nchecks,
           nfailed, worst, TOL);
    device_destroy(&gpa);
    device_destroy(&gpg);
    device_destroy(&cpu);
    device_destroy(&cpu2);
    return test_result("test_gpu_kernels");
}
