/* A frame split over MPI ranks gathered whole onto rank 0 (see output.h, outframe_gather): for an HDF5
 * library without MPI, with which rank 0 writes the file alone. Every kind of row (points, each block's
 * cells, each array) goes the same way: each rank sends its rows with their numbers in the whole frame, and
 * rank 0 puts each at its place. A point's row comes from its owner only; a cell's from its one rank. */
#include "output.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This rank's n rows of `width` values (rows[i * width ..]) with their numbers ids[i] in a whole table of
 * `total` rows, which rank 0 receives into *whole (malloc'ed there; NULL elsewhere). Collective. */
static int gather_rows(const int64_t *ids, int64_t n, const double *rows, int width, int64_t total,
                       double **whole) {
    int nranks = comm_size(), root = comm_rank() == 0;
    int64_t rec = 1 + width; /* a row's number (exact in a double below 2^53), then its values */
    double *send = malloc(sizeof(double) * (size_t)(n * rec + 1)), *recv = NULL;
    int64_t *bytes = malloc(sizeof(int64_t) * (size_t)(2 * nranks + 1)), *off = bytes ? bytes + nranks : NULL;
    *whole = NULL;
    int status = send && bytes ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory to gather results");
    status = comm_agree(status ? status : comm_allgather_int64(8 * n * rec, bytes));
    if (!status) {
        off[0] = 0;
        for (int r = 0; r < nranks; r++) off[r + 1] = off[r] + bytes[r];
        if (root && (!(recv = malloc((size_t)off[nranks] + 8)) ||
                     !(*whole = calloc((size_t)(total * width) + 1, sizeof(double)))))
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory to gather results on rank 0");
        for (int64_t i = 0; i < n; i++) {
            send[i * rec] = (double)ids[i];
            memcpy(&send[i * rec + 1], &rows[i * width], sizeof(double) * (size_t)width);
        }
    }
    status = comm_agree(status);
    if (!status) status = comm_agree(comm_gather_bytes(send, 8 * n * rec, recv, off, 0));
    for (int64_t k = 0; root && !status && k < off[nranks] / 8 / rec; k++) {
        int64_t id = (int64_t)recv[k * rec];
        if (id >= 0 && id < total) memcpy(&(*whole)[id * width], &recv[k * rec + 1], sizeof(double) * width);
    }
    if (status) free(*whole), *whole = NULL;
    free(send);
    free(recv);
    free(bytes);
    return status;
}

/* The whole array gathered from the piece's array a (point arrays: the owned points' rows). */
static int gather_array(const OutArray *a, const OutPart *part, int cell, int64_t total, OutArray *out) {
    *out = *a;
    out->data = NULL;
    return gather_rows(cell ? part->cell_global : part->point_global, cell ? part->ncells : part->nowned,
                       a->data, a->ncomp, total, &out->data);
}

/* The whole block b's cells from the piece's: connectivity in the whole frame's point numbers. */
static int gather_block(const OutFrame *piece, const OutPart *part, int b, int64_t first, OutCellBlock *out) {
    const OutBlockInfo *info = &part->blocks[b];
    int npc = lattice_count(info->shape, info->order);
    *out = (OutCellBlock){info->shape, info->order,  vtk_cell_type(info->shape, info->order),
                          npc,         info->ncells, NULL};
    int64_t n = 0, k = 0;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(part->ncells + 1));
    double *rows = malloc(sizeof(double) * (size_t)(part->ncells * npc + 1)), *whole = NULL;
    int status = ids && rows ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory to gather results");
    for (int pb = 0; !status && pb < piece->nblocks; pb++)
        for (int64_t c = 0; c < piece->blocks[pb].ncells; c++, k++) {
            int64_t g = part->cell_global[k] - first;
            if (g < 0 || g >= info->ncells) continue;
            ids[n] = g;
            for (int v = 0; v < npc; v++)
                rows[n * npc + v] = (double)part->point_global[piece->blocks[pb].conn[c * npc + v]];
            n++;
        }
    status = gather_rows(ids, n, rows, npc, info->ncells, &whole);
    if (!status && whole) {
        out->conn = malloc(sizeof(int64_t) * (size_t)(info->ncells * npc + 1));
        if (!out->conn) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory to gather results on rank 0");
        for (int64_t i = 0; out->conn && i < info->ncells * npc; i++) out->conn[i] = (int64_t)whole[i];
    }
    free(whole);
    free(ids);
    free(rows);
    return status;
}

int outframe_gather(const OutFrame *piece, const OutPart *part, int with_mesh, OutFrame *whole) {
    memset(whole, 0, sizeof *whole);
    whole->dim = piece->dim;
    whole->npoints = part->npoints_global;
    int64_t ncells = 0, first[OUT_MAX_BLOCKS + 1] = {0};
    for (int b = 0; b < part->nblocks; b++) ncells += part->blocks[b].ncells, first[b + 1] = ncells;
    int status = FEM_OK;
    if (with_mesh) {
        status = gather_rows(part->point_global, part->nowned, piece->x, 3, part->npoints_global, &whole->x);
        for (int b = 0; !status && b < part->nblocks; b++, whole->nblocks++)
            status = gather_block(piece, part, b, first[b], &whole->blocks[b]);
        for (int s = 0; !status && s < piece->nstrings; s++, whole->nstrings++) {
            snprintf(whole->string_name[s], sizeof whole->string_name[s], "%s", piece->string_name[s]);
            if (!(whole->string_value[s] = strdup(piece->string_value[s] ? piece->string_value[s] : "")))
                status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        }
        status = comm_agree(status);
    }
    for (int a = 0; !status && a < piece->npoint_arrays; a++, whole->npoint_arrays++)
        status = gather_array(&piece->point[a], part, 0, part->npoints_global, &whole->point[a]);
    for (int a = 0; !status && a < piece->ncell_arrays; a++, whole->ncell_arrays++)
        status = gather_array(&piece->cell[a], part, 1, ncells, &whole->cell[a]);
    if (status) outframe_destroy(whole);
    return status;
}
