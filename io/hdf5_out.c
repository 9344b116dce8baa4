/* One HDF5 file per run, plus its XDMF3 sidecar for ParaView (see output.h and xdmf.h).
 *
 * Layout (all datasets row-major, doubles unless said otherwise; [n] for one component, [n][c] for more):
 *   /                            attributes femto_version, dimension
 *   /problem                     the problem file's text (variable-length string)
 *   /times                       [nsteps] output times
 *   /mesh/points                 [npoints][3]
 *   /mesh/<shape>_p<order>       one group per cell block ("triangle_p2"; "_2", "_3" if names repeat):
 *       connectivity             [ncells][nodes] int64, VTK node order; attributes vtk_type, order,
 *                                first_cell (its first cell in the frame's numbering), ncells
 *   /mesh/point_data/<name>      point arrays of the mesh frame
 *   /mesh/cell_data/<name>       cell arrays of the mesh frame (region ids, quality), cells block after block
 *   /mesh/field_data/<name>      its strings (physical group names, ...)
 *   /fields/<name>               attributes center ("Node"/"Cell"), units, components (6-component arrays);
 *                                the mesh's own arrays (region, quality) are not repeated here
 *       /<step>                  "000000", "000001", ...: [n] or [n][c], attributes time and step
 *   /xdmf/...                    only what the XDMF needs beyond the above: its topology when that is not
 *                                one block's connectivity as stored (several blocks, subdivided blocks), and
 *                                cell arrays repeated onto subcells
 * Datasets are chunked and compressed (shuffle + deflate). 6-component arrays (symmetric tensors) are stored
 * in XDMF's Tensor6 order XX XY XZ YY YZ ZZ, which their "components" attribute spells out: the .h5 and the
 * .xdmf are one format and must agree. (OutArray and the VTU keep VTK's XX YY ZZ XY YZ XZ.)
 *
 * The XDMF names the HDF5 file relative to itself ("beam.h5"), so a results folder that is moved or copied
 * keeps working and a copy never shows the original's data. VTK's vtkXdmf3Reader resolves that name against
 * the XDMF's path textually: given the bare name "beam.xdmf" it looks for "beam.xdmfbeam.h5", so give it a
 * path with a directory ("./beam.xdmf"); ParaView hands it absolute paths. */
#include "output.h"

#include "fem/comm.h"
#include "fem/error.h"
#include "fileutil.h"
#include "xdmf.h"

#include <errno.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Over MPI ranks with parallel HDF5: the rows of a dataset this rank writes, as runs of consecutive rows. */
typedef struct {
    int64_t n;
    int64_t *start, *count;
} Rows;

/* MPI ranks writing one file together (h5out_open_part): mpio, the file is open on every rank through
 * HDF5's MPI-IO driver, and every frame a rank is given is its piece (OutPart): a point array's first nowned
 * rows are the rank's rows of the file; cell arrays and connectivity go out in the order of the whole
 * frame's cell numbers (`order`), point numbers through the part's point_global. */
typedef struct {
    int mpio, rank;
    const OutPart *part;
    int64_t *order;                    /* [part->ncells] the piece's cells by increasing whole-frame number */
    int64_t *sorted;                   /* [part->ncells] their whole-frame numbers, increasing */
    int64_t first[OUT_MAX_BLOCKS + 1]; /* the whole frame's first cell of each of its blocks */
    int64_t piece_first[OUT_MAX_BLOCKS + 1]; /* the piece frame's first cell of each of its blocks */
    int64_t nsub[OUT_MAX_BLOCKS];            /* XDMF subcells of a cell of each whole block (1: not split) */
    Rows points, cells,
        subcells; /* the rows this rank writes: owned points, its cells, their XDMF subcells */
    /* variable-length strings cannot go through MPI-IO: rank 0 adds them after the collective close */
    char *problem;
    int nstrings;
    char *string_name[OUT_MAX_STRINGS], *string_value[OUT_MAX_STRINGS];
} H5Ranks;

struct H5Out {
    H5Ranks ranks;
    hid_t file;
    int raw;    /* datasets uncompressed (<hdf5 compress="false">) */
    int status; /* first failure; every later HDF5 step is skipped */
    char path[FILEUTIL_PATH_MAX], tmp[FILEUTIL_PATH_MAX];
    char h5_ref[FILEUTIL_PATH_MAX]; /* the HDF5 file as the XDMF names it: relative to the XDMF */
    char xdmf_path[FILEUTIL_PATH_MAX];
    int64_t npoints, ncells, xdmf_ncells;
    int64_t *parent; /* one process: XDMF cell -> frame cell, when subcells repeat cell arrays; else NULL */
    int expand;      /* the XDMF has subcells: cell arrays are repeated onto them under /xdmf */
    XdmfTopology topology;
    char topology_dataset[XDMF_REF_MAX];
    int nmesh;
    XdmfAttr mesh[2 * OUT_MAX_ARRAYS];
    int nsteps, cap_times, cap_first, nattrs, cap_attrs;
    double *times;
    int *step_first;
    XdmfAttr *attrs;
};

/* ---------------------------------------------------------------- small HDF5 helpers */

