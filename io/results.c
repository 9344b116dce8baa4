/* Results as files (see results.h). */
#include "results.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fem/tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Equispaced reference positions of the lattice of order p on shape s: pts[n][3] (malloc'ed). */
static double *equispaced_points(Shape s, int p, int n) {
    double *pts = malloc(sizeof(double) * 3 * (size_t)n);
    if (pts) lattice_points(s, p, 1, pts);
    return pts;
}

static int frame_points(const Space *sp, OutFrame *f) {
    FEM_ALLOC(f->x, 3 * sp->nnodes, "output points");
    return space_lattice_points(sp, 1, f->x);
}

static int add_string(OutFrame *f, const char *name, const char *value) {
    if (f->nstrings >= OUT_MAX_STRINGS) return FEM_OK;
    snprintf(f->string_name[f->nstrings], sizeof f->string_name[0], "%s", name);
    f->string_value[f->nstrings] = strdup(value ? value : "");
    if (!f->string_value[f->nstrings]) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    f->nstrings++;
    return FEM_OK;
}

int results_frame(const Space *sp, const int32_t *const *cell_region, const char *problem_path, OutFrame *f) {
    const Mesh *m = sp->mesh;
    memset(f, 0, sizeof *f);
    f->dim = m->dim;
    f->npoints = sp->nnodes;
    int status = frame_points(sp, f);
    int64_t ncells = 0;
    for (int bi = 0; bi < sp->ncell_blocks && !status; bi++) {
        const SpaceBlock *b = &sp->cells[bi];
        OutCellBlock *ob = &f->blocks[f->nblocks++];
        int perm[1024];
        ob->shape = b->shape;
        ob->order = b->order;
        ob->vtk_type = vtk_cell_type(b->shape, b->order);
        ob->nodes_per_cell = vtk_node_order(b->shape, b->order, perm);
        ob->ncells = b->count;
        ob->conn = malloc(sizeof(int64_t) * (size_t)(b->count * ob->nodes_per_cell + 1));
        if (!ob->conn) {
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for output cells");
            break;
        }
        for (int64_t c = 0; c < b->count; c++)
            for (int k = 0; k < ob->nodes_per_cell; k++)
                ob->conn[c * ob->nodes_per_cell + k] = b->dofs[c * b->ndof + perm[k]];
        ncells += b->count;
    }
    /* cell data: region (physical tag) and quality (min/max Jacobian determinant over the cell's nodes) */
    double *region = status ? NULL : malloc(sizeof(double) * (size_t)(ncells + 1));
    double *quality = status ? NULL : malloc(sizeof(double) * (size_t)(ncells + 1));
    if (!status && (!region || !quality))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for cell data");
    for (int bi = 0, k = 0; bi < sp->ncell_blocks && !status; bi++) {
        int64_t n = m->cells[bi].count;
        double *lo = malloc(sizeof(double) * (size_t)(n + 1)), *hi = malloc(sizeof(double) * (size_t)(n + 1));
        status = lo && hi ? mesh_block_jacobian_range(m, bi, lo, hi)
                          : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        for (int64_t c = 0; c < n && !status; c++, k++) {
            region[k] = cell_region ? cell_region[bi][c] : 0;
            quality[k] = hi[c] > 0 ? lo[c] / hi[c] : 0.0;
        }
        free(lo);
        free(hi);
    }
    if (!status) {
        OutArray *a = &f->cell[f->ncell_arrays++];
        snprintf(a->name, sizeof a->name, "region");
        a->ncomp = 1;
        a->units = "";
        a->data = region;
        a = &f->cell[f->ncell_arrays++];
        snprintf(a->name, sizeof a->name, "quality");
        a->ncomp = 1;
        a->units = "";
        a->data = quality;
    } else {
        free(region);
        free(quality);
    }
    if (!status) {
        char *groups = calloc((size_t)m->ngroups + 1, MESH_NAME_MAX + 32);
        if (!groups) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        for (int g = 0; g < m->ngroups && !status; g++)
            sprintf(groups + strlen(groups), "%s%d %dD %s", g ? "; " : "", m->groups[g].tag, m->groups[g].dim,
                    m->groups[g].name[0] ? m->groups[g].name : "(unnamed)");
        if (!status) status = add_string(f, "physical_groups", groups);
        free(groups);
    }
    if (!status) status = add_string(f, "femto_version", FEMTO_VERSION);
    if (!status) status = add_string(f, "problem_file", problem_path);
    if (status) outframe_destroy(f);
    return status;
}

