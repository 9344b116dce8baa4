/* The device registry and the helpers every backend shares (see device.h). */
#include "device.h"

#include "error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One factory per kind, registered by the program (app/main.c, tests) from the backends it was built with. */
static DeviceFactory factories[DEV_NKINDS];

void device_register(DevKind kind, DeviceFactory factory) {
    if (kind > DEV_AUTO && kind < DEV_NKINDS) factories[kind] = factory;
}

int device_available(DevKind kind) {
    return kind > DEV_AUTO && kind < DEV_NKINDS && factories[kind] != NULL;
}

int device_create(Device *d, DevKind kind, int threads, AssembleKind assembly) {
    if (kind == DEV_AUTO) {
        if (device_available(DEV_CUDA) && factories[DEV_CUDA](d, threads, assembly) == FEM_OK) return FEM_OK;
        fem_clear_error();
        kind = DEV_CPU;
    }
    if (!device_available(kind)) {
        if (kind == DEV_CUDA)
            return fem_fail(FEM_ERR_DEVICE,
                            "this femto-app was built without CUDA (nvcc was not found when it "
                            "was configured); use --device cpu");
        return fem_fail(FEM_ERR_INTERNAL, "no backend is registered for device kind %d", (int)kind);
    }
    return factories[kind](d, threads, assembly);
}

/* The sizes of a device's live allocations by address: device_free is given only the address, and a GPU
 * pointer has no host-readable header to keep the size in. Open addressing with linear probing; deletion
 * shifts the following entries back, so no tombstones accumulate over a run's allocate/free cycles. */
typedef struct DeviceAllocs {
    size_t cap, count; /* cap: a power of two, or 0 */
    uintptr_t *addr;   /* 0: empty slot */
    size_t *bytes;
} DeviceAllocs;

static size_t allocs_home(const DeviceAllocs *t, uintptr_t a) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: addresses are multiples of 16 */
    return (size_t)(h >> 32) & (t->cap - 1);
}

/* The slot holding address a, or the empty slot where it would go. */
static size_t allocs_slot(const DeviceAllocs *t, uintptr_t a) {
    size_t s = allocs_home(t, a);
    while (t->addr[s] && t->addr[s] != a) s = (s + 1) & (t->cap - 1);
    return s;
}

static int allocs_grow(DeviceAllocs *t) {
    DeviceAllocs n = {t->cap ? 2 * t->cap : 256, t->count, NULL, NULL};
    n.addr = calloc(n.cap, sizeof *n.addr);
    n.bytes = malloc(n.cap * sizeof *n.bytes);
    if (!n.addr || !n.bytes) {
        free(n.addr), free(n.bytes);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory recording the device's allocations");
    }
    for (size_t i = 0; i < t->cap; i++)
        if (t->addr[i]) {
            size_t s = allocs_slot(&n, t->addr[i]);
            n.addr[s] = t->addr[i], n.bytes[s] = t->bytes[i];
        }
    free(t->addr), free(t->bytes);
    *t = n;
    return FEM_OK;
}

static int allocs_put(Device *d, const void *p, size_t bytes) {
    if (!d->allocs && !(d->allocs = calloc(1, sizeof *d->allocs)))
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory recording the device's allocations");
    DeviceAllocs *t = d->allocs;
    if (2 * (t->count + 1) > t->cap) FEM_TRY(allocs_grow(t));
    size_t s = allocs_slot(t, (uintptr_t)p);
    if (!t->addr[s])
        t->count++;
    else /* a stale entry: p was freed behind device_free's back, and that memory is no longer in use */
        d->bytes_in_use -= (int64_t)t->bytes[s];
    t->addr[s] = (uintptr_t)p, t->bytes[s] = bytes;
    return FEM_OK;
}

/* Removes address p and returns its size (0 when it was not allocated through device_alloc). */
static size_t allocs_take(DeviceAllocs *t, const void *p) {
    if (!t || !t->cap) return 0;
    size_t s = allocs_slot(t, (uintptr_t)p);
    if (!t->addr[s]) return 0;
    size_t bytes = t->bytes[s], mask = t->cap - 1;
    t->addr[s] = 0;
    t->count--;
    /* shift back every following entry of the run whose home is not between the hole and its slot */
    for (size_t j = (s + 1) & mask; t->addr[j]; j = (j + 1) & mask) {
        size_t home = allocs_home(t, t->addr[j]);
        if (((j - home) & mask) >= ((j - s) & mask)) {
            t->addr[s] = t->addr[j], t->bytes[s] = t->bytes[j];
            t->addr[j] = 0;
            s = j;
        }
    }
    return bytes;
}

void device_destroy(Device *d) {
    if (!d) return;
    if (d->ops.destroy) d->ops.destroy(d);
    if (d->allocs) free(d->allocs->addr), free(d->allocs->bytes), free(d->allocs);
    d->allocs = NULL;
}

int device_alloc(Device *d, void **p, size_t bytes) {
    if (!bytes) bytes = 8;
    FEM_TRY(d->ops.alloc(d, p, bytes));
    int status = allocs_put(d, *p, bytes);
    if (status) {
        d->ops.free(d, *p);
        *p = NULL;
        return status;
    }
    device_count_bytes(d, (int64_t)bytes);
    return FEM_OK;
}

void device_count_bytes(Device *d, int64_t bytes) {
    d->bytes_in_use += bytes;
    if (d->bytes_in_use > d->bytes_peak) d->bytes_peak = d->bytes_in_use;
}

int device_host_alloc(Device *d, void **p, size_t bytes) {
    if (d->ops.host_alloc) return d->ops.host_alloc(d, p, bytes);
    *p = malloc(bytes ? bytes : 8);
    return *p ? FEM_OK
              : fem_fail(FEM_ERR_INTERNAL, "out of host memory (%zu bytes of staging buffers)", bytes);
}

void device_host_free(Device *d, void *p) {
    if (!p) return;
    if (d->ops.host_free)
        d->ops.host_free(d, p);
    else
        free(p);
}

int device_alloc_copy(Device *d, void **p, const void *host, size_t bytes) {
    FEM_TRY(device_alloc(d, p, bytes));
    if (bytes) FEM_TRY(d->ops.upload(d, *p, host, bytes));
    return FEM_OK;
}

void device_free(Device *d, void *p) {
    if (!p) return;
    device_count_bytes(d, -(int64_t)allocs_take(d->allocs, p));
    d->ops.free(d, p);
}

QfFn device_qfunction(const Device *d, int id) {
    return id >= 0 && id < d->nqf ? d->qf[id] : NULL;
}