static int little_endian(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Records the failure of `what` once. HDF5 reports no reason of its own worth a user's time, but a failing
 * system call leaves errno set (ENOSPC, EACCES, ...), which is the sentence the user needs. */
static void h5_check(H5Out *h, herr_t ret, const char *what) {
    if (ret >= 0 || h->status) return;
    if (errno)
        h->status = fileutil_fail(h->path, errno);
    else
        h->status = fem_fail(FEM_ERR_INPUT, "cannot write results file '%s': the HDF5 library could not %s",
                             h->path, what);
}

static hid_t h5_group(H5Out *h, hid_t loc, const char *name) {
    if (h->status) return H5I_INVALID_HID;
    errno = 0;
    if (H5Lexists(loc, name, H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
        h5_check(h, g, "open a group");
        return g;
    }
    hid_t links = H5Pcreate(H5P_LINK_CREATE); /* "/xdmf/fields/x" makes "/xdmf/fields" on the way */
    H5Pset_create_intermediate_group(links, 1);
    hid_t g = H5Gcreate2(loc, name, links, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(links);
    h5_check(h, g, "create a group");
    return g;
}

static void h5_close_group(hid_t g) {
    if (g >= 0) H5Gclose(g);
}

/* One scalar value: an attribute of `loc`, or (as_dataset) a dataset in it. */
static void h5_scalar(H5Out *h, hid_t loc, const char *name, hid_t type, const void *value, int as_dataset) {
    if (h->status) return;
    errno = 0;
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t obj = as_dataset ? H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                           : H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    h5_check(h, obj, as_dataset ? "create a dataset" : "create an attribute");
    if (obj >= 0) {
        herr_t ret = as_dataset ? H5Dwrite(obj, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value)
                                : H5Awrite(obj, type, value);
        h5_check(h, ret, as_dataset ? "write a dataset" : "write an attribute");
        if (as_dataset)
            H5Dclose(obj);
        else
            H5Aclose(obj);
    }
    H5Sclose(space);
}

/* A string (variable-length UTF-8, which h5py reads as str): an attribute, or (as_dataset) a dataset. */
static void h5_string(H5Out *h, hid_t loc, const char *name, const char *value, int as_dataset) {
    if (as_dataset && h->ranks.mpio) return; /* rank 0 adds it after the collective close (H5Ranks) */
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    h5_scalar(h, loc, name, type, &value, as_dataset);
    H5Tclose(type);
}

static void h5_attr_string(H5Out *h, hid_t loc, const char *name, const char *value) {
    h5_string(h, loc, name, value, 0);
}

static void h5_attr_int(H5Out *h, hid_t loc, const char *name, int64_t v) {
    h5_scalar(h, loc, name, H5T_NATIVE_INT64, &v, 0);
}

/* One chunk as HDF5's shuffle + deflate filters would store it: the chunk (zero-padded past the data) with
 * byte k of every 8-byte value gathered into plane k, then zlib-deflated at level 1. Returns the packed size,
 * or 0 when zlib failed. */
static size_t pack_chunk(const unsigned char *src, size_t nbytes, size_t chunk_bytes, unsigned char *shuffled,
                         unsigned char *out, size_t out_cap) {
    size_t nvals = chunk_bytes / 8;
    for (size_t i = 0; i < nvals; i++)
        for (int k = 0; k < 8; k++) shuffled[k * nvals + i] = 8 * i + k < nbytes ? src[8 * i + k] : 0;
    uLongf len = (uLongf)out_cap;
    return compress2(out, &len, shuffled, (uLong)chunk_bytes, 1) == Z_OK ? (size_t)len : 0;
}

/* The chunks of a [rows][cols] dataset of 8-byte values, filtered on OpenMP threads (HDF5 runs its filters
 * on one thread) and stored as they are by H5Dwrite_chunk; the file is the same as H5Dwrite would make. */
static void write_chunks(H5Out *h, hid_t ds, const void *data, hsize_t rows, hsize_t cols,
                         hsize_t chunk_rows) {
    int64_t nchunks = (int64_t)((rows + chunk_rows - 1) / chunk_rows);
    size_t chunk_bytes = 8 * (size_t)(chunk_rows * cols), cap = compressBound((uLong)chunk_bytes);
    unsigned char *packed = fem_malloc((size_t)nchunks * cap + 1, "compressed HDF5 chunks");
    size_t *sizes = fem_malloc(sizeof(size_t) * (size_t)(nchunks + 1), "compressed HDF5 chunks");
    if (!packed || !sizes) { /* fem_malloc said what ran out */
        if (!h->status) h->status = FEM_ERR_INTERNAL;
        free(packed), free(sizes);
        return;
    }
    int failed = 0;
#pragma omp parallel reduction(| : failed) if (nchunks > 1)
    {
        unsigned char *shuffled = malloc(chunk_bytes); /* each thread's scratch */
        failed |= !shuffled;
#pragma omp for schedule(dynamic)
        for (int64_t c = 0; c < nchunks; c++) {
            if (!shuffled) continue;
            size_t first = (size_t)c * chunk_bytes, total = 8 * (size_t)(rows * cols);
            size_t n = total - first < chunk_bytes ? total - first : chunk_bytes;
            sizes[c] = pack_chunk((const unsigned char *)data + first, n, chunk_bytes, shuffled,
                                  packed + c * cap, cap);
            failed |= sizes[c] == 0;
        }
        free(shuffled);
    }
    if (failed && !h->status) h->status = fem_fail(FEM_ERR_INTERNAL, "could not compress an HDF5 dataset");
    for (int64_t c = 0; c < nchunks && !h->status; c++) {
        hsize_t offset[2] = {(hsize_t)c * chunk_rows, 0};
        h5_check(h, H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset, sizes[c], packed + c * cap),
                 "write a dataset");
    }
    free(packed);
    free(sizes);
}

/* Over MPI ranks (mpio): every rank writes its rows `sel` of the dataset (NULL: rank 0 writes them all) in
 * one collective write. data is the whole array on every rank, so memory and file take the same selection. */
static void write_rows(H5Out *h, hid_t ds, hid_t type, int rank, const hsize_t *dims, const void *data,
                       const Rows *sel, int packed) {
#ifdef H5_HAVE_PARALLEL
    hid_t space = H5Screate_simple(rank, dims, NULL), mem = space;
    H5Sselect_none(space);
    hsize_t nrows = 0;
    for (int64_t k = 0; sel && k < sel->n; k++) {
        hsize_t start[2] = {(hsize_t)sel->start[k], 0}, count[2] = {(hsize_t)sel->count[k], dims[1]};
        H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL);
        nrows += count[0];
    }
    if (!sel && h->ranks.rank == 0) H5Sselect_all(space);
    if (packed) { /* data: the selected rows one after the other, in the selection's (increasing) order */
        hsize_t mdims[2] = {nrows, dims[1]};
        mem = H5Screate_simple(rank, mdims, NULL);
    }
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    h5_check(h, H5Dwrite(ds, type, mem, space, xfer, data), "write a dataset");
    H5Pclose(xfer);
    if (mem != space) H5Sclose(mem);
    H5Sclose(space);
#else
    (void)ds, (void)type, (void)rank, (void)dims, (void)data, (void)sel, (void)packed;
    h->status = fem_fail(FEM_ERR_INTERNAL, "HDF5 was built without MPI");
#endif
}

/* A [rows] (cols = 0) or [rows][cols] dataset of 8-byte values, chunked and (unless h->raw) compressed;
 * returns it open (for attributes), or a negative id after a failure. Over MPI ranks this rank writes the
 * rows sel (write_rows): from the same rows of data, or packed, from data's first rows in turn. */
static hid_t h5_dataset_rows(H5Out *h, hid_t loc, const char *name, hid_t type, int64_t rows, int cols,
                             const void *data, const Rows *sel, int packed) {
    if (h->status) return H5I_INVALID_HID;
    errno = 0;
    int rank = cols ? 2 : 1;
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)(cols ? cols : 1)};
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    /* chunks of about 512 KiB: large enough for deflate, small enough to read a part of a field */
    hsize_t per = (hsize_t)(65536 / dims[1]);
    hsize_t chunk[2] = {dims[0] < per ? dims[0] : (per ? per : 1), dims[1]};
    if (rows > 0 && !h->raw) {
        H5Pset_chunk(plist, rank, chunk);
        H5Pset_shuffle(plist);
        H5Pset_deflate(plist, 1);
    }
    hid_t ds = H5Dcreate2(loc, name, type == H5T_NATIVE_DOUBLE ? H5T_IEEE_F64LE : H5T_STD_I64LE, space,
                          H5P_DEFAULT, plist, H5P_DEFAULT);
    h5_check(h, ds, "create a dataset");
    /* the chunks go in as the filters would store them (little-endian hosts: memory order is file order) */
    if (ds >= 0 && rows > 0 && h->ranks.mpio)
        write_rows(h, ds, type, rank, dims, data, sel, packed);
    else if (ds >= 0 && rows > 0 && !h->raw && little_endian())
        write_chunks(h, ds, data, dims[0], dims[1], chunk[0]);
    else if (ds >= 0 && rows > 0)
        h5_check(h, H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write a dataset");
    H5Pclose(plist);
    H5Sclose(space);
    return ds;
}

