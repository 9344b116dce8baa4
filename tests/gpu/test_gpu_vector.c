/* The CUDA device's memory and vector operations against the CPU device, on random data drawn afresh each run
 * (FEMTO_TEST_SEED=N repeats a run), for lengths 0, 1, 257, 100003 and 3000017 (more than one pass of every
 * grid-stride loop). Outputs are poisoned with NaN first. Also: the dot product is bitwise reproducible, an
 * impossible allocation fails with the out-of-memory sentence and leaves the device usable, and the device
 * describes itself. Exit 77 when there is no GPU. */
#include "common/femto_test.h"
#include "fem/error.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOL 1e-12

static uint64_t rng_state;
static double rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static double *random_array(int64_t n, double lo_abs) {
    double *a = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!a) fprintf(stderr, "out of host memory\n"), exit(1);
    for (int64_t i = 0; i < n; i++) {
        a[i] = rnd();
        if (lo_abs > 0) a[i] = copysign(lo_abs + fabs(a[i]), a[i]); /* away from 0, for recip */
    }
    return a;
}

static Device cpu, gpu;

static double *up(const double *h, int64_t n) {
    void *p;
    CHECK_OK(device_alloc_copy(&gpu, &p, h, sizeof(double) * (size_t)n));
    return p;
}
static double *nan_dev(int64_t n) {
    double *h = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) h[i] = NAN;
    double *p = up(h, n);
    free(h);
    return p;
}
static double *down(const double *p, int64_t n) {
    double *h = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    CHECK_OK(gpu.ops.download(&gpu, h, p, sizeof(double) * (size_t)n));
    return h;
}

static void compare(const char *what, int64_t n, const double *g, const double *c) {
    double num = 0, den = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(g[i]) && isfinite(c[i])) bad++;
        num += (g[i] - c[i]) * (g[i] - c[i]);
        den += c[i] * c[i];
    }
    double e = bad ? INFINITY : den > 0 ? sqrt(num / den) : sqrt(num);
    int ok = e <= TOL;
    printf("%-28s n=%-8lld %9.2e %s\n", what, (long long)n, e, ok ? "ok" : "FAIL");
    CHECK(ok, "%s, n = %lld: error %.3e (%lld entries not finite)", what, (long long)n, e, (long long)bad);
}

