/* A rank's piece of an output frame as its VTU shows it, and the .pvtu file that joins the pieces of one
 * output time (see output.h).
 *
 * Over MPI ranks every rank holds and writes its own piece (its cells, and every point they touch: the ones
 * it owns and the ghosts its neighbours own, so that each piece is a complete grid ParaView can draw on its
 * own); rank 0 writes the .pvtu naming them. A point shared by several ranks appears in each of their pieces
 * with the same coordinates and values; the "global_node" point array (the one-process file's point number)
 * lets a reader merge the copies or map any value back, and the "rank" cell array shows the partition. */
#include "output.h"

#include "fem/error.h"
#include "fileutil.h"

#include <stdlib.h>
#include <string.h>

/* A one-component array of n rows added to arrays (NULL, nothing added, when there is no room or memory). */
static OutArray *add_piece_array(OutArray *arrays, int *count, const char *name, int64_t n) {
    double *data =
        *count < OUT_MAX_ARRAYS ? fem_malloc(sizeof(double) * (size_t)(n + 1), "an output piece") : NULL;
    if (!data) return NULL;
    OutArray *a = &arrays[(*count)++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->ncomp = 1;
    a->units = "";
    a->data = data;
    return a;
}

int outframe_piece(const OutFrame *in, const OutPart *part, OutFrame *out) {
    int64_t ncells = 0;
    for (int b = 0; b < in->nblocks; b++) ncells += in->blocks[b].ncells;
    if (in->npoints != part->npoints || ncells != part->ncells)
        return fem_fail(FEM_ERR_INTERNAL,
                        "output piece of rank %d: %lld points and %lld cells, its part %lld and %lld",
                        part->rank, (long long)in->npoints, (long long)ncells, (long long)part->npoints,
                        (long long)part->ncells);
    *out = *in;
    OutArray *g = add_piece_array(out->point, &out->npoint_arrays, "global_node", part->npoints);
    OutArray *r = g ? add_piece_array(out->cell, &out->ncell_arrays, "rank", part->ncells) : NULL;
    if (!r) {
        if (g) free(g->data);
        memset(out, 0, sizeof *out);
        return fem_fail(FEM_ERR_INTERNAL, "output piece: too many arrays, or out of host memory");
    }
    for (int64_t i = 0; i < part->npoints; i++) g->data[i] = (double)part->point_global[i];
    for (int64_t i = 0; i < part->ncells; i++) r->data[i] = part->rank;
    return FEM_OK;
}

void outframe_piece_release(OutFrame *out) {
    /* the two arrays outframe_piece added, the last of their kinds (the rest is the frame's) */
    free(out->point[out->npoint_arrays - 1].data);
    free(out->cell[out->ncell_arrays - 1].data);
    memset(out, 0, sizeof *out);
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
