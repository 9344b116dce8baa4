/* A physics solved over MPI ranks (see run.h, RunDist): the partition, the rank's part of the space, its
 * halo, and where its output piece sits in the whole output. */
#include "run.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fem/partition.h"

#include <stdlib.h>
#include <string.h>

/* The rank's part of the output frame (io/output.h OutPart): the rank's piece is the frame of its part's
 * space (points: its nodes, owned first; cells: its blocks'), the whole frame the global space's (points: its
 * nodes; cells: its cell blocks one after the other). */
static int output_part(RunDist *rd, const Space *gsp) {
    const Dist *d = &rd->d;
    OutPart *o = &rd->out;
    int64_t first[MESH_MAX_BLOCKS + 1] = {0}, ncells = 0;
    if (gsp->ncell_blocks > OUT_MAX_BLOCKS)
        return fem_fail(FEM_ERR_INTERNAL, "the output has room for %d cell blocks, the mesh has %d",
                        OUT_MAX_BLOCKS, gsp->ncell_blocks);
    for (int b = 0; b < gsp->ncell_blocks; b++) {
        first[b + 1] = first[b] + gsp->cells[b].count;
        o->blocks[b] = (OutBlockInfo){gsp->cells[b].shape, gsp->cells[b].order, gsp->cells[b].count};
    }
    for (int lb = 0; lb < d->space.ncell_blocks; lb++) ncells += d->space.cells[lb].count;
    FEM_ALLOC(rd->out_cells, ncells + 1, "the rank's output cells");
    for (int lb = 0, k = 0; lb < d->space.ncell_blocks; lb++)
        for (int64_t c = 0; c < d->space.cells[lb].count; c++)
            rd->out_cells[k++] = first[d->cell_block[lb]] + d->cell_global[lb][c];
    o->rank = comm_rank();
    o->nranks = comm_size();
    o->npoints_global = gsp->nnodes;
    o->nblocks = gsp->ncell_blocks;
    o->npoints = d->space.nnodes;
    o->nowned = d->space.nnodes_owned;
    o->point_global = d->node_global;
    o->ncells = ncells;
    o->cell_global = rd->out_cells;
    return FEM_OK;
}

int run_dist_setup(RunDist *rd, const Space *gsp) {
    memset(rd, 0, sizeof *rd);
    rd->on = 1;
    /* rank 0, which holds the mesh and the whole space, partitions it and makes every rank's part
     * (fem/dist.h); the others have their outlines */
    int root = comm_rank() == 0, status = FEM_OK;
    if (root && !(rd->part = malloc(sizeof(int32_t) * (size_t)(partition_ncells(gsp->mesh) + 1))))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the partition");
    if (root && !status) status = partition_mesh(gsp->mesh, comm_size(), rd->part);
    FEM_TRY(comm_agree(status));
    FEM_TRY(dist_scatter(&rd->d, root ? gsp : NULL, rd->part)); /* a rank without cells: every rank says so */
    rd->have_dist = 1;
    /* multigrid's coarser levels are split from them on rank 0 (dist_create_order); elsewhere the outline and
     * NULL */
    rd->d.global_mesh = gsp->mesh;
    rd->d.part = rd->part;
    return output_part(rd, gsp);
}

int run_dist_halo(RunDist *rd, Device *dev) {
    FEM_TRY(halo_create(&rd->halo, &rd->d, dev, rd->d.space.ncomp));
    rd->have_halo = 1;
    return FEM_OK;
}

void run_dist_destroy(RunDist *rd) {
    if (rd->have_halo) halo_destroy(&rd->halo);
    if (rd->have_dist) dist_destroy(&rd->d);
    free(rd->part);
    free(rd->out_cells);
    memset(rd, 0, sizeof *rd);
}
