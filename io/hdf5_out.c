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
 * HDF5's MPI-IO driver; idle, HDF5 here cannot do that (built without MPI), so rank 0 writes the whole file
 * alone from the whole frames every rank holds and the other ranks' calls do nothing. */
typedef struct {
    int mpio, idle, rank;
    Rows points, cells; /* the rows of point and cell arrays this rank owns */
    int packed;     /* an output time's point arrays hold the part's rows (OutPart.packed), its owned first */
    int64_t nowned; /* the part's owned points: the packed arrays' rows this rank writes */
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
    int64_t *parent; /* XDMF cell -> frame cell, when subcells repeat cell arrays; else NULL */
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

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Records the failure of `what` once. HDF5 reports no reason of its own worth a user's time, but a failing
 * system call leaves errno set (ENOSPC, EACCES, ...), which is the sentence the user needs. */
static void h5_check(H5Out *h, herr_t ret, const char *what)
{
    if (ret >= 0 || h->status) return;
    if (errno) h->status = fileutil_fail(h->path, errno);
    else
        h->status = fem_fail(FEM_ERR_INPUT, "cannot write results file '%s': the HDF5 library could not %s",
                             h->path, what);
}

static hid_t h5_group(H5Out *h, hid_t loc, const char *name)
{
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

static void h5_close_group(hid_t g)
{
    if (g >= 0) H5Gclose(g);
}

/* One scalar value: an attribute of `loc`, or (as_dataset) a dataset in it. */
static void h5_scalar(H5Out *h, hid_t loc, const char *name, hid_t type, const void *value, int as_dataset)
{
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
        if (as_dataset) H5Dclose(obj);
        else H5Aclose(obj);
    }
    H5Sclose(space);
}

/* A string (variable-length UTF-8, which h5py reads as str): an attribute, or (as_dataset) a dataset. */
static void h5_string(H5Out *h, hid_t loc, const char *name, const char *value, int as_dataset)
{
    if (as_dataset && h->ranks.mpio) return; /* rank 0 adds it after the collective close (H5Ranks) */
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    h5_scalar(h, loc, name, type, &value, as_dataset);
    H5Tclose(type);
}

static void h5_attr_string(H5Out *h, hid_t loc, const char *name, const char *value)
{
    h5_string(h, loc, name, value, 0);
}

static void h5_attr_int(H5Out *h, hid_t loc, const char *name, int64_t v)
{
    h5_scalar(h, loc, name, H5T_NATIVE_INT64, &v, 0);
}

/* One chunk as HDF5's shuffle + deflate filters would store it: the chunk (zero-padded past the data) with
 * byte k of every 8-byte value gathered into plane k, then zlib-deflated at level 1. Returns the packed size,
 * or 0 when zlib failed. */
static size_t pack_chunk(const unsigned char *src, size_t nbytes, size_t chunk_bytes, unsigned char *shuffled,
                         unsigned char *out, size_t out_cap)
{
    size_t nvals = chunk_bytes / 8;
    for (size_t i = 0; i < nvals; i++)
        for (int k = 0; k < 8; k++) shuffled[k * nvals + i] = 8 * i + k < nbytes ? src[8 * i + k] : 0;
    uLongf len = (uLongf)out_cap;
    return compress2(out, &len, shuffled, (uLong)chunk_bytes, 1) == Z_OK ? (size_t)len : 0;
}

/* The chunks of a [rows][cols] dataset of 8-byte values, filtered on OpenMP threads (HDF5 runs its filters
 * on one thread) and stored as they are by H5Dwrite_chunk; the file is the same as H5Dwrite would make. */
static void write_chunks(H5Out *h, hid_t ds, const void *data, hsize_t rows, hsize_t cols, hsize_t chunk_rows)
{
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
            sizes[c] = pack_chunk((const unsigned char *)data + first, n, chunk_bytes, shuffled, packed + c * cap, cap);
            failed |= sizes[c] == 0;
        }
        free(shuffled);
    }
    if (failed && !h->status) h->status = fem_fail(FEM_ERR_INTERNAL, "could not compress an HDF5 dataset");
    for (int64_t c = 0; c < nchunks && !h->status; c++) {
        hsize_t offset[2] = {(hsize_t)c * chunk_rows, 0};
        h5_check(h, H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset, sizes[c], packed + c * cap), "write a dataset");
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

