/* The device registry and the helpers every backend shares (see device.h). */
#include "device.h"

#include "error.h"

#include <stdio.h>

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

void device_destroy(Device *d) {
    if (d && d->ops.destroy) d->ops.destroy(d);
}

int device_alloc(Device *d, void **p, size_t bytes) {
    return d->ops.alloc(d, p, bytes ? bytes : 8);
}

int device_alloc_copy(Device *d, void **p, const void *host, size_t bytes) {
    FEM_TRY(device_alloc(d, p, bytes));
    if (bytes) FEM_TRY(d->ops.upload(d, *p, host, bytes));
    return FEM_OK;
}

void device_free(Device *d, void *p) {
    if (p) d->ops.free(d, p);
}

QfFn device_qfunction(const Device *d, int id) {
    return id >= 0 && id < d->nqf ? d->qf[id] : NULL;
}
