/* A physics solved over MPI ranks (see run.h, RunDist): the partition, the rank's part of the space and
 * model, its halo, and the solution gathered back into the global numbering. */
#include "run.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fem/partition.h"

#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The rank's part of the output frame (io/output.h OutPart): the frame's points are the whole space's nodes,
 * its cells the whole space's cell blocks one after the other. */
static int output_part(RunDist *rd, const Space *gsp) {
    const Dist *d = &rd->d;
    int64_t first[MESH_MAX_BLOCKS + 1] = {0}, ncells = 0;
    for (int b = 0; b < gsp->ncell_blocks; b++) first[b + 1] = first[b] + gsp->cells[b].count;
    for (int lb = 0; lb < d->mesh.ncell_blocks; lb++) ncells += d->mesh.cells[lb].count;
    FEM_ALLOC(rd->out_cells, ncells + 1, "the rank's output cells");
    for (int lb = 0, k = 0; lb < d->mesh.ncell_blocks; lb++)
        for (int64_t c = 0; c < d->mesh.cells[lb].count; c++)
            rd->out_cells[k++] = first[d->cell_block[lb]] + d->cell_global[lb][c];
    qsort(rd->out_cells, (size_t)ncells, sizeof(int64_t), by_value);
    rd->out = (OutPart){comm_rank(),    comm_size(), d->space.nnodes, d->space.nnodes_owned,
                        d->node_global, ncells,      rd->out_cells,   0}; /* packed: the run decides */
    return FEM_OK;
}

int run_dist_setup(RunDist *rd, const Space *gsp, const Model *gmd, Device *dev) {
    memset(rd, 0, sizeof *rd);
    rd->on = 1;
    FEM_ALLOC(rd->part, partition_ncells(gsp->mesh), "the partition");
    FEM_TRY(partition_mesh_shared(gsp->mesh, comm_size(), rd->part));
    /* the rank's part of the solve's space, made on rank 0 and sent (fem/dist.h) */
    FEM_TRY(dist_scatter(&rd->d, gsp, rd->part)); /* a rank without cells: every rank says so */
    rd->have_dist = 1;
    rd->d.global_mesh = gsp->mesh; /* multigrid's coarser levels are split from it (dist_create_order) */
    rd->d.part = rd->part;
    FEM_TRY(model_localize(gmd, &rd->d, &rd->md));
    rd->have_model = 1;
    FEM_TRY(halo_create(&rd->halo, &rd->d, dev, gsp->ncomp));
    rd->have_halo = 1;
    rd->nglobal = gsp->ndofs;
    FEM_ALLOC(rd->gdof, rd->d.space.ndofs_owned, "global dof numbers");
    FEM_ALLOC(rd->local, rd->d.space.ndofs, "a rank's solution");
    dist_global_dofs(&rd->d, rd->d.space.ndofs_owned, rd->gdof);
    return output_part(rd, gsp);
}

int run_dist_gather(RunDist *rd, const Vec *u, double *global) {
    FEM_TRY(vec_download(u, rd->local));
    memset(global, 0, sizeof(double) * (size_t)rd->nglobal);
    for (int64_t i = 0; i < rd->d.space.ndofs_owned; i++) global[rd->gdof[i]] = rd->local[i];
    /* every global dof has one owner: the sum over ranks is the whole vector (a gather to rank 0 will do
     * when the ranks stop holding the whole mesh) */
    return comm_sum(global, (int)rd->nglobal);
}

void run_dist_destroy(RunDist *rd) {
    if (rd->have_halo) halo_destroy(&rd->halo);
    if (rd->have_model) model_destroy(&rd->md);
    if (rd->have_dist) dist_destroy(&rd->d);
    free(rd->part);
    free(rd->gdof);
    free(rd->local);
    free(rd->out_cells);
    memset(rd, 0, sizeof *rd);
}