static void h5_close_dataset(hid_t ds)
{
    if (ds >= 0) H5Dclose(ds);
}

/* Cell array `data` [ncells][ncomp] repeated onto the XDMF's subcells (NULL when out of memory). */
static double *expand_cells(H5Out *h, const double *data, int ncomp)
{
    double *out = fem_malloc(sizeof(double) * (size_t)(h->xdmf_ncells * ncomp), "XDMF cell array");
    if (!out) return NULL;
    for (int64_t c = 0; c < h->xdmf_ncells; c++)
        memcpy(&out[c * ncomp], &data[h->parent[c] * ncomp], sizeof(double) * ncomp);
    return out;
}

/* A symmetric tensor array [rows][6] from VTK's order XX YY ZZ XY YZ XZ to XDMF's XX XY XZ YY YZ ZZ. */
static double *tensor6_xdmf_order(const double *vtk, int64_t rows)
{
    static const int from_vtk[6] = {0, 3, 5, 1, 4, 2};
    double *out = fem_malloc(sizeof(double) * (size_t)(6 * rows + 1), "tensor array");
    for (int64_t r = 0; out && r < rows; r++)
        for (int k = 0; k < 6; k++) out[6 * r + k] = vtk[6 * r + from_vtk[k]];
    return out;
}

/* write_array with the array's rows and columns known and its data in the file's order (packed: this rank's
 * rows of a point array only, h5_dataset_rows). */
static hid_t write_array_as(H5Out *h, hid_t loc, const char *loc_path, const char *name, const OutArray *a,
                            int64_t rows, int cols, int cell, int packed, const char *xdmf_loc_path,
                            XdmfAttr *ref) {
    hid_t ds = h5_dataset_rows(h, loc, name, H5T_NATIVE_DOUBLE, rows, cols, a->data,
                               cell ? &h->ranks.cells : &h->ranks.points, packed);
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", a->name);
    ref->cell = cell;
    ref->ncomp = a->ncomp;
    ref->rows = rows;
    snprintf(ref->dataset, sizeof ref->dataset, "%s/%s", loc_path, name);
    if (cell && h->parent && !h->status) {
        double *copy = expand_cells(h, a->data, a->ncomp);
        if (!copy) {
            h->status = FEM_ERR_INTERNAL;
            return ds;
        }
        hid_t g = h5_group(h, h->file, xdmf_loc_path);
        h5_close_dataset(h5_dataset(h, g, name, H5T_NATIVE_DOUBLE, h->xdmf_ncells, cols, copy, NULL));
        h5_close_group(g);
        free(copy);
        ref->rows = h->xdmf_ncells;
        snprintf(ref->dataset, sizeof ref->dataset, "%s/%s", xdmf_loc_path, name);
    }
    return ds;
}

/* Writes one point or cell array at `loc`/`name` and, when the XDMF cannot use it as it is, the copy it needs
 * under `xdmf_loc` (same name); fills the XDMF's reference `ref`. packed: a point array holding this rank's
 * part's rows (OutPart.packed), its owned ones first, of which it writes those. */
static hid_t write_array(H5Out *h, hid_t loc, const char *loc_path, const char *name, const OutArray *a,
                         int cell, int packed, const char *xdmf_loc_path, XdmfAttr *ref) {
    int64_t rows = cell ? h->ncells : h->npoints;
    int cols = a->ncomp == 1 ? 0 : a->ncomp;
    OutArray stored = *a; /* the array in the order the file keeps */
    double *tensor = NULL;
    int64_t held = packed ? h->ranks.nowned : rows; /* the rows in memory */
    if (a->ncomp == 6 && held > 0 && !h->status) {
        stored.data = tensor = tensor6_xdmf_order(a->data, held);
        if (!tensor) h->status = FEM_ERR_INTERNAL;
    }
    hid_t ds = write_array_as(h, loc, loc_path, name, &stored, rows, cols, cell, packed, xdmf_loc_path, ref);
    free(tensor);
    return ds;
}

static void array_attributes(H5Out *h, hid_t obj, const OutArray *a, int cell)
{
    h5_attr_string(h, obj, "center", cell ? "Cell" : "Node");
    if (a->units && a->units[0]) h5_attr_string(h, obj, "units", a->units);
    if (a->ncomp == 6) h5_attr_string(h, obj, "components", "XX XY XZ YY YZ ZZ");
}

