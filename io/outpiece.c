/* A rank's piece of an output frame and the .pvtu file that joins the pieces of one output time (see
 * output.h).
 *
 * Over MPI ranks every rank writes its own VTU (its cells, and every point they touch: the ones it owns and
 * the ghosts its neighbours own, so that each piece is a complete grid ParaView can draw on its own); rank 0
 * writes the .pvtu naming them. A point shared by several ranks appears in each of their pieces with the
 * same coordinates and values; the "global_node" point array (the one-process file's point number) lets a
 * reader merge the copies or map any value back, and the "rank" cell array shows the partition. */
#include "output.h"

#include "fem/error.h"
#include "fileutil.h"

#include <stdlib.h>
#include <string.h>

/* Rows `rows[0..n)` of the [*][ncomp] array `src` (malloc'ed). */
static double *take_rows(const double *src, int ncomp, int64_t n, const int64_t *rows) {
    double *out = fem_malloc(sizeof(double) * (size_t)(n * ncomp + 1), "an output piece");
    for (int64_t i = 0; out && i < n; i++)
        memcpy(&out[i * ncomp], &src[rows[i] * ncomp], sizeof(double) * ncomp);
    return out;
}

/* The first n rows of the [*][ncomp] array src (malloc'ed). */
static double *copy_rows(const double *src, int ncomp, int64_t n) {
    double *out = fem_malloc(sizeof(double) * (size_t)(n * ncomp + 1), "an output piece");
    if (out) memcpy(out, src, sizeof(double) * (size_t)(n * ncomp));
    return out;
}