static hid_t h5_dataset(H5Out *h, hid_t loc, const char *name, hid_t type, int64_t rows, int cols,
                        const void *data, const Rows *sel) {
    return h5_dataset_rows(h, loc, name, type, rows, cols, data, sel, 0);
}

static void h5_close_dataset(hid_t ds) {
    if (ds >= 0) H5Dclose(ds);
}

/* Cell array `data` repeated onto the XDMF's subcells (NULL when out of memory): one process, the whole
 * frame's [ncells][ncomp] onto every subcell; over MPI ranks, the rank's cells' rows in the whole frame's
 * order (cell_rows) onto their subcells, in the same order. */
static double *expand_cells(H5Out *h, const double *data, int ncomp) {
    const H5Ranks *k = &h->ranks;
    int64_t n = h->xdmf_ncells;
    if (k->mpio) {
        n = 0;
        for (int64_t r = 0; r < k->subcells.n; r++) n += k->subcells.count[r];
    }
    double *out = fem_malloc(sizeof(double) * (size_t)(n * ncomp + 1), "XDMF cell array");
    if (!out) return NULL;
    if (!k->mpio) {
        for (int64_t c = 0; c < n; c++)
            memcpy(&out[c * ncomp], &data[h->parent[c] * ncomp], sizeof(double) * ncomp);
        return out;
    }
    double *o = out;
    for (int64_t i = 0, b = 0; i < k->part->ncells; i++) {
        while (k->sorted[i] >= k->first[b + 1]) b++;
        for (int64_t s = 0; s < k->nsub[b]; s++, o += ncomp)
            memcpy(o, &data[i * ncomp], sizeof(double) * ncomp);
    }
    return out;
}

/* A symmetric tensor array [rows][6] from VTK's order XX YY ZZ XY YZ XZ to XDMF's XX XY XZ YY YZ ZZ. */
static double *tensor6_xdmf_order(const double *vtk, int64_t rows) {
    static const int from_vtk[6] = {0, 3, 5, 1, 4, 2};
    double *out = fem_malloc(sizeof(double) * (size_t)(6 * rows + 1), "tensor array");
    for (int64_t r = 0; out && r < rows; r++)
        for (int k = 0; k < 6; k++) out[6 * r + k] = vtk[6 * r + from_vtk[k]];
    return out;
}

/* Over MPI ranks: the piece's cell array [ncells][ncomp] in the rows' order (the whole frame's numbers). */
static double *cell_rows(H5Out *h, const double *data, int ncomp) {
    const H5Ranks *k = &h->ranks;
    double *out = fem_malloc(sizeof(double) * (size_t)(k->part->ncells * ncomp + 1), "an output cell array");
    for (int64_t i = 0; out && i < k->part->ncells; i++)
        memcpy(&out[i * ncomp], &data[k->order[i] * ncomp], sizeof(double) * ncomp);
    return out;
}

/* Writes one point or cell array at `loc`/`name` and, when the XDMF cannot use it as it is, the copy it needs
 * under `xdmf_loc` (same name); fills the XDMF's reference `ref`. Over MPI ranks the array is the piece's
 * (OutPart), of which the rank writes its owned points' rows or all its cells'. */
static hid_t write_array(H5Out *h, hid_t loc, const char *loc_path, const char *name, const OutArray *a,
                         int cell, const char *xdmf_loc_path, XdmfAttr *ref) {
    const H5Ranks *k = &h->ranks;
    int64_t rows = cell ? h->ncells : h->npoints;
    int cols = a->ncomp == 1 ? 0 : a->ncomp;
    int64_t held = !k->mpio ? rows : cell ? k->part->ncells : k->part->nowned; /* the rows this rank writes */
    const double *data = a->data;
    double *ordered = NULL, *tensor = NULL, *copy = NULL;
    if (k->mpio && cell && !h->status && !(data = ordered = cell_rows(h, a->data, a->ncomp)))
        h->status = FEM_ERR_INTERNAL;
    if (a->ncomp == 6 && held > 0 && !h->status && !(data = tensor = tensor6_xdmf_order(data, held)))
        h->status = FEM_ERR_INTERNAL;
    hid_t ds = h5_dataset_rows(h, loc, name, H5T_NATIVE_DOUBLE, rows, cols, data,
                               cell ? &k->cells : &k->points, k->mpio);
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", a->name);
    ref->cell = cell;
    ref->ncomp = a->ncomp;
    ref->rows = rows;
    snprintf(ref->dataset, sizeof ref->dataset, "%s/%s", loc_path, name);
    if (cell && h->expand && !h->status) {
        if ((copy = expand_cells(h, data, a->ncomp))) {
            hid_t g = h5_group(h, h->file, xdmf_loc_path);
            h5_close_dataset(h5_dataset_rows(h, g, name, H5T_NATIVE_DOUBLE, h->xdmf_ncells, cols, copy,
                                             k->mpio ? &k->subcells : NULL, k->mpio));
            h5_close_group(g);
        } else {
            h->status = FEM_ERR_INTERNAL;
        }
        ref->rows = h->xdmf_ncells;
        snprintf(ref->dataset, sizeof ref->dataset, "%s/%s", xdmf_loc_path, name);
    }
    free(copy);
    free(tensor);
    free(ordered);
    return ds;
}

