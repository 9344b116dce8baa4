/* XDMF3 topology and XML for the HDF5 results file: see xdmf.h.
 *
 * The XML is a temporal collection with one uniform grid per output time; each grid points at the same mesh
 * datasets and at that time's field datasets, so the mesh is stored once however many steps there are. Facts
 * of the format used here: cell type names and the ids that prefix each cell of a Mixed topology (Polyline
 * also carries its node count). ParaView's XDMF3 reader hands XDMF's quadratic cells to VTK's quadratic cells
 * unchanged (Hexahedron_27 becomes VTK's triquadratic hexahedron), and those number their nodes as VTK's
 * Lagrange cells of order 2 in file version 2.2: corners, edges (the hexahedron's vertical ones at (x,y) =
 * (0,0) (1,0) (1,1) (0,1)), faces x=0, x=1, y=0, y=1, z=0, z=1, centre. So the VTK order serves XDMF as it
 * is; tests/io proves it for every cell with ParaView's reader and a curved cell. */
#include "xdmf.h"

#include "fem/error.h"
#include "fileutil.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int mixed_id;
    int counted; /* Mixed lists the node count after the id (Polyline) */
} XdmfCellType;

/* [order - 1][shape]: XDMF's cell of that shape and order */
static const XdmfCellType xdmf_cells[2][6] = {
    {{"", 0, 0},
     {"Polyline", 2, 1},
     {"Triangle", 4, 0},
     {"Quadrilateral", 5, 0},
     {"Tetrahedron", 6, 0},
     {"Hexahedron", 9, 0}},
    {{"", 0, 0},
     {"Edge_3", 34, 0},
     {"Triangle_6", 36, 0},
     {"Quadrilateral_9", 35, 0},
     {"Tetrahedron_10", 38, 0},
     {"Hexahedron_27", 50, 0}},
};

static const XdmfCellType *cell_type(const OutCellBlock *b) {
    return &xdmf_cells[b->order - 1][b->shape];
}

int xdmf_topology_header(const OutFrame *f, XdmfTopology *t) {
    memset(t, 0, sizeof *t);
    for (int b = 0; b < f->nblocks; b++)
        if (f->blocks[b].order > 2)
            return fem_fail(FEM_ERR_INTERNAL, "XDMF has no cell of order %d", f->blocks[b].order);
    if (f->nblocks == 0) return fem_fail(FEM_ERR_INTERNAL, "an XDMF mesh needs at least one cell block");
    if (f->nblocks == 1) {
        const OutCellBlock *b = &f->blocks[0];
        const XdmfCellType *ct = cell_type(b);
        snprintf(t->type, sizeof t->type, "%s", ct->name);
        t->nelem = b->ncells;
        t->nodes_per_elem = ct->counted ? b->nodes_per_cell : 0;
        t->rank = 2;
        t->dims[0] = b->ncells;
        t->dims[1] = b->nodes_per_cell;
        return FEM_OK;
    }
    int64_t len = 0;
    for (int b = 0; b < f->nblocks; b++) {
        len += f->blocks[b].ncells * xdmf_cell_length(&f->blocks[b]);
        t->nelem += f->blocks[b].ncells;
    }
    snprintf(t->type, sizeof t->type, "Mixed");
    t->rank = 1;
    t->dims[0] = len;
    return FEM_OK;
}

int xdmf_cell_length(const OutCellBlock *b) {
    return 1 + cell_type(b)->counted + b->nodes_per_cell;
}

int xdmf_cell_entries(const OutCellBlock *b, const int64_t *nodes, int64_t *out) {
    const XdmfCellType *ct = cell_type(b);
    int n = 0;
    out[n++] = ct->mixed_id;
    if (ct->counted) out[n++] = b->nodes_per_cell;
    memcpy(&out[n], nodes, sizeof(int64_t) * (size_t)b->nodes_per_cell);
    return n + b->nodes_per_cell;
}

int xdmf_topology(const OutFrame *f, XdmfTopology *t) {
    FEM_TRY(xdmf_topology_header(f, t));
    if (t->rank == 2) return FEM_OK;
    t->conn = fem_malloc(sizeof(int64_t) * (size_t)t->dims[0], "XDMF topology");
    if (!t->conn) return FEM_ERR_INTERNAL;
    int64_t *out = t->conn;
    for (int b = 0; b < f->nblocks; b++) {
        const OutCellBlock *blk = &f->blocks[b];
        for (int64_t c = 0; c < blk->ncells; c++)
            out += xdmf_cell_entries(blk, &blk->conn[c * blk->nodes_per_cell], out);
    }
    return FEM_OK;
}