int results_nodal_field(const Space *sp, const double *u, int ncomp, double *out) {
    if (sp->order <= 2) { /* GLL and equispaced nodes coincide */
        memcpy(out, u, sizeof(double) * (size_t)(sp->nnodes * ncomp));
        return FEM_OK;
    }
    for (int bi = 0; bi < sp->ncell_blocks; bi++) {
        const SpaceBlock *b = &sp->cells[bi];
        double *pts = equispaced_points(b->shape, b->order, b->ndof);
        ElementTables t;
        int status = pts ? tables_create_at(b->shape, b->order, b->ndof, pts, &t)
                         : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        free(pts);
        FEM_TRY(status);
        for (int64_t c = 0; c < b->count; c++)
            for (int n = 0; n < b->ndof; n++) {
                double *o = &out[(int64_t)b->dofs[c * b->ndof + n] * ncomp];
                for (int k = 0; k < ncomp; k++) o[k] = 0.0;
                for (int i = 0; i < b->ndof; i++)
                    for (int k = 0; k < ncomp; k++)
                        o[k] += t.B[n * b->ndof + i] * u[(int64_t)b->dofs[c * b->ndof + i] * ncomp + k];
            }
        tables_destroy(&t);
    }
    return FEM_OK;
}

int results_add_point_array(OutFrame *f, const char *name, const char *units, int ncomp, int64_t n,
                            const double *data) {
    if (f->npoint_arrays >= OUT_MAX_ARRAYS) return fem_fail(FEM_ERR_INTERNAL, "too many output arrays");
    OutArray *a = &f->point[f->npoint_arrays];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->ncomp = ncomp;
    a->units = units;
    FEM_ALLOC(a->data, n * ncomp, "an output array");
    memcpy(a->data, data, sizeof(double) * (size_t)(n * ncomp));
    f->npoint_arrays++;
    return FEM_OK;
}

/* The run is split over several ranks (the parallel files of results_open_part). */
static int split(const ResultSeries *rs) {
    return rs->part && rs->part->nranks > 1;
}

int results_open(ResultSeries *rs, ResultSet *set, const Problem *pb, const char *series,
                 const OutFrame *mesh) {
    return results_open_part(rs, set, pb, series, mesh, NULL);
}

int results_open_part(ResultSeries *rs, ResultSet *set, const Problem *pb, const char *series,
                      const OutFrame *mesh, const OutPart *part) {
    memset(rs, 0, sizeof *rs);
    rs->part = part && part->nranks > 1 ? part : NULL;
    if (set) snprintf(rs->dir, sizeof rs->dir, "%s", resultset_stage(set));
    if (split(rs)) FEM_TRY(comm_bcast(rs->dir, sizeof rs->dir, 0)); /* rank 0's staging folder */
    if (!rs->dir[0]) return fem_fail(FEM_ERR_INTERNAL, "results_open: no result set");
    char base[2 * PROBLEM_NAME_MAX + 2];
    snprintf(base, sizeof base, "%s%s%s", pb->output.basename, series ? "_" : "", series ? series : "");
    if (strlen(base) >= sizeof rs->base)
        return fem_fail(FEM_ERR_INPUT, "%s: the output name '%s' is longer than %d characters", pb->path,
                        base, (int)sizeof rs->base - 1);
    memcpy(rs->base, base, strlen(base) + 1);
    rs->vtu = pb->output.vtu;
    rs->compress = pb->output.vtu_compress;
    rs->subdivide = pb->output.vtu_subdivide;
    rs->hdf5 = pb->output.hdf5;
    if (rs->hdf5) {
        char h5[PROBLEM_PATH_MAX + 160], xdmf[PROBLEM_PATH_MAX + 160];
        snprintf(h5, sizeof h5, "%s/%s.h5", rs->dir, rs->base);
        snprintf(xdmf, sizeof xdmf, "%s/%s.xdmf", rs->dir, rs->base);
        H5Out *h = NULL;
        /* HDF5 without MPI, or FEMTO_HDF5_RANK0=1 (a file system where MPI-IO is slow or unsafe): rank 0
         * writes the file alone, from frames gathered whole; rank 0's environment decides for all */
        const char *env = getenv("FEMTO_HDF5_RANK0");
        rs->gather = split(rs) && (!h5out_parallel() || (env && strcmp(env, "1") == 0));
        if (split(rs)) FEM_TRY(comm_bcast(&rs->gather, sizeof rs->gather, 0));
        if (rs->gather) {
            OutFrame whole;
            int status = outframe_gather(mesh, rs->part, 1, &whole);
            if (!status && rs->part->rank == 0)
                status = h5out_open(&h, h5, xdmf, &whole, pb->text, pb->output.hdf5_compress);
            outframe_destroy(&whole);
            FEM_TRY(comm_agree(status));
        } else {
            FEM_TRY(h5out_open_part(&h, h5, xdmf, mesh, pb->text, pb->output.hdf5_compress, rs->part));
        }
        rs->h5 = h;
    }
    return FEM_OK;
}

