/* VTK XML UnstructuredGrid writer (.vtu, file version 2.2), the format ParaView reads best.
 *
 * All arrays go into one <AppendedData encoding="raw"> section after the XML, each as a UInt64 byte count and
 * its raw bytes, or, with compression, as VTK's zlib block layout: a header of UInt64 [number of blocks,
 * uncompressed block size, uncompressed size of the last block (0 when it is full), compressed size of each
 * block] followed by the deflated blocks. Raw binary keeps the file small and exact (no decimal round trip);
 * blocks let a reader inflate a piece at a time, and let this writer deflate them in parallel.
 *
 * Offsets in the XML are byte positions inside the appended section, so compressed arrays are deflated before
 * the XML is written; uncompressed ones are streamed straight from the frame. Field data (physical group
 * names, run metadata, units) are VTK string arrays, which the XML format stores as NUL-terminated strings.
 */
#include "output.h"

#include "fem/error.h"
#include "fileutil.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* VTK's own default block size; readers allocate one block at a time. Arrays of fewer blocks are deflated by
 * one thread: a parallel region costs more than it saves there, and much more when other processes hold the
 * cores (threads then spin at the region's barrier). */
enum {
    VTU_BLOCK = 32768,
    VTU_PARALLEL_BLOCKS = 16,
    VTU_MAX_ARRAYS = OUT_MAX_STRINGS + 1 + 2 * OUT_MAX_ARRAYS + 4,
};

/* zlib level 1: on floating-point data it gets most of level 6's ratio at several times the speed, and a
 * result file is written at every output step. */
static const int vtu_zlib_level = 1;

typedef struct {
    const char *tag;  /* "DataArray", or "Array" for strings */
    const char *type; /* VTK type name */
    const char *name;
    int ncomp;         /* 0: attribute not written */
    int64_t ntuples;   /* written for string arrays, which VTK cannot size otherwise */
    int tensor_names;  /* write ComponentName0..5 = XX YY ZZ XY YZ XZ */
    const void *bytes; /* the array's raw bytes */
    uint64_t nbytes;
    void *owned;           /* bytes built here (offsets, types, strings), freed after writing */
    unsigned char *packed; /* compressed form, header included */
    uint64_t packed_size;
    uint64_t offset; /* in the appended section */
} VtuArray;

typedef struct {
    int n, nfield; /* arrays, of which the first nfield are field data */
    VtuArray a[VTU_MAX_ARRAYS];
    char units_text[OUT_MAX_ARRAYS * 2][160];
} VtuArrays;

static VtuArray *add_array(VtuArrays *arrs, const char *tag, const char *type, const char *name, int ncomp)
{
    VtuArray *a = &arrs->a[arrs->n++];
    memset(a, 0, sizeof *a);
    a->tag = tag;
    a->type = type;
    a->name = name;
    a->ncomp = ncomp;
    return a;
}

static void *own(VtuArray *a, size_t bytes)
{
    a->owned = fem_malloc(bytes, "VTU array");
    a->bytes = a->owned;
    a->nbytes = bytes;
    return a->owned;
}

/* Concatenated NUL-terminated strings: how VTK's XML format stores a string array in binary. */
static int add_strings(VtuArrays *arrs, const char *name, int n, const char *const *values)
{
    VtuArray *a = add_array(arrs, "Array", "String", name, 0);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += strlen(values[i]) + 1;
    char *buf = own(a, total);
    if (!buf) return FEM_ERR_INTERNAL;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(values[i]) + 1;
        memcpy(buf, values[i], len);
        buf += len;
    }
    a->ntuples = n;
    return FEM_OK;
}

static void add_doubles(VtuArrays *arrs, const OutArray *src, int64_t n)
{
    VtuArray *a = add_array(arrs, "DataArray", "Float64", src->name, src->ncomp);
    a->bytes = src->data;
    a->nbytes = sizeof(double) * (uint64_t)(n * src->ncomp);
    a->tensor_names = src->ncomp == 6;
}