static void array_attributes(H5Out *h, hid_t obj, const OutArray *a, int cell) {
    h5_attr_string(h, obj, "center", cell ? "Cell" : "Node");
    if (a->units && a->units[0]) h5_attr_string(h, obj, "units", a->units);
    if (a->ncomp == 6) h5_attr_string(h, obj, "components", "XX XY XZ YY YZ ZZ");
}

/* HDF5 link names cannot hold '/' (it would make groups) or be "." */
static int check_name(const char *name) {
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0)
        return fem_fail(FEM_ERR_INTERNAL, "output array name '%s' cannot be an HDF5 name", name);
    return FEM_OK;
}

/* ---------------------------------------------------------------- rows */

static void rows_free(Rows *r) {
    free(r->start);
    free(r->count);
    memset(r, 0, sizeof *r);
}

/* Room for n runs of rows. */
static int rows_alloc(Rows *r, int64_t n) {
    memset(r, 0, sizeof *r);
    r->start = fem_malloc(sizeof(int64_t) * (size_t)(n + 1), "HDF5 row selection");
    r->count = fem_malloc(sizeof(int64_t) * (size_t)(n + 1), "HDF5 row selection");
    if (!r->start || !r->count) return rows_free(r), FEM_ERR_INTERNAL;
    return FEM_OK;
}

/* Rows [start, start + count) after the last run (a run continues when it starts where the last one ends). */
static void rows_add(Rows *r, int64_t start, int64_t count) {
    if (r->n && r->start[r->n - 1] + r->count[r->n - 1] == start)
        r->count[r->n - 1] += count;
    else
        r->start[r->n] = start, r->count[r->n++] = count;
}

/* ids[0..n) (increasing) as runs of consecutive rows, each shifted by -first and kept when in [0, limit). */
static int rows_of(const int64_t *ids, int64_t n, int64_t first, int64_t limit, Rows *r) {
    FEM_TRY(rows_alloc(r, n));
    for (int64_t k = 0; k < n; k++) {
        int64_t row = ids[k] - first;
        if (row >= 0 && row < limit) rows_add(r, row, 1);
    }
    return FEM_OK;
}

/* ---------------------------------------------------------------- a rank's piece (MPI ranks) */

enum {
    PIECE_MAX_NODES =
        (ELEMENT_MAX_ORDER_TENSOR + 1) * (ELEMENT_MAX_ORDER_TENSOR + 1) * (ELEMENT_MAX_ORDER_TENSOR + 1),
    XDMF_SUB_LOCAL = ELEMENT_MAX_ORDER_TENSOR * ELEMENT_MAX_ORDER_TENSOR * ELEMENT_MAX_ORDER_TENSOR * 8,
};

/* The whole frame's block b as the part describes it (no connectivity). */
static OutCellBlock whole_block(const OutPart *part, int b) {
    OutCellBlock blk = {part->blocks[b].shape, part->blocks[b].order, 0, 0, part->blocks[b].ncells, NULL};
    blk.vtk_type = vtk_cell_type(blk.shape, blk.order);
    blk.nodes_per_cell = lattice_count(blk.shape, blk.order);
    return blk;
}

/* The connectivity of the piece's cell k (block after block of the piece frame f), in the piece's points. */
static const int64_t *piece_cell(const H5Ranks *k, const OutFrame *f, int64_t cell) {
    int b = 0;
    while (cell >= k->piece_first[b + 1]) b++;
    return &f->blocks[b].conn[(cell - k->piece_first[b]) * f->blocks[b].nodes_per_cell];
}

/* The rank's cells of the whole block b: the range [*lo, *hi) of `sorted`. */
static void block_range(const H5Ranks *k, int b, int64_t *lo, int64_t *hi) {
    int64_t i = 0;
    while (i < k->part->ncells && k->sorted[i] < k->first[b]) i++;
    *lo = i;
    while (i < k->part->ncells && k->sorted[i] < k->first[b + 1]) i++;
    *hi = i;
}

typedef struct {
    int64_t global, cell;
} CellKey;

static int by_global(const void *a, const void *b) {
    int64_t x = ((const CellKey *)a)->global, y = ((const CellKey *)b)->global;
    return (x > y) - (x < y);
}

/* How this rank takes part (H5Ranks) in a file of a run split over MPI ranks: the whole frame's sizes, its
 * cells in the whole frame's order, the rows it writes. */