/* One VTU of the frame, its Lagrange cells split into linear ones when the problem asks. */
static int write_vtu(const ResultSeries *rs, const char *path, const OutFrame *frame) {
    if (!rs->subdivide) return vtu_write(path, frame, rs->compress);
    OutFrame sub;
    FEM_TRY(outframe_subdivide(frame, &sub));
    int status = vtu_write(path, &sub, rs->compress);
    outframe_destroy_shallow(&sub);
    return status;
}

/* Over MPI ranks: this rank's piece of output time `step`, and on rank 0 the .pvtu that names them all. */
static int write_pieces(const ResultSeries *rs, int step, const OutFrame *frame) {
    const OutPart *part = rs->part;
    OutFrame piece;
    FEM_TRY(outframe_piece(frame, part, &piece));
    char path[PROBLEM_PATH_MAX + PROBLEM_NAME_MAX + 40];
    snprintf(path, sizeof path, "%s/%s_%04d_p%04d.vtu", rs->dir, rs->base, step, part->rank);
    int status = write_vtu(rs, path, &piece);
    char **names = status || part->rank ? NULL : calloc((size_t)part->nranks, sizeof(char *));
    if (!status && !part->rank && !names) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    for (int r = 0; names && r < part->nranks && !status; r++) {
        char name[PROBLEM_NAME_MAX + 40];
        snprintf(name, sizeof name, "%s_%04d_p%04d.vtu", rs->base, step, r);
        if (!(names[r] = strdup(name))) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    }
    if (names && !status) {
        snprintf(path, sizeof path, "%s/%s_%04d.pvtu", rs->dir, rs->base, step);
        status = pvtu_write(path, &piece, part->nranks, names);
    }
    for (int r = 0; names && r < part->nranks; r++) free(names[r]);
    free(names);
    outframe_piece_release(&piece);
    return status;
}

/* One output time's files: the VTU (or this rank's piece and the .pvtu) and the HDF5 step. */
static int write_files(ResultSeries *rs, double time, const OutFrame *frame) {
    int step = rs->nsteps - 1;
    if (rs->vtu && split(rs)) FEM_TRY(write_pieces(rs, step, frame));
    if (rs->vtu && !split(rs)) {
        char path[PROBLEM_PATH_MAX + PROBLEM_NAME_MAX + 40];
        snprintf(path, sizeof path, "%s/%s", rs->dir, rs->files[step]);
        FEM_TRY(write_vtu(rs, path, frame));
    }
    if (rs->gather) {
        OutFrame whole;
        int status = outframe_gather(frame, rs->part, 0, &whole);
        if (!status && rs->h5) status = h5out_write_step((H5Out *)rs->h5, time, &whole);
        outframe_destroy(&whole);
        return comm_agree(status);
    }
    if (rs->h5) FEM_TRY(h5out_write_step((H5Out *)rs->h5, time, frame));
    return FEM_OK;
}

int results_write(ResultSeries *rs, double time, const OutFrame *frame) {
    double *times = realloc(rs->times, sizeof(double) * (size_t)(rs->nsteps + 1));
    if (times) rs->times = times;
    char **files = realloc(rs->files, sizeof(char *) * (size_t)(rs->nsteps + 1));
    if (files) rs->files = files;
    if (!times || !files) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    char name[PROBLEM_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s_%04d.%s", rs->base, rs->nsteps, split(rs) ? "pvtu" : "vtu");
    rs->times[rs->nsteps] = time;
    rs->files[rs->nsteps] = strdup(name);
    if (!rs->files[rs->nsteps]) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    rs->nsteps++;
    return write_files(rs, time, frame);
}

int results_close(ResultSeries *rs, int ok) {
    int status = FEM_OK;
    char path[PROBLEM_PATH_MAX + PROBLEM_NAME_MAX + 40];
    if (ok && rs->vtu && rs->nsteps && (!rs->part || rs->part->rank == 0)) {
        snprintf(path, sizeof path, "%s/%s.pvd", rs->dir, rs->base);
        status = pvd_write(path, rs->nsteps, rs->times, rs->files);
    }
    if (rs->h5) {
        H5Out *h = rs->h5;
        /* over MPI ranks closing is collective: every rank decides alike (a .pvd that rank 0 could not write
         * fails the run all the same) */
        if (ok && (split(rs) || !status))
            status = h5out_close(&h);
        else
            h5out_abort(&h);
        rs->h5 = NULL;
    }
    for (int i = 0; i < rs->nsteps; i++) free(rs->files[i]);
    free(rs->files);
    free(rs->times);
    rs->files = NULL;
    rs->times = NULL;
    return status;
}