/* Every array of the frame in the order the XML lists them. */
static int collect_arrays(const OutFrame *f, VtuArrays *arrs)
{
    int64_t ncells = 0, nconn = 0;
    for (int b = 0; b < f->nblocks; b++) {
        ncells += f->blocks[b].ncells;
        nconn += f->blocks[b].ncells * f->blocks[b].nodes_per_cell;
    }
    for (int s = 0; s < f->nstrings; s++) {
        const char *value = f->string_value[s] ? f->string_value[s] : "";
        FEM_TRY(add_strings(arrs, f->string_name[s], 1, &value));
    }
    /* units travel as one string array "units", one "name [unit]" entry per array that has them */
    const char *units[2 * OUT_MAX_ARRAYS];
    int nunits = 0;
    for (int k = 0; k < f->npoint_arrays + f->ncell_arrays; k++) {
        const OutArray *src = k < f->npoint_arrays ? &f->point[k] : &f->cell[k - f->npoint_arrays];
        if (!src->units || !src->units[0]) continue;
        snprintf(arrs->units_text[nunits], sizeof arrs->units_text[0], "%s [%s]", src->name, src->units);
        units[nunits] = arrs->units_text[nunits];
        nunits++;
    }
    if (nunits) FEM_TRY(add_strings(arrs, "units", nunits, units));
    arrs->nfield = arrs->n;
    for (int k = 0; k < f->npoint_arrays; k++) add_doubles(arrs, &f->point[k], f->npoints);
    for (int k = 0; k < f->ncell_arrays; k++) add_doubles(arrs, &f->cell[k], ncells);

    VtuArray *pts = add_array(arrs, "DataArray", "Float64", "Points", 3);
    pts->bytes = f->x;
    pts->nbytes = sizeof(double) * 3 * (uint64_t)f->npoints;

    VtuArray *conn = add_array(arrs, "DataArray", "Int64", "connectivity", 0);
    if (f->nblocks == 1) {
        conn->bytes = f->blocks[0].conn;
        conn->nbytes = sizeof(int64_t) * (uint64_t)nconn;
    } else {
        int64_t *c = own(conn, sizeof(int64_t) * (size_t)nconn);
        if (!c) return FEM_ERR_INTERNAL;
        for (int b = 0; b < f->nblocks; b++) {
            size_t n = (size_t)(f->blocks[b].ncells * f->blocks[b].nodes_per_cell);
            memcpy(c, f->blocks[b].conn, sizeof(int64_t) * n);
            c += n;
        }
    }
    VtuArray *offs = add_array(arrs, "DataArray", "Int64", "offsets", 0);
    VtuArray *types = add_array(arrs, "DataArray", "UInt8", "types", 0);
    int64_t *o = own(offs, sizeof(int64_t) * (size_t)ncells);
    uint8_t *t = own(types, (size_t)ncells);
    if (!o || !t) return FEM_ERR_INTERNAL;
    int64_t end = 0;
    for (int b = 0; b < f->nblocks; b++)
        for (int64_t c = 0; c < f->blocks[b].ncells; c++) {
            end += f->blocks[b].nodes_per_cell;
            *o++ = end;
            *t++ = (uint8_t)f->blocks[b].vtk_type;
        }
    return FEM_OK;
}

/* VTK's compressed layout (see the file comment), blocks deflated in parallel. */
static int compress_array(VtuArray *a)
{
    uint64_t nblocks = (a->nbytes + VTU_BLOCK - 1) / VTU_BLOCK;
    uLong bound = compressBound(VTU_BLOCK);
    uint64_t header = sizeof(uint64_t) * (3 + nblocks);
    unsigned char *scratch = fem_malloc((size_t)(nblocks * bound), "compressed VTU array");
    uint64_t *sizes = fem_malloc(sizeof(uint64_t) * (size_t)(nblocks + 1), "compressed VTU array");
    if (!scratch || !sizes) {
        free(scratch);
        free(sizes);
        return FEM_ERR_INTERNAL;
    }
    int failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed) if (nblocks >= VTU_PARALLEL_BLOCKS)
    for (int64_t b = 0; b < (int64_t)nblocks; b++) {
        uint64_t start = (uint64_t)b * VTU_BLOCK;
        uint64_t len = a->nbytes - start < VTU_BLOCK ? a->nbytes - start : VTU_BLOCK;
        uLongf out = bound;
        if (compress2(scratch + b * bound, &out, (const Bytef *)a->bytes + start, (uLong)len,
                      vtu_zlib_level) != Z_OK)
            failed = 1;
        sizes[b] = out;
    }
    uint64_t total = header;
    for (uint64_t b = 0; !failed && b < nblocks; b++) total += sizes[b];
    if (!failed) a->packed = fem_malloc((size_t)total, "compressed VTU array");
    if (!failed && a->packed) {
        uint64_t *h = (uint64_t *)a->packed;
        h[0] = nblocks;
        h[1] = VTU_BLOCK;
        h[2] = a->nbytes % VTU_BLOCK;
        unsigned char *p = a->packed + header;
        for (uint64_t b = 0; b < nblocks; b++) {
            h[3 + b] = sizes[b];
            memcpy(p, scratch + b * bound, (size_t)sizes[b]);
            p += sizes[b];
        }
        a->packed_size = total;
    }
    free(scratch);
    free(sizes);
    if (failed) return fem_fail(FEM_ERR_INTERNAL, "zlib could not compress a VTU array");
    return a->packed ? FEM_OK : FEM_ERR_INTERNAL;
}