static OutArray *add_piece_array(OutArray *arrays, int *count, const char *name, int64_t n) {
    if (*count >= OUT_MAX_ARRAYS) return NULL;
    OutArray *a = &arrays[(*count)++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->ncomp = 1;
    a->units = "";
    a->data = fem_malloc(sizeof(double) * (size_t)(n + 1), "an output piece");
    return a->data ? a : NULL;
}

/* The piece's cell blocks: the cells of part in each block, connectivity through local[] (frame point ->
 * piece point). */
static int piece_blocks(const OutFrame *in, const OutPart *part, const int64_t *local, OutFrame *out) {
    int64_t first = 0, k = 0;
    for (int b = 0; b < in->nblocks; b++) {
        const OutCellBlock *ib = &in->blocks[b];
        int64_t start = k;
        while (k < part->ncells && part->cell_global[k] < first + ib->ncells) k++;
        if (k > start) {
            OutCellBlock *ob = &out->blocks[out->nblocks++];
            *ob = *ib;
            ob->ncells = k - start;
            int npc = ib->nodes_per_cell;
            ob->conn = fem_malloc(sizeof(int64_t) * (size_t)(ob->ncells * npc), "an output piece");
            if (!ob->conn) return FEM_ERR_INTERNAL;
            for (int64_t c = 0; c < ob->ncells; c++)
                for (int v = 0; v < npc; v++) {
                    int64_t g = ib->conn[(part->cell_global[start + c] - first) * npc + v];
                    ob->conn[c * npc + v] = local[g];
                    if (local[g] < 0)
                        return fem_fail(FEM_ERR_INTERNAL,
                                        "output piece of rank %d lacks point %lld of its cells", part->rank,
                                        (long long)g);
                }
        }
        first += ib->ncells;
    }
    if (k != part->ncells) return fem_fail(FEM_ERR_INTERNAL, "output piece: cells not in increasing order");
    return FEM_OK;
}

/* Point and cell arrays of the piece, and the two that map it back to the whole frame. */
static int piece_arrays(const OutFrame *in, const OutPart *part, OutFrame *out) {
    for (int a = 0; a < in->npoint_arrays + in->ncell_arrays; a++) {
        int cell = a >= in->npoint_arrays;
        const OutArray *ia = cell ? &in->cell[a - in->npoint_arrays] : &in->point[a];
        OutArray *oa = cell ? &out->cell[out->ncell_arrays++] : &out->point[out->npoint_arrays++];
        *oa = *ia;
        if (cell)
            oa->data = take_rows(ia->data, ia->ncomp, part->ncells, part->cell_global);
        else if (part->packed) /* the piece's rows already */
            oa->data = copy_rows(ia->data, ia->ncomp, part->npoints);
        else
            oa->data = take_rows(ia->data, ia->ncomp, part->npoints, part->point_global);
        if (!oa->data) return FEM_ERR_INTERNAL;
    }
    OutArray *g = add_piece_array(out->point, &out->npoint_arrays, "global_node", part->npoints);
    OutArray *r = add_piece_array(out->cell, &out->ncell_arrays, "rank", part->ncells);
    if (!g || !r) return fem_fail(FEM_ERR_INTERNAL, "output piece: too many arrays, or out of host memory");
    for (int64_t i = 0; i < part->npoints; i++) g->data[i] = (double)part->point_global[i];
    for (int64_t i = 0; i < part->ncells; i++) r->data[i] = part->rank;
    return FEM_OK;
}

static int piece_build(const OutFrame *in, const OutPart *part, OutFrame *out, int64_t *local) {
    for (int64_t i = 0; i < in->npoints; i++) local[i] = -1;
    for (int64_t i = 0; i < part->npoints; i++) {
        if (part->point_global[i] < 0 || part->point_global[i] >= in->npoints)
            return fem_fail(FEM_ERR_INTERNAL, "output piece: point %lld out of range",
                            (long long)part->point_global[i]);
        local[part->point_global[i]] = i;
    }
    out->npoints = part->npoints;
    if (!(out->x = take_rows(in->x, 3, part->npoints, part->point_global))) return FEM_ERR_INTERNAL;
    FEM_TRY(piece_blocks(in, part, local, out));
    FEM_TRY(piece_arrays(in, part, out));
    for (int s = 0; s < in->nstrings; s++) {
        snprintf(out->string_name[s], sizeof out->string_name[s], "%s", in->string_name[s]);
        out->string_value[s] = strdup(in->string_value[s] ? in->string_value[s] : "");
        if (!out->string_value[s]) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        out->nstrings++;
    }
    return FEM_OK;
}

int outframe_piece(const OutFrame *in, const OutPart *part, OutFrame *out) {
    memset(out, 0, sizeof *out);
    out->dim = in->dim;
    int64_t *local = fem_malloc(sizeof(int64_t) * (size_t)(in->npoints + 1), "an output piece");
    int status = local ? piece_build(in, part, out, local) : FEM_ERR_INTERNAL;
    free(local);
    if (status) outframe_destroy(out);
    return status;
}

static void pvtu_arrays(FileOut *fo, const char *tag, const OutArray *arrays, int n) {
    static const char *tensor[6] = {"XX", "YY", "ZZ", "XY", "YZ", "XZ"};
    if (!n) return;
    fileout_printf(fo, "    <%s>\n", tag);
    for (int k = 0; k < n; k++) {
        fileout_printf(fo, "      <PDataArray type=\"Float64\" Name=\"");
        fileout_xml_text(fo, arrays[k].name);
        fileout_printf(fo, "\" NumberOfComponents=\"%d\"", arrays[k].ncomp);
        if (arrays[k].ncomp == 6)
            for (int c = 0; c < 6; c++) fileout_printf(fo, " ComponentName%d=\"%s\"", c, tensor[c]);
        fileout_printf(fo, "/>\n");
    }
    fileout_printf(fo, "    </%s>\n", tag);
}

int pvtu_write(const char *path, const OutFrame *piece, int npieces, char *const *files) {
    const uint16_t probe = 1;
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    fileout_printf(
        &fo,
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"%s\" "
        "header_type=\"UInt64\">\n  <PUnstructuredGrid GhostLevel=\"0\">\n",
        *(const uint8_t *)&probe == 1 ? "LittleEndian" : "BigEndian");
    pvtu_arrays(&fo, "PPointData", piece->point, piece->npoint_arrays);
    pvtu_arrays(&fo, "PCellData", piece->cell, piece->ncell_arrays);
    fileout_printf(
        &fo, "    <PPoints>\n      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n"
             "    </PPoints>\n");
    for (int i = 0; i < npieces; i++) {
        fileout_printf(&fo, "    <Piece Source=\"");
        fileout_xml_text(&fo, files[i]);
        fileout_printf(&fo, "\"/>\n");
    }
    fileout_printf(&fo, "  </PUnstructuredGrid>\n</VTKFile>\n");
    return fileout_commit(&fo);
}