/* HDF5 link names cannot hold '/' (it would make groups) or be "." */
static int check_name(const char *name)
{
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0)
        return fem_fail(FEM_ERR_INTERNAL, "output array name '%s' cannot be an HDF5 name", name);
    return FEM_OK;
}

/* ---------------------------------------------------------------- open */

static void rows_free(Rows *r) {
    free(r->start);
    free(r->count);
    memset(r, 0, sizeof *r);
}

/* ids[0..n) (increasing) as runs of consecutive rows, each shifted by -first and kept when in [0, limit). */
static int rows_of(const int64_t *ids, int64_t n, int64_t first, int64_t limit, Rows *r) {
    memset(r, 0, sizeof *r);
    r->start = fem_malloc(sizeof(int64_t) * (size_t)(n + 1), "HDF5 row selection");
    r->count = fem_malloc(sizeof(int64_t) * (size_t)(n + 1), "HDF5 row selection");
    if (!r->start || !r->count) return rows_free(r), FEM_ERR_INTERNAL;
    for (int64_t k = 0; k < n; k++) {
        int64_t row = ids[k] - first;
        if (row < 0 || row >= limit) continue;
        if (r->n && r->start[r->n - 1] + r->count[r->n - 1] == row)
            r->count[r->n - 1]++;
        else
            r->start[r->n] = row, r->count[r->n++] = 1;
    }
    return FEM_OK;
}

/* The runs of `cells` inside block rows [first, first + n), counted from the block's first row. */
static int block_rows(const Rows *cells, int64_t first, int64_t n, Rows *out) {
    int64_t total = 0;
    for (int64_t k = 0; k < cells->n; k++) total += cells->count[k];
    int64_t *ids = fem_malloc(sizeof(int64_t) * (size_t)(total + 1), "HDF5 row selection");
    if (!ids) return FEM_ERR_INTERNAL;
    for (int64_t k = 0, i = 0; k < cells->n; k++)
        for (int64_t c = 0; c < cells->count[k]; c++) ids[i++] = cells->start[k] + c;
    int status = rows_of(ids, total, first, n, out);
    free(ids);
    return status;
}