static void write_array_tag(FileOut *fo, const VtuArray *a, const char *indent)
{
    static const char *tensor[6] = {"XX", "YY", "ZZ", "XY", "YZ", "XZ"};
    fileout_printf(fo, "%s<%s type=\"%s\" Name=\"", indent, a->tag, a->type);
    fileout_xml_text(fo, a->name);
    fileout_printf(fo, "\"");
    if (a->ncomp) fileout_printf(fo, " NumberOfComponents=\"%d\"", a->ncomp);
    if (a->ntuples) fileout_printf(fo, " NumberOfTuples=\"%lld\"", (long long)a->ntuples);
    if (a->tensor_names)
        for (int c = 0; c < 6; c++) fileout_printf(fo, " ComponentName%d=\"%s\"", c, tensor[c]);
    fileout_printf(fo, " format=\"appended\" offset=\"%llu\"/>\n", (unsigned long long)a->offset);
}

/* The XML part; `a` runs through the arrays in collect_arrays' order. */
static void write_xml(FileOut *fo, const OutFrame *f, const VtuArrays *arrs, int compress)
{
    const uint16_t probe = 1;
    int little = *(const uint8_t *)&probe == 1;
    int64_t ncells = 0;
    for (int b = 0; b < f->nblocks; b++) ncells += f->blocks[b].ncells;
    const VtuArray *a = arrs->a;
    int nfield = arrs->nfield;

    fileout_printf(fo,
                   "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"2.2\" "
                   "byte_order=\"%s\" header_type=\"UInt64\"%s>\n  <UnstructuredGrid>\n",
                   little ? "LittleEndian" : "BigEndian",
                   compress ? " compressor=\"vtkZLibDataCompressor\"" : "");
    if (nfield) {
        fileout_printf(fo, "    <FieldData>\n");
        for (int k = 0; k < nfield; k++) write_array_tag(fo, a++, "      ");
        fileout_printf(fo, "    </FieldData>\n");
    }
    fileout_printf(fo, "    <Piece NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\">\n", (long long)f->npoints,
                   (long long)ncells);
    for (int section = 0; section < 2; section++) {
        int n = section == 0 ? f->npoint_arrays : f->ncell_arrays;
        const OutArray *first = section == 0 ? f->point : f->cell;
        const char *tag = section == 0 ? "PointData" : "CellData";
        if (!n) continue;
        /* the first scalar and vector become the active ones, which ParaView colours and glyphs by default */
        fileout_printf(fo, "      <%s", tag);
        for (int want = 1; want <= 3; want += 2)
            for (int k = 0; k < n; k++)
                if (first[k].ncomp == want) {
                    fileout_printf(fo, " %s=\"", want == 1 ? "Scalars" : "Vectors");
                    fileout_xml_text(fo, first[k].name);
                    fileout_printf(fo, "\"");
                    break;
                }
        fileout_printf(fo, ">\n");
        for (int k = 0; k < n; k++) write_array_tag(fo, a++, "        ");
        fileout_printf(fo, "      </%s>\n", tag);
    }
    fileout_printf(fo, "      <Points>\n");
    write_array_tag(fo, a++, "        ");
    fileout_printf(fo, "      </Points>\n      <Cells>\n");
    for (int k = 0; k < 3; k++) write_array_tag(fo, a++, "        ");
    fileout_printf(
        fo, "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _");
}

static int write_file(const char *path, const OutFrame *f, VtuArrays *arrs, int compress)
{
    uint64_t offset = 0;
    for (int k = 0; k < arrs->n; k++) {
        VtuArray *a = &arrs->a[k];
        if (compress) FEM_TRY(compress_array(a));
        a->offset = offset;
        offset += compress ? a->packed_size : sizeof(uint64_t) + a->nbytes;
    }
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    write_xml(&fo, f, arrs, compress);
    for (int k = 0; k < arrs->n; k++) {
        const VtuArray *a = &arrs->a[k];
        if (compress) {
            fileout_write(&fo, a->packed, (size_t)a->packed_size);
        } else {
            fileout_write(&fo, &a->nbytes, sizeof a->nbytes);
            fileout_write(&fo, a->bytes, (size_t)a->nbytes);
        }
    }
    fileout_printf(&fo, "\n  </AppendedData>\n</VTKFile>\n");
    return fileout_commit(&fo);
}

int vtu_write(const char *path, const OutFrame *f, int compress)
{
    FEM_TRY(outframe_check(f));
    VtuArrays *arrs = fem_calloc(1, sizeof *arrs, "VTU writer");
    if (!arrs) return FEM_ERR_INTERNAL;
    int status = collect_arrays(f, arrs);
    if (status == FEM_OK) status = write_file(path, f, arrs, compress);
    for (int k = 0; k < arrs->n; k++) {
        free(arrs->a[k].owned);
        free(arrs->a[k].packed);
    }
    free(arrs);
    return status;
}
