/* Element restrictions on a device (see restriction.h). */
#include "restriction.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

int restriction_create(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes, const fem_idx *dofs,
                       const int64_t *toff, const int32_t *tslots) {
    FEM_TRY(restriction_create_map(r, dev, nelem, ndof, nnodes, dofs));
    void *p = NULL;
    int status = device_alloc_copy(dev, &p, toff, sizeof(int64_t) * (size_t)(nnodes + 1));
    r->t_offsets = status ? NULL : p;
    if (!status) status = device_alloc_copy(dev, &p, tslots, sizeof(int32_t) * (size_t)(toff[nnodes] + 1));
    r->t_slots = status ? NULL : p;
    if (status) restriction_destroy(r);
    return status;
}

int restriction_create_subset(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes,
                              const fem_idx *dofs) {
    int64_t *off = calloc((size_t)nnodes + 2, sizeof *off), *fill = malloc(sizeof(int64_t) * (size_t)(nnodes + 1));
    int32_t *slots = malloc(sizeof(int32_t) * (size_t)(nelem * ndof + 1));
    int status = off && fill && slots ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a dof map");
    if (!status) {
        for (int64_t k = 0; k < nelem * ndof; k++) off[dofs[k] + 1]++;
        for (int64_t n = 0; n < nnodes; n++) off[n + 1] += off[n];
        memcpy(fill, off, sizeof(int64_t) * (size_t)(nnodes + 1));
        for (int64_t k = 0; k < nelem * ndof; k++) slots[fill[dofs[k]]++] = (int32_t)k;
        status = restriction_create(r, dev, nelem, ndof, nnodes, dofs, off, slots);
    }
    free(off);
    free(fill);
    free(slots);
    return status;
}

int restriction_create_map(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes, const fem_idx *dofs) {
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->nelem = nelem;
    r->ndof = ndof;
    r->nnodes = nnodes;
    void *p;
    int status = device_alloc_copy(dev, &p, dofs, sizeof(fem_idx) * (size_t)(nelem * ndof));
    r->dofs = status ? NULL : p;
    return status;
}

void restriction_destroy(Restriction *r) {
    if (r->dev) {
        device_free(r->dev, (void *)r->dofs);
        device_free(r->dev, (void *)r->t_offsets);
        device_free(r->dev, (void *)r->t_slots);
    }
    memset(r, 0, sizeof *r);
}