static int ranks_setup(H5Out *h, const OutPart *part, const char *problem_text, const OutFrame *mesh) {
    H5Ranks *k = &h->ranks;
    k->rank = part->rank;
    k->part = part;
    if (!h5out_parallel())
        return fem_fail(
            FEM_ERR_INPUT,
            "cannot write the results file '%s' from %d MPI ranks: this femto-app was built with an "
            "HDF5 library without MPI (install libhdf5-openmpi-dev and rebuild femto, or set "
            "<hdf5 enabled=\"false\"/> in the problem's <output>)",
            h->path, part->nranks);
    k->mpio = 1;
    h->raw = 1; /* see the file comment: contiguous datasets over MPI ranks */
    if (mesh->npoints != part->npoints || part->nowned > part->npoints || part->nblocks < 1 ||
        part->nblocks > OUT_MAX_BLOCKS || mesh->nblocks > OUT_MAX_BLOCKS)
        return fem_fail(FEM_ERR_INTERNAL, "HDF5 output: rank %d's piece does not match its part", part->rank);
    h->npoints = part->npoints_global;
    for (int b = 0; b < part->nblocks; b++) k->first[b + 1] = k->first[b] + part->blocks[b].ncells;
    h->ncells = k->first[part->nblocks];
    for (int b = 0; b < mesh->nblocks; b++)
        k->piece_first[b + 1] = k->piece_first[b] + mesh->blocks[b].ncells;
    if (k->piece_first[mesh->nblocks] != part->ncells)
        return fem_fail(FEM_ERR_INTERNAL, "HDF5 output: rank %d's piece has %lld cells, its part %lld",
                        part->rank, (long long)k->piece_first[mesh->nblocks], (long long)part->ncells);
    CellKey *key = fem_malloc(sizeof *key * (size_t)(part->ncells + 1), "HDF5 cell order");
    k->order = fem_malloc(sizeof(int64_t) * (size_t)(part->ncells + 1), "HDF5 cell order");
    k->sorted = fem_malloc(sizeof(int64_t) * (size_t)(part->ncells + 1), "HDF5 cell order");
    if (!key || !k->order || !k->sorted) return free(key), FEM_ERR_INTERNAL;
    for (int64_t c = 0; c < part->ncells; c++) key[c] = (CellKey){part->cell_global[c], c};
    qsort(key, (size_t)part->ncells, sizeof *key, by_global);
    int status = FEM_OK;
    for (int64_t i = 0, b = 0; i < part->ncells && !status; i++) {
        k->order[i] = key[i].cell, k->sorted[i] = key[i].global;
        while (b < part->nblocks && key[i].global >= k->first[b + 1]) b++;
        int pb = 0; /* the piece's block of the cell: the same shape and order as its whole block */
        while (key[i].cell >= k->piece_first[pb + 1]) pb++;
        if (key[i].global < 0 || b == part->nblocks || (i && key[i].global == key[i - 1].global) ||
            mesh->blocks[pb].shape != part->blocks[b].shape ||
            mesh->blocks[pb].order != part->blocks[b].order)
            status = fem_fail(FEM_ERR_INTERNAL,
                              "HDF5 output: rank %d's cell %lld is not a cell of the whole frame", part->rank,
                              (long long)key[i].cell);
    }
    free(key);
    FEM_TRY(status);
    for (int64_t i = 0; i < part->nowned; i++)
        if (part->point_global[i] < 0 || part->point_global[i] >= h->npoints ||
            (i && part->point_global[i] <= part->point_global[i - 1]))
            return fem_fail(FEM_ERR_INTERNAL, "HDF5 output: rank %d's owned points are not increasing",
                            part->rank);
    FEM_TRY(rows_of(part->point_global, part->nowned, 0, h->npoints, &k->points));
    FEM_TRY(rows_of(k->sorted, part->ncells, 0, h->ncells, &k->cells));
    if (problem_text && !(k->problem = strdup(problem_text)))
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    for (int s = 0; s < mesh->nstrings; s++, k->nstrings++) {
        k->string_name[s] = strdup(mesh->string_name[s]);
        k->string_value[s] = strdup(mesh->string_value[s] ? mesh->string_value[s] : "");
        if (!k->string_name[s] || !k->string_value[s])
            return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    }
    return FEM_OK;
}

/* The rank's rows of the whole block b's connectivity (in the whole frame's point numbers, malloc'ed) and
 * their selection, counted from the block's first row. */
static int64_t *rank_block_conn(H5Out *h, const OutFrame *mesh, int b, Rows *sel) {
    const H5Ranks *k = &h->ranks;
    int64_t lo, hi;
    block_range(k, b, &lo, &hi);
    int npc = lattice_count(k->part->blocks[b].shape, k->part->blocks[b].order);
    int64_t *conn = fem_malloc(sizeof(int64_t) * (size_t)((hi - lo) * npc + 1), "HDF5 connectivity");
    if (!conn || rows_of(&k->sorted[lo], hi - lo, k->first[b], k->part->blocks[b].ncells, sel)) {
        free(conn);
        h->status = FEM_ERR_INTERNAL;
        return NULL;
    }
    for (int64_t i = lo; i < hi; i++) {
        const int64_t *c = piece_cell(k, mesh, k->order[i]);
        for (int v = 0; v < npc; v++) conn[(i - lo) * npc + v] = k->part->point_global[c[v]];
    }
    return conn;
}

/* ---------------------------------------------------------------- open */

static void write_mesh(H5Out *h, const OutFrame *mesh) {
    const H5Ranks *k = &h->ranks;
    hid_t g = h5_group(h, h->file, "/mesh");
    h5_close_dataset(
        h5_dataset_rows(h, g, "points", H5T_NATIVE_DOUBLE, h->npoints, 3, mesh->x, &k->points, k->mpio));
    int64_t first = 0;
    int nblocks = k->mpio ? k->part->nblocks : mesh->nblocks;
    for (int b = 0; b < nblocks; b++) {
        OutCellBlock blk = k->mpio ? whole_block(k->part, b) : mesh->blocks[b];
        char name[64];
        snprintf(name, sizeof name, "%s_p%d", shape_name(blk.shape), blk.order);
        for (int n = 2; !h->status && H5Lexists(g, name, H5P_DEFAULT) > 0; n++)
            snprintf(name, sizeof name, "%s_p%d_%d", shape_name(blk.shape), blk.order, n);
        hid_t bg = h5_group(h, g, name);
        Rows sel = {0};
        int64_t *conn = k->mpio && !h->status ? rank_block_conn(h, mesh, b, &sel) : NULL;
        h5_close_dataset(h5_dataset_rows(h, bg, "connectivity", H5T_NATIVE_INT64, blk.ncells,
                                         blk.nodes_per_cell, k->mpio ? conn : blk.conn, &sel, k->mpio));
        free(conn);
        rows_free(&sel);
        h5_attr_int(h, bg, "vtk_type", blk.vtk_type);
        h5_attr_int(h, bg, "order", blk.order);
        h5_attr_int(h, bg, "first_cell", first);
        h5_attr_int(h, bg, "ncells", blk.ncells);
        h5_attr_string(h, bg, "shape", shape_name(blk.shape));
        h5_close_group(bg);
        if (b == 0 && !h->topology_dataset[0]) /* prepare_xdmf found block 0 fit to serve as it is */
            snprintf(h->topology_dataset, sizeof h->topology_dataset, "/mesh/%s/connectivity", name);
        first += blk.ncells;
    }
    for (int a = 0; a < mesh->npoint_arrays + mesh->ncell_arrays; a++) {
        int cell = a >= mesh->npoint_arrays;
        const OutArray *arr = cell ? &mesh->cell[a - mesh->npoint_arrays] : &mesh->point[a];
        const char *path = cell ? "/mesh/cell_data" : "/mesh/point_data";
        if (!h->status) h->status = check_name(arr->name);
        hid_t ag = h5_group(h, h->file, path);
        hid_t ds =
            write_array(h, ag, path, arr->name, arr, cell, "/xdmf/mesh_cell_data", &h->mesh[h->nmesh++]);
        array_attributes(h, ds, arr, cell);
        h5_close_dataset(ds);
        h5_close_group(ag);
    }
    if (mesh->nstrings) {
        hid_t fg = h5_group(h, g, "field_data");
        for (int s = 0; s < mesh->nstrings; s++)
            if (!h->status && (h->status = check_name(mesh->string_name[s])) == FEM_OK)
                h5_string(h, fg, mesh->string_name[s], mesh->string_value[s] ? mesh->string_value[s] : "", 1);
        h5_close_group(fg);
    }
    h5_close_group(g);
}