void xdmf_topology_destroy(XdmfTopology *t) {
    free(t->conn);
    memset(t, 0, sizeof *t);
}

static void write_data_item(FileOut *fo, const char *h5, const char *dataset, int rank, int64_t rows,
                            int cols, const char *number_type, const char *indent) {
    fileout_printf(fo, "%s<DataItem Dimensions=\"%lld", indent, (long long)rows);
    if (rank == 2) fileout_printf(fo, " %d", cols);
    fileout_printf(fo, "\" NumberType=\"%s\" Precision=\"8\" Format=\"HDF\">", number_type);
    fileout_xml_text(fo, h5);
    fileout_printf(fo, ":");
    fileout_xml_text(fo, dataset);
    fileout_printf(fo, "</DataItem>\n");
}

static void write_attribute(FileOut *fo, const char *h5, const XdmfAttr *a, const char *indent) {
    const char *type = a->ncomp == 1   ? "Scalar"
                       : a->ncomp == 3 ? "Vector"
                       : a->ncomp == 6 ? "Tensor6"
                       : a->ncomp == 9 ? "Tensor"
                                       : "Matrix";
    char inner[32];
    snprintf(inner, sizeof inner, "%s  ", indent);
    fileout_printf(fo, "%s<Attribute Name=\"", indent);
    fileout_xml_text(fo, a->name);
    fileout_printf(fo, "\" Center=\"%s\" AttributeType=\"%s\">\n", a->cell ? "Cell" : "Node", type);
    write_data_item(fo, h5, a->dataset, a->ncomp == 1 ? 1 : 2, a->rows, a->ncomp, "Float", inner);
    fileout_printf(fo, "%s</Attribute>\n", indent);
}

/* One uniform grid: the mesh, the attributes of every step, and those of this step. */
static void write_grid(FileOut *fo, const XdmfView *v, int step, const char *indent) {
    const XdmfTopology *t = v->topology;
    char in1[32], in2[32];
    snprintf(in1, sizeof in1, "%s  ", indent);
    snprintf(in2, sizeof in2, "%s    ", indent);
    fileout_printf(fo, "%s<Grid Name=\"step %d\" GridType=\"Uniform\">\n", indent, step);
    if (step >= 0) fileout_printf(fo, "%s<Time Value=\"%.17g\"/>\n", in1, v->times[step]);
    fileout_printf(fo, "%s<Topology TopologyType=\"%s\" NumberOfElements=\"%lld\"", in1, t->type,
                   (long long)t->nelem);
    if (t->nodes_per_elem) fileout_printf(fo, " NodesPerElement=\"%d\"", t->nodes_per_elem);
    fileout_printf(fo, ">\n");
    write_data_item(fo, v->h5, v->topology_dataset, t->rank, t->dims[0], (int)t->dims[1], "Int", in2);
    fileout_printf(fo, "%s</Topology>\n%s<Geometry GeometryType=\"XYZ\">\n", in1, in1);
    write_data_item(fo, v->h5, "/mesh/points", 2, v->npoints, 3, "Float", in2);
    fileout_printf(fo, "%s</Geometry>\n", in1);
    for (int a = 0; a < v->nmesh; a++) write_attribute(fo, v->h5, &v->mesh[a], in1);
    if (step >= 0)
        for (int a = v->step_first[step]; a < v->step_first[step + 1]; a++)
            write_attribute(fo, v->h5, &v->attrs[a], in1);
    fileout_printf(fo, "%s</Grid>\n", indent);
}

int xdmf_write(const char *path, const XdmfView *v) {
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    fileout_printf(&fo, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n");
    if (v->nsteps == 0) {
        write_grid(&fo, v, -1, "    ");
    } else {
        fileout_printf(
            &fo, "    <Grid Name=\"time series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
        for (int s = 0; s < v->nsteps; s++) write_grid(&fo, v, s, "      ");
        fileout_printf(&fo, "    </Grid>\n");
    }
    fileout_printf(&fo, "  </Domain>\n</Xdmf>\n");
    return fileout_commit(&fo);
}