static void write_mesh(H5Out *h, const OutFrame *mesh)
{
    hid_t g = h5_group(h, h->file, "/mesh");
    h5_close_dataset(
        h5_dataset(h, g, "points", H5T_NATIVE_DOUBLE, mesh->npoints, 3, mesh->x, &h->ranks.points));
    int64_t first = 0;
    for (int b = 0; b < mesh->nblocks; b++) {
        const OutCellBlock *blk = &mesh->blocks[b];
        char name[64];
        snprintf(name, sizeof name, "%s_p%d", shape_name(blk->shape), blk->order);
        for (int k = 2; !h->status && H5Lexists(g, name, H5P_DEFAULT) > 0; k++)
            snprintf(name, sizeof name, "%s_p%d_%d", shape_name(blk->shape), blk->order, k);
        hid_t bg = h5_group(h, g, name);
        Rows sel = {0};
        if (h->ranks.mpio && !h->status) h->status = block_rows(&h->ranks.cells, first, blk->ncells, &sel);
        h5_close_dataset(h5_dataset(h, bg, "connectivity", H5T_NATIVE_INT64, blk->ncells, blk->nodes_per_cell,
                                    blk->conn, &sel));
        rows_free(&sel);
        h5_attr_int(h, bg, "vtk_type", blk->vtk_type);
        h5_attr_int(h, bg, "order", blk->order);
        h5_attr_int(h, bg, "first_cell", first);
        h5_attr_int(h, bg, "ncells", blk->ncells);
        h5_attr_string(h, bg, "shape", shape_name(blk->shape));
        h5_close_group(bg);
        if (b == 0 && !h->topology_dataset[0]) /* prepare_xdmf found block 0 fit to serve as it is */
            snprintf(h->topology_dataset, sizeof h->topology_dataset, "/mesh/%s/connectivity", name);
        first += blk->ncells;
    }
    for (int k = 0; k < mesh->npoint_arrays + mesh->ncell_arrays; k++) {
        int cell = k >= mesh->npoint_arrays;
        const OutArray *a = cell ? &mesh->cell[k - mesh->npoint_arrays] : &mesh->point[k];
        const char *path = cell ? "/mesh/cell_data" : "/mesh/point_data";
        if (!h->status) h->status = check_name(a->name);
        hid_t ag = h5_group(h, h->file, path);
        hid_t ds =
            write_array(h, ag, path, a->name, a, cell, 0, "/xdmf/mesh_cell_data", &h->mesh[h->nmesh++]);
        array_attributes(h, ds, a, cell);
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

/* The XDMF's view of the mesh (see xdmf.h): order >= 3 split into linear subcells, order 2 kept, except that
 * quadratic hexahedra are split too when the mesh has several blocks: ParaView 5.11 misreads a Hexahedron_27
 * inside a Mixed topology unless it is the very last cell (it crashes on two). */
static int prepare_xdmf(H5Out *h, const OutFrame *mesh)
{
    OutFrame view;
    int split_block[OUT_MAX_BLOCKS];
    for (int b = 0; b < mesh->nblocks; b++) {
        const OutCellBlock *blk = &mesh->blocks[b];
        split_block[b] = blk->order > 2 || (mesh->nblocks > 1 && blk->shape == SHAPE_HEX && blk->order == 2);
    }
    FEM_TRY(outframe_subdivide_blocks(mesh, split_block, &view));
    int status = xdmf_topology(&view, &h->topology), split = 0;
    h->xdmf_ncells = 0;
    for (int b = 0; b < view.nblocks; b++) {
        split |= view.blocks[b].ncells != mesh->blocks[b].ncells;
        h->xdmf_ncells += view.blocks[b].ncells;
    }
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

int h5out_parallel(void) {
#if defined(H5_HAVE_PARALLEL) && defined(FEMTO_HAVE_MPI)
    return 1;
#else
    return 0;
#endif
}

/* How this rank takes part (H5Ranks) in a file of a run split over MPI ranks. */
static int ranks_setup(H5Out *h, const OutPart *part, const char *problem_text, const OutFrame *mesh) {
    H5Ranks *k = &h->ranks;
    k->rank = part->rank;
    k->mpio = h5out_parallel();
    k->idle = !k->mpio && part->rank != 0;
    if (!k->mpio) return FEM_OK;
    h->raw = 1; /* see the file comment: contiguous datasets over MPI ranks */
    FEM_TRY(rows_of(part->point_global, part->nowned, 0, h->npoints, &k->points));
    k->packed = part->packed;
    k->nowned = part->nowned;
    FEM_TRY(rows_of(part->cell_global, part->ncells, 0, h->ncells, &k->cells));
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
    if (h->ranks.idle && !h->status) return FEM_OK;
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
    if (!h->status) h->status = prepare_xdmf(h, mesh);
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

static int grow(void **p, int *cap, int need, size_t size)
{
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
static int mesh_has(const H5Out *h, const char *name, int cell)
{
    for (int k = 0; k < h->nmesh; k++)
        if (h->mesh[k].cell == cell && strcmp(h->mesh[k].name, name) == 0) return 1;
    return 0;
}

static int write_step(H5Out *h, double time, const OutFrame *fields)
{
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
        hid_t ds = write_array(h, g, path, step_name, a, cell, !cell && h->ranks.packed, xdmf_path,
                               &h->attrs[h->nattrs++]);
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

int h5out_write_step(H5Out *h, double time, const OutFrame *fields)
{
    if (!h) return fem_fail(FEM_ERR_INTERNAL, "h5out_write_step: no open file");
    if (h->status) return h->status;
    if (h->ranks.idle) return FEM_OK;
    /* a failed step leaves the file unusable for the XDMF: later calls repeat the first failure */
    int status = write_step(h, time, fields);
    if (status && !h->status) h->status = status;
    return status;
}

/* ---------------------------------------------------------------- close */

static void release(H5Out **hp)
{
    H5Out *h = *hp;
    if (h->file >= 0) H5Fclose(h->file);
    H5Ranks *k = &h->ranks;
    rows_free(&k->points);
    rows_free(&k->cells);
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

void h5out_abort(H5Out **hp)
{
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

int h5out_close(H5Out **hp)
{
    if (!hp || !*hp) return FEM_OK;
    H5Out *h = *hp;
    if (h->ranks.idle) {
        release(hp);
        return FEM_OK;
    }
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