/* Which blocks the XDMF's view splits into linear subcells: order >= 3, and quadratic hexahedra when the mesh
 * has several blocks (ParaView 5.11 misreads a Hexahedron_27 inside a Mixed topology unless it is the very
 * last cell; it crashes on two). */
static int xdmf_splits(Shape shape, int order, int nblocks) {
    return order > 2 || (nblocks > 1 && shape == SHAPE_HEX && order == 2);
}

/* The XDMF's view of the mesh (see xdmf.h): order >= 3 split into linear subcells, order 2 kept (but see
 * xdmf_splits). */
static int prepare_xdmf(H5Out *h, const OutFrame *mesh) {
    OutFrame view;
    int split_block[OUT_MAX_BLOCKS];
    for (int b = 0; b < mesh->nblocks; b++)
        split_block[b] = xdmf_splits(mesh->blocks[b].shape, mesh->blocks[b].order, mesh->nblocks);
    FEM_TRY(outframe_subdivide_blocks(mesh, split_block, &view));
    int status = xdmf_topology(&view, &h->topology), split = 0;
    h->xdmf_ncells = 0;
    for (int b = 0; b < view.nblocks; b++) {
        split |= view.blocks[b].ncells != mesh->blocks[b].ncells;
        h->xdmf_ncells += view.blocks[b].ncells;
    }
    h->expand = split;
    if (status == FEM_OK && split) {
        h->parent = fem_malloc(sizeof(int64_t) * (size_t)h->xdmf_ncells, "XDMF cell map");
        if (!h->parent) status = FEM_ERR_INTERNAL;
        int64_t c = 0, from = 0;
        for (int b = 0; h->parent && b < view.nblocks; b++) {
            int64_t per = view.blocks[b].ncells / (mesh->blocks[b].ncells ? mesh->blocks[b].ncells : 1);
            for (int64_t k = 0; k < view.blocks[b].ncells; k++) h->parent[c++] = from + k / per;
            from += mesh->blocks[b].ncells;
        }
    }
    /* one block used as it is needs no copy of its connectivity */
    if (status == FEM_OK && (h->topology.conn || split)) {
        const int64_t *conn = h->topology.conn ? h->topology.conn : view.blocks[0].conn;
        int cols = h->topology.rank == 2 ? (int)h->topology.dims[1] : 0;
        hid_t g = h5_group(h, h->file, "/xdmf");
        h5_close_dataset(
            h5_dataset(h, g, "topology", H5T_NATIVE_INT64, h->topology.dims[0], cols, conn, NULL));
        h5_close_group(g);
        snprintf(h->topology_dataset, sizeof h->topology_dataset, "/xdmf/topology");
        status = h->status;
    }
    outframe_destroy_shallow(&view);
    return status;
}

/* The rank's entries of the XDMF's topology (its cells', split as the whole view splits them), packed, and
 * their rows: a Mixed topology's entries, or a split single block's [subcells][corners]. */
static int64_t *rank_topology(H5Out *h, const OutFrame *mesh, const OutFrame *view, const int *local,
                              const int64_t *toff, Rows *sel) {
    const H5Ranks *k = &h->ranks;
    int mixed = h->topology.rank == 1;
    int64_t len = 0;
    for (int64_t i = 0, b = 0; i < k->part->ncells; i++) {
        while (k->sorted[i] >= k->first[b + 1]) b++;
        len += k->nsub[b] * (mixed ? xdmf_cell_length(&view->blocks[b]) : view->blocks[b].nodes_per_cell);
    }
    int64_t *out = fem_malloc(sizeof(int64_t) * (size_t)(len + 1), "XDMF topology");
    if (!out || rows_alloc(sel, k->part->ncells)) return free(out), NULL;
    int64_t *o = out, nodes[PIECE_MAX_NODES];
    for (int64_t i = 0, b = 0; i < k->part->ncells; i++) {
        while (k->sorted[i] >= k->first[b + 1]) b++;
        const OutCellBlock *vb = &view->blocks[b];
        int npc = lattice_count(k->part->blocks[b].shape, k->part->blocks[b].order);
        const int64_t *c = piece_cell(k, mesh, k->order[i]);
        for (int v = 0; v < npc; v++) nodes[v] = k->part->point_global[c[v]];
        int64_t per = mixed ? xdmf_cell_length(vb) : 1, nv = vb->nodes_per_cell; /* rows of one subcell */
        rows_add(sel, toff[b] + (k->sorted[i] - k->first[b]) * k->nsub[b] * per, k->nsub[b] * per);
        for (int64_t s = 0; s < k->nsub[b]; s++) {
            int64_t corner[8];
            const int64_t *sub = nodes;
            if (k->nsub[b] > 1) { /* the subcell's corners */
                for (int v = 0; v < nv; v++) corner[v] = nodes[local[b * XDMF_SUB_LOCAL + s * nv + v]];
                sub = corner;
            }
            if (mixed)
                o += xdmf_cell_entries(vb, sub, o);
            else
                memcpy(o, sub, sizeof(int64_t) * (size_t)nv), o += nv;
        }
    }
    return out;
}

/* prepare_xdmf over MPI ranks: the view's sizes from the part's blocks, the rank's subcells and topology
 * entries from its cells. */
