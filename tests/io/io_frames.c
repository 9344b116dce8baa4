/* Synthetic output frames for the io tests: see io_frames.h. */
#include "io_frames.h"

#include "fem/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int io_test_failures;

void io_test_map(int p, int dim, const double xi[3], double x[3])
{
    double a = xi[0], b = xi[1], c = xi[2];
    x[0] = a + 0.2 * b + 0.1 * c + 0.15 * pow(b, p) / p;
    x[1] = 0.1 * a + b + 0.2 * c + 0.1 * pow(a, p) / p;
    x[2] = dim == 3 ? 0.05 * a + 0.1 * b + c + 0.12 * pow(a, p) / p : 0.0;
}

static void point_values(const double *x, double t, double *s, double *v, double *ten)
{
    double px = x[0], py = x[1], pz = x[2], g = 1.0 + t;
    *s = (1.5 + px - 2.0 * py + 0.25 * pz + px * py * pz) * g;
    v[0] = px * py * g;
    v[1] = (py - pz) * g;
    v[2] = (2.0 * px + pz * pz) * g;
    ten[0] = px * g;
    ten[1] = py * g;
    ten[2] = pz * g;
    ten[3] = px * py * g;
    ten[4] = py * pz * g;
    ten[5] = (px * pz + 1.0) * g;
}

void io_test_fill(OutFrame *f, double t)
{
    for (int64_t i = 0; i < f->npoints; i++)
        point_values(&f->x[3 * i], t, &f->point[0].data[i], &f->point[1].data[3 * i],
                     &f->point[2].data[6 * i]);
    int64_t ncells = 0;
    for (int b = 0; b < f->nblocks; b++) ncells += f->blocks[b].ncells;
    for (int a = 0; a < f->ncell_arrays; a++)
        if (strcmp(f->cell[a].name, "cell_value") == 0)
            for (int64_t c = 0; c < ncells; c++) f->cell[a].data[c] = (0.5 * (double)c + 0.25) * (1.0 + t);
}

static OutArray *add_array(OutArray *list, int *n, const char *name, int ncomp, const char *units,
                           int64_t rows)
{
    OutArray *a = &list[(*n)++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->ncomp = ncomp;
    a->units = units;
    a->data = calloc((size_t)(rows * ncomp) + 1, sizeof(double));
    return a;
}

static void add_string(OutFrame *f, const char *name, const char *value)
{
    snprintf(f->string_name[f->nstrings], sizeof f->string_name[0], "%s", name);
    f->string_value[f->nstrings++] = strdup(value);
}

int io_test_frame(OutFrame *f, int dim, int nblocks, const IoBlockSpec *blocks, double t, int mesh_only)
{
    memset(f, 0, sizeof *f);
    f->dim = dim;
    int64_t npoints = 0, ncells = 0;
    for (int b = 0; b < nblocks; b++) {
        npoints += (int64_t)blocks[b].ncells * lattice_count(blocks[b].shape, blocks[b].order);
        ncells += blocks[b].ncells;
    }
    f->x = calloc((size_t)(3 * npoints) + 1, sizeof(double));
    int64_t base = 0;
    for (int b = 0; b < nblocks; b++) {
        Shape s = blocks[b].shape;
        int p = blocks[b].order, n = lattice_count(s, p), perm[729];
        if (vtk_node_order(s, p, perm) != n) return fem_fail(FEM_ERR_INTERNAL, "no VTK order for this cell");
        OutCellBlock *blk = &f->blocks[f->nblocks++];
        blk->shape = s;
        blk->order = p;
        blk->vtk_type = vtk_cell_type(s, p);
        blk->nodes_per_cell = n;
        blk->ncells = blocks[b].ncells;
        blk->conn = malloc(sizeof(int64_t) * (size_t)(blk->ncells * n) + 1);
        for (int c = 0; c < blocks[b].ncells; c++) {
            for (int k = 0; k < n; k++) {
                int lat[3];
                double xi[3];
                lattice_node(s, p, k, lat);
                for (int a = 0; a < 3; a++) xi[a] = (double)lat[a] / p;
                double *x = &f->x[3 * (base + k)];
                io_test_map(p, dim, xi, x);
                x[0] += 3.0 * c;
                x[1] += 3.0 * b;
            }
            for (int k = 0; k < n; k++) blk->conn[(int64_t)c * n + k] = base + perm[k];
            base += n;
        }
    }
    f->npoints = npoints;
    if (!mesh_only) {
        add_array(f->point, &f->npoint_arrays, "temperature", 1, "K", npoints);
        add_array(f->point, &f->npoint_arrays, "displacement", 3, "m", npoints);
        add_array(f->point, &f->npoint_arrays, "stress", 6, "Pa", npoints);
    }
    OutArray *region = add_array(f->cell, &f->ncell_arrays, "region", 1, NULL, ncells);
    int64_t c = 0;
    for (int b = 0; b < nblocks; b++)
        for (int k = 0; k < blocks[b].ncells; k++) region->data[c++] = b + 1;
    if (!mesh_only) add_array(f->cell, &f->ncell_arrays, "cell_value", 1, "W", ncells);
    if (!mesh_only) io_test_fill(f, t);
    add_string(f, "femto_version", FEMTO_VERSION);
    add_string(f, "group 1", "left wall & <inlet> \"quoted\"");
    add_string(f, "empty", "");
    return FEM_OK;
}
