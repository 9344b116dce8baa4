/* The device's memory count (fem/device.h: bytes_in_use, bytes_peak), which the run's summary reports as
 * device_peak_bytes.
 *
 * usage: test_device_memory cpu|cuda
 * On the device: allocate 3000 buffers of 8 (i + 1) bytes (past several growths of the size table), free
 * every third, then the rest in an interleaved order that exercises deletion inside probe runs. After each
 * step bytes_in_use equals the exact sum of the live sizes, bytes_peak equals the largest sum seen; a
 * zero-byte request counts as 8 bytes (what device_alloc allocates); freeing NULL changes nothing; at the end
 * bytes_in_use is 0 and the peak stays; device_count_bytes (a library's own allocations) moves both the same
 * way. */
#include "common/femto_test.h"
#include "fem/error.h"

#include <string.h>

enum { NBUF = 3000 };

static int64_t live_sum(void *const *p) {
    int64_t s = 0;
    for (int i = 0; i < NBUF; i++)
        if (p[i]) s += 8 * (int64_t)(i + 1);
    return s;
}

/* Frees every buffer i with i % step == rest, checking the count after each free. */
static void free_some(Device *d, void **p, int step, int rest) {
    for (int i = rest; i < NBUF; i += step) {
        device_free(d, p[i]);
        p[i] = NULL;
        int64_t want = live_sum(p);
        if (d->bytes_in_use != want) {
            CHECK(0, "after freeing buffer %d: bytes_in_use %lld, expected %lld", i,
                  (long long)d->bytes_in_use, (long long)want);
            return;
        }
    }
}

int main(int argc, char **argv) {
    DevKind kind = argc > 1 && strcmp(argv[1], "cuda") == 0 ? DEV_CUDA : DEV_CPU;
    Device d;
    int st = test_device(&d, kind, 1, ASSEMBLE_GATHER);
    if (st) return st;
    CHECK(d.bytes_in_use == 0 && d.bytes_peak == 0, "a new device counts %lld bytes in use, peak %lld",
          (long long)d.bytes_in_use, (long long)d.bytes_peak);
    static void *p[NBUF];
    for (int i = 0; i < NBUF; i++) CHECK_OK(device_alloc(&d, &p[i], 8 * (size_t)(i + 1)));
    int64_t full = live_sum(p); /* 8 * NBUF (NBUF + 1) / 2 */
    CHECK(full == 8LL * NBUF * (NBUF + 1) / 2, "live sum %lld", (long long)full);
    CHECK(d.bytes_in_use == full && d.bytes_peak == full,
          "after %d allocations: in use %lld, peak %lld, "
          "expected %lld for both",
          NBUF, (long long)d.bytes_in_use, (long long)d.bytes_peak, (long long)full);
    free_some(&d, p, 3, 0);
    void *z = NULL;
    int64_t before = d.bytes_in_use;
    CHECK_OK(device_alloc(&d, &z, 0));
    CHECK(d.bytes_in_use == before + 8, "a zero-byte allocation counts %lld bytes, expected 8",
          (long long)(d.bytes_in_use - before));
    device_free(&d, z);
    device_free(&d, NULL);
    CHECK(d.bytes_in_use == before, "after freeing the zero-byte buffer and NULL: %lld, expected %lld",
          (long long)d.bytes_in_use, (long long)before);
    free_some(&d, p, 3, 2);
    free_some(&d, p, 3, 1);
    CHECK(d.bytes_in_use == 0, "everything freed, yet %lld bytes in use", (long long)d.bytes_in_use);
    CHECK(d.bytes_peak == full, "peak %lld, expected %lld", (long long)d.bytes_peak, (long long)full);
    /* a library's own allocation, counted through its memory handler, raises the peak past the buffers' */
    device_count_bytes(&d, full + 1000);
    device_count_bytes(&d, -(full + 1000));
    CHECK(d.bytes_in_use == 0 && d.bytes_peak == full + 1000,
          "after a library's allocation and free of %lld bytes: in use %lld, peak %lld",
          (long long)(full + 1000), (long long)d.bytes_in_use, (long long)d.bytes_peak);
    device_destroy(&d);
    return test_result("test_device_memory");
}