static int prepare_xdmf_ranks(H5Out *h, const OutFrame *mesh) {
    H5Ranks *k = &h->ranks;
    const OutPart *part = k->part;
    OutFrame view = {.dim = mesh->dim, .nblocks = part->nblocks};
    int *local = fem_malloc(sizeof(int) * (size_t)(part->nblocks * XDMF_SUB_LOCAL), "XDMF subcells");
    if (!local) return FEM_ERR_INTERNAL;
    int64_t toff[OUT_MAX_BLOCKS] = {0}, sub_first[OUT_MAX_BLOCKS] = {0};
    int split = 0;
    h->xdmf_ncells = 0;
    for (int b = 0; b < part->nblocks; b++) {
        OutCellBlock *vb = &view.blocks[b];
        *vb = whole_block(part, b);
        k->nsub[b] = 1;
        if (xdmf_splits(vb->shape, vb->order, part->nblocks)) {
            k->nsub[b] = outframe_subcells(vb->shape, vb->order, &local[b * XDMF_SUB_LOCAL]);
            vb->order = 1;
            vb->vtk_type = vtk_cell_type(vb->shape, 1);
            vb->nodes_per_cell = shape_nvertices(vb->shape);
            split = 1;
        }
        vb->ncells *= k->nsub[b];
        sub_first[b] = h->xdmf_ncells;
        h->xdmf_ncells += vb->ncells;
        if (b + 1 < part->nblocks) toff[b + 1] = toff[b] + vb->ncells * xdmf_cell_length(vb);
    }
    int status = xdmf_topology_header(&view, &h->topology);
    h->expand = split;
    if (!status && split && !(status = rows_alloc(&k->subcells, part->ncells)))
        for (int64_t i = 0, b = 0; i < part->ncells; i++) {
            while (k->sorted[i] >= k->first[b + 1]) b++;
            rows_add(&k->subcells, sub_first[b] + (k->sorted[i] - k->first[b]) * k->nsub[b], k->nsub[b]);
        }
    if (!status && (part->nblocks > 1 || split)) { /* else block 0's connectivity serves as it is */
        Rows sel = {0};
        int64_t *entries =
            rank_topology(h, mesh, &view, local, h->topology.rank == 1 ? toff : sub_first, &sel);
        if (!entries) status = FEM_ERR_INTERNAL;
        int cols = h->topology.rank == 2 ? (int)h->topology.dims[1] : 0;
        hid_t g = status ? H5I_INVALID_HID : h5_group(h, h->file, "/xdmf");
        if (!status)
            h5_close_dataset(h5_dataset_rows(h, g, "topology", H5T_NATIVE_INT64, h->topology.dims[0], cols,
                                             entries, &sel, 1));
        h5_close_group(g);
        snprintf(h->topology_dataset, sizeof h->topology_dataset, "/xdmf/topology");
        free(entries);
        rows_free(&sel);
        if (!status) status = h->status;
    }
    free(local);
    return status;
}

int h5out_parallel(void) {
#if defined(H5_HAVE_PARALLEL) && defined(FEMTO_HAVE_MPI)
    return 1;
#else
    return 0;
#endif
}

/* The temporary file, created; over MPI ranks rank 0's name and every rank through MPI-IO. */
static void create_file(H5Out *h) {
    h->status = fileutil_temp_name(h->path, h->tmp, sizeof h->tmp);
    if (h->ranks.mpio && !h->status) h->status = comm_bcast(h->tmp, sizeof h->tmp, 0);
    if (h->status) return;
    errno = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#if defined(H5_HAVE_PARALLEL) && defined(FEMTO_HAVE_MPI)
    if (h->ranks.mpio) H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
#endif
    h->file = H5Fcreate(h->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    h5_check(h, h->file, "create the file");
}

static int open_file(H5Out **hp, const char *h5_path, const char *xdmf_path, const OutFrame *mesh,
                     const char *problem_text, int compress, const OutPart *part) {
    *hp = NULL;
    FEM_TRY(outframe_check(mesh));
    H5Out *h = fem_calloc(1, sizeof *h, "HDF5 writer");
    if (!h) return FEM_ERR_INTERNAL;
    h->file = H5I_INVALID_HID;
    h->raw = !compress;
    if (strlen(h5_path) >= sizeof h->path || strlen(xdmf_path) >= sizeof h->xdmf_path) {
        free(h);
        return fileutil_fail(h5_path, ENAMETOOLONG);
    }
    strcpy(h->path, h5_path);
    strcpy(h->xdmf_path, xdmf_path);
    h->npoints = mesh->npoints;
    for (int b = 0; b < mesh->nblocks; b++) h->ncells += mesh->blocks[b].ncells;
    *hp = h;
    if (part) h->status = ranks_setup(h, part, problem_text, mesh);
    /* HDF5's exit handler closes the files it still holds, and 1.10 crashes on one whose H5Fclose failed (a
     * full disk); such a file is discarded already, so the handler has nothing to do for us. This must come
     * before any other HDF5 call, which would start the library. */
    H5dont_atexit();
    /* errors become one sentence; HDF5's own stack dump would only confuse a user */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!h->status) h->status = fileutil_relative(xdmf_path, h5_path, h->h5_ref, sizeof h->h5_ref);
    if (!h->status) create_file(h);
    h5_attr_string(h, h->file, "femto_version", FEMTO_VERSION);
    h5_attr_int(h, h->file, "dimension", mesh->dim);
    if (problem_text) h5_string(h, h->file, "problem", problem_text, 1);
    h5_close_group(h5_group(h, h->file, "/fields"));
    if (!h->status) h->status = h->ranks.mpio ? prepare_xdmf_ranks(h, mesh) : prepare_xdmf(h, mesh);
    write_mesh(h, mesh);
    if (h->status) {
        int status = h->status;
        h5out_abort(hp);
        return status;
    }
    return FEM_OK;
}

int h5out_open(H5Out **hp, const char *h5_path, const char *xdmf_path, const OutFrame *mesh,
               const char *problem_text, int compress) {
    return open_file(hp, h5_path, xdmf_path, mesh, problem_text, compress, NULL);
}

int h5out_open_part(H5Out **hp, const char *h5_path, const char *xdmf_path, const OutFrame *mesh,
                    const char *problem_text, int compress, const OutPart *part) {
    return open_file(hp, h5_path, xdmf_path, mesh, problem_text, compress,
                     part && part->nranks > 1 ? part : NULL);
}

/* ---------------------------------------------------------------- steps */

static int grow(void **p, int *cap, int need, size_t size) {
    if (need <= *cap) return FEM_OK;
    int n = *cap ? 2 * *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, size * (size_t)n);
    if (!q) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (HDF5 step list)");
    *p = q;
    *cap = n;
    return FEM_OK;
}