static void check_length(int64_t n) {
    size_t bytes = sizeof(double) * (size_t)n;
    double *x = random_array(n, 0), *y = random_array(n, 0), *a = random_array(n, 0.5);
    double *gx = up(x, n), *gy = up(y, n), *ga = up(a, n);

    /* upload / download / copy / zero */
    double *g = nan_dev(n);
    CHECK_OK(gpu.ops.copy(&gpu, g, gx, bytes));
    double *h = down(g, n);
    compare("upload+copy+download", n, h, x);
    free(h);
    CHECK_OK(gpu.ops.zero(&gpu, g, bytes));
    h = down(g, n);
    double *zeros = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    compare("zero", n, h, zeros);
    free(h);

    /* axpby with b != 0, and b = 0 over a NaN y (y must be ignored) */
    double *yc = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    memcpy(yc, y, bytes);
    CHECK_OK(cpu.ops.axpby(&cpu, n, 1.7, x, -0.3, yc));
    CHECK_OK(gpu.ops.copy(&gpu, g, gy, bytes));
    CHECK_OK(gpu.ops.axpby(&gpu, n, 1.7, gx, -0.3, g));
    h = down(g, n);
    compare("axpby", n, h, yc);
    free(h);
    double *gn = nan_dev(n);
    CHECK_OK(cpu.ops.axpby(&cpu, n, 2.5, x, 0.0, yc));
    CHECK_OK(gpu.ops.axpby(&gpu, n, 2.5, gx, 0.0, gn));
    h = down(gn, n);
    compare("axpby b=0 over NaN", n, h, yc);
    free(h);
    gpu.ops.free(&gpu, gn);

    /* dot: against the CPU, and bitwise the same twice */
    double dc, dg1, dg2;
    CHECK_OK(cpu.ops.dot(&cpu, n, x, y, &dc));
    CHECK_OK(gpu.ops.dot(&gpu, n, gx, gy, &dg1));
    CHECK_OK(gpu.ops.dot(&gpu, n, gx, gy, &dg2));
    double scale = 0;
    for (int64_t i = 0; i < n; i++) scale += fabs(x[i] * y[i]);
    double de = fabs(dg1 - dc) / (scale > 0 ? scale : 1);
    printf("%-28s n=%-8lld %9.2e %s\n", "dot (/ sum |x y|)", (long long)n, de, de <= TOL ? "ok" : "FAIL");
    CHECK(de <= TOL, "dot, n = %lld: gpu %.17g cpu %.17g", (long long)n, dg1, dc);
    CHECK(memcmp(&dg1, &dg2, sizeof dg1) == 0, "dot, n = %lld: two runs differ (%.17g, %.17g)", (long long)n,
          dg1, dg2);

    /* mult, recip */
    CHECK_OK(cpu.ops.mult(&cpu, n, a, x, yc));
    gpu.ops.free(&gpu, g);
    g = nan_dev(n);
    CHECK_OK(gpu.ops.mult(&gpu, n, ga, gx, g));
    h = down(g, n);
    compare("mult", n, h, yc);
    free(h);
    CHECK_OK(cpu.ops.recip(&cpu, n, a, yc));
    gpu.ops.free(&gpu, g);
    g = nan_dev(n);
    CHECK_OK(gpu.ops.recip(&gpu, n, ga, g));
    h = down(g, n);
    compare("recip", n, h, yc);
    free(h);

    /* cheb_step: d = 0.8 a .* (x - y) - 0.3 d, z += d, with d and z starting from y and x */
    {
        double *dc = malloc(bytes > 0 ? bytes : 1), *zc = malloc(bytes > 0 ? bytes : 1);
        memcpy(dc, y, bytes), memcpy(zc, x, bytes);
        CHECK_OK(cpu.ops.cheb_step(&cpu, n, 0.8, a, x, y, -0.3, dc, zc));
        double *gd = up(y, n), *gz = up(x, n);
        CHECK_OK(gpu.ops.cheb_step(&gpu, n, 0.8, ga, gx, gy, -0.3, gd, gz));
        h = down(gd, n);
        compare("cheb_step d", n, h, dc);
        free(h);
        h = down(gz, n);
        compare("cheb_step z", n, h, zc);
        free(h);
        gpu.ops.free(&gpu, gd), gpu.ops.free(&gpu, gz);
        free(dc), free(zc);
    }

    /* scatter (with values and with NULL = zeros) and gather on a random permutation's first half */
    int64_t m = n / 2;
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) idx[i] = (int32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)((rnd() + 1.0) * 0.5 * (double)(i + 1));
        if (j > i) j = i;
        int32_t t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
    void *gidx;
    CHECK_OK(device_alloc_copy(&gpu, &gidx, idx, sizeof(int32_t) * (size_t)(m > 0 ? m : 1)));
    for (int withvals = 0; withvals <= 1; withvals++) {
        memcpy(yc, y, bytes);
        CHECK_OK(cpu.ops.scatter(&cpu, m, idx, withvals ? x : NULL, yc));
        CHECK_OK(gpu.ops.copy(&gpu, g, gy, bytes));
        CHECK_OK(gpu.ops.scatter(&gpu, m, gidx, withvals ? gx : NULL, g));
        h = down(g, n);
        compare(withvals ? "scatter" : "scatter NULL (zeros)", n, h, yc);
        free(h);
    }
    CHECK_OK(cpu.ops.gather(&cpu, m, idx, x, yc));
    gpu.ops.free(&gpu, g);
    g = nan_dev(m);
    CHECK_OK(gpu.ops.gather(&gpu, m, gidx, gx, g));
    h = down(g, m);
    compare("gather", m, h, yc);
    free(h);

    /* fill: one value, a q-point record, a long pattern (device-side copy of the pattern) */
    int widths[3] = {1, 9, 40};
    for (int w = 0; w < 3; w++) {
        int mw = widths[w];
        int64_t rows = n / mw;
        double pat[40];
        for (int k = 0; k < mw; k++) pat[k] = rnd();
        double *fc = malloc(sizeof(double) * (size_t)(rows * mw > 0 ? rows * mw : 1));
        CHECK_OK(cpu.ops.fill(&cpu, rows, mw, pat, fc));
        double *gf = nan_dev(rows * mw);
        CHECK_OK(gpu.ops.fill(&gpu, rows, mw, pat, gf));
        h = down(gf, rows * mw);
        char what[40];
        snprintf(what, sizeof what, "fill, record of %d", mw);
        compare(what, rows * mw, h, fc);
        free(h);
        free(fc);
        gpu.ops.free(&gpu, gf);
    }

    CHECK_OK(gpu.ops.sync(&gpu));
    gpu.ops.free(&gpu, gidx);
    gpu.ops.free(&gpu, g);
    gpu.ops.free(&gpu, gx);
    gpu.ops.free(&gpu, gy);
    gpu.ops.free(&gpu, ga);
    free(idx), free(x), free(y), free(a), free(yc), free(zeros);
}

int main(void) {
    if (test_device(&gpu, DEV_CUDA, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    CHECK_OK(cpu_device_create(&cpu, 1, ASSEMBLE_GATHER));
    const char *env = getenv("FEMTO_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    rng_state = seed;
    printf("vector operations on %s; random seed %llu\n", gpu.description, (unsigned long long)seed);
    CHECK(strstr(gpu.description, "SMs") != NULL, "description '%s' names no SM count", gpu.description);
    CHECK(gpu.kind == DEV_CUDA && strcmp(gpu.name, "cuda") == 0, "kind %d name '%s'", gpu.kind, gpu.name);

    int64_t lengths[] = {0, 1, 257, 100003, 3000017};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) check_length(lengths[k]);

    /* an impossible allocation: the out-of-memory sentence, and the device still works */
    fem_clear_error();
    void *p = NULL;
    int st = gpu.ops.alloc(&gpu, &p, (size_t)1 << 52); /* 4 PB */
    printf("4 PB allocation: %s\n", fem_last_error());
    CHECK(st == FEM_ERR_DEVICE && p == NULL, "a 4 PB allocation returned %d", st);
    CHECK(strstr(fem_last_error(), "the GPU ran out of memory allocating") != NULL, "message: %s",
          fem_last_error());
    check_length(1000);

    device_destroy(&gpu);
    device_destroy(&cpu);
    return test_result("test_gpu_vector");
}