/* The mesh frame has an array of this name and centre (region, quality): written once, with the mesh. */
static int mesh_has(const H5Out *h, const char *name, int cell) {
    for (int k = 0; k < h->nmesh; k++)
        if (h->mesh[k].cell == cell && strcmp(h->mesh[k].name, name) == 0) return 1;
    return 0;
}

static int write_step(H5Out *h, double time, const OutFrame *fields) {
    int step = h->nsteps, narrays = fields->npoint_arrays + fields->ncell_arrays;
    FEM_TRY(grow((void **)&h->times, &h->cap_times, step + 1, sizeof(double)));
    FEM_TRY(grow((void **)&h->step_first, &h->cap_first, step + 2, sizeof(int)));
    FEM_TRY(grow((void **)&h->attrs, &h->cap_attrs, h->nattrs + narrays, sizeof(XdmfAttr)));
    h->step_first[step] = h->nattrs;
    char step_name[32];
    snprintf(step_name, sizeof step_name, "%06d", step);
    for (int k = 0; k < narrays && !h->status; k++) {
        int cell = k >= fields->npoint_arrays;
        const OutArray *a = cell ? &fields->cell[k - fields->npoint_arrays] : &fields->point[k];
        if (mesh_has(h, a->name, cell)) continue;
        FEM_TRY(check_name(a->name));
        if (a->ncomp < 1 || (!a->data && (cell ? h->ncells : h->npoints) > 0))
            return fem_fail(FEM_ERR_INTERNAL, "output array '%s' is inconsistent", a->name);
        char path[XDMF_REF_MAX], xdmf_path[XDMF_REF_MAX];
        snprintf(path, sizeof path, "/fields/%s", a->name);
        snprintf(xdmf_path, sizeof xdmf_path, "/xdmf/fields/%s", a->name);
        hid_t g = h5_group(h, h->file, path);
        if (!h->status && H5Aexists(g, "center") <= 0) array_attributes(h, g, a, cell);
        hid_t ds = write_array(h, g, path, step_name, a, cell, xdmf_path, &h->attrs[h->nattrs++]);
        h5_scalar(h, ds, "time", H5T_NATIVE_DOUBLE, &time, 0);
        h5_attr_int(h, ds, "step", step);
        h5_close_dataset(ds);
        h5_close_group(g);
    }
    h->times[step] = time;
    h->step_first[step + 1] = h->nattrs;
    h->nsteps++;
    return h->status;
}

int h5out_write_step(H5Out *h, double time, const OutFrame *fields) {
    if (!h) return fem_fail(FEM_ERR_INTERNAL, "h5out_write_step: no open file");
    if (h->status) return h->status;
    /* a failed step leaves the file unusable for the XDMF: later calls repeat the first failure */
    int status = write_step(h, time, fields);
    if (status && !h->status) h->status = status;
    return status;
}

/* ---------------------------------------------------------------- close */

static void release(H5Out **hp) {
    H5Out *h = *hp;
    if (h->file >= 0) H5Fclose(h->file);
    H5Ranks *k = &h->ranks;
    rows_free(&k->points);
    rows_free(&k->cells);
    rows_free(&k->subcells);
    free(k->order);
    free(k->sorted);
    free(k->problem);
    for (int s = 0; s < k->nstrings; s++) free(k->string_name[s]), free(k->string_value[s]);
    xdmf_topology_destroy(&h->topology);
    free(h->parent);
    free(h->times);
    free(h->step_first);
    free(h->attrs);
    free(h);
    *hp = NULL;
}

void h5out_abort(H5Out **hp) {
    if (!hp || !*hp) return;
    if ((*hp)->tmp[0] && (*hp)->ranks.rank == 0) unlink((*hp)->tmp);
    release(hp);
}

/* Over MPI ranks, on rank 0 after the collective close: the variable-length strings (the problem file's
 * text, the mesh's field data), which HDF5 cannot write through MPI-IO, added to the file by this process
 * alone. */
static void add_strings(H5Out *h) {
    H5Ranks *k = &h->ranks;
    k->mpio = 0;
    errno = 0;
    h->file = H5Fopen(h->tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    h5_check(h, h->file, "open the file");
    if (k->problem) h5_string(h, h->file, "problem", k->problem, 1);
    hid_t fg = k->nstrings ? h5_group(h, h->file, "/mesh/field_data") : H5I_INVALID_HID;
    for (int s = 0; s < k->nstrings; s++) h5_string(h, fg, k->string_name[s], k->string_value[s], 1);
    h5_close_group(fg);
    if (h->file >= 0) {
        herr_t ret = H5Fclose(h->file);
        h->file = H5I_INVALID_HID;
        h5_check(h, ret, "finish the file");
    }
}

int h5out_close(H5Out **hp) {
    if (!hp || !*hp) return FEM_OK;
    H5Out *h = *hp;
    hid_t ds = h5_dataset(h, h->file, "times", H5T_NATIVE_DOUBLE, h->nsteps, 0, h->times, NULL);
    h5_close_dataset(ds);
    if (h->ranks.mpio) h->status = comm_agree(h->status); /* the close is collective: all ranks, or none */
    if (!h->status) {
        errno = 0;
        herr_t ret = H5Fclose(h->file);
        h->file = H5I_INVALID_HID; /* even when it failed: HDF5 cannot close a file twice */
        h5_check(h, ret, "finish the file");
    }
    if (h->ranks.mpio && h->ranks.rank != 0 && !h->status) {
        release(hp);
        return FEM_OK;
    }
    if (h->ranks.mpio && !h->status) add_strings(h);
    if (h->status) {
        int status = h->status;
        h5out_abort(hp);
        return status;
    }
    XdmfView v = {
        .h5 = h->h5_ref,
        .topology = &h->topology,
        .topology_dataset = h->topology_dataset,
        .npoints = h->npoints,
        .nmesh = h->nmesh,
        .mesh = h->mesh,
        .nsteps = h->nsteps,
        .times = h->times,
        .step_first = h->step_first,
        .attrs = h->attrs,
    };
    /* the HDF5 file first: an XDMF must never name a file that is not there (if the XDMF then fails, the
     * complete HDF5 file stays, a result in itself) */
    int status = fileutil_publish(h->tmp, h->path);
    h->tmp[0] = '\0';
    if (status == FEM_OK) status = xdmf_write(h->xdmf_path, &v);
    release(hp);
    return status;
}
