/* A Mesh as one binary record: how the reading child hands its arrays back (through a memfd), how rank 0
 * shares it over MPI ranks and how the mesh cache keeps a .geo's mesh. What a reader fills is stored (nodes,
 * element blocks, physical groups); the child's record is finished (oriented, checked, its topology built) by
 * mesh_finish like a fresh mesh, so that one Gmsh may have damaged is checked before anything uses it. Rank
 * 0's and the cache's records are written after mesh_finish, with the topology it built (the flag
 * with_topology): such a record read back (the cache's with its CRC-32 matched) is the mesh as femto finished
 * it, and mesh_finish_stored counts its groups' elements only. Its topology's numbers are checked to lie in
 * range (a hand-made record must not make femto read outside an array).
 *
 * Layout, in native byte order (a record never leaves the machine that wrote it; a foreign one is refused by
 * its byte-order mark): BlobHeader; x [nnodes][3] double; node_tag [nnodes] int64; per block, cells then
 * facets: nodes [count][nnodes] fem_idx, entity [count] int32, tag [count] int64; per group a BlobGroup and
 * its entities [nentities] int32; with a topology, BlobTopology, vertex_of_node [nnodes], edges [nedges][2],
 * per cell block cell_edges [count][nedges of the shape] and in 3D cell_faces [count][nfacets of the shape]
 * (fem_idx), per facet block facet_cell [count] FacetCell. Every array is padded to 8 bytes. The CRC-32
 * covers all after the header. A mesh with a parent (Mesh.parent: the mesh before its last refinement) is
 * followed by the parent's own record (has_parent), whose nodes must be as many as the mesh's.
 */
#include "mesh_internal.h"

#include "fem/error.h"

#include <zlib.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BLOB_VERSION = 3, BLOB_BYTE_ORDER = 0x01020304 };
static const char blob_magic[8] = {'f', 'e', 'm', 't', 'o', 'M', 'S', 'H'};

typedef struct {
    char magic[8];
    uint32_t version, byte_order;
    int32_t dim, ncell_blocks, nfacet_blocks, ngroups;
    int64_t nnodes, payload; /* payload: bytes after the header */
    uint32_t has_crc, crc;
    int32_t has_topology, has_parent;
    int32_t gmsh_type[2 * MESH_MAX_BLOCKS]; /* cell blocks, then facet blocks */
    int64_t count[2 * MESH_MAX_BLOCKS];
} BlobHeader;

typedef struct {
    int32_t dim, tag, nentities, pad;
    char name[MESH_NAME_MAX];
} BlobGroup;

typedef struct {
    int64_t nvertices, nedges, nfaces, nboundary_facets;
} BlobTopology;

static int64_t padded(int64_t bytes) {
    return (bytes + 7) / 8 * 8;
}

/* The topology's arrays: per cell block its edges' and (3D) faces' counts per cell. */
static int64_t cell_edge_count(const MeshBlock *k) {
    return k->count * shape_nedges(k->shape);
}

static int64_t cell_face_count(int dim, const MeshBlock *k) {
    return dim == 3 ? k->count * shape_nfacets(k->shape) : 0;
}

/* ---- writing */

typedef struct {
    int fd, err, with_crc;
    uLong crc;
} Writer;

static void write_all(Writer *w, const void *data, int64_t bytes) {
    const char *p = data;
    for (int64_t left = bytes; left > 0 && !w->err;) {
        ssize_t n = write(w->fd, p, (size_t)(left < (1 << 30) ? left : (1 << 30)));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            w->err = n < 0 ? errno : EIO;
        else
            p += n, left -= n;
    }
}

/* One array: its bytes (into the CRC), then zeros up to the next multiple of 8. */
static void put(Writer *w, const void *data, int64_t bytes) {
    static const char zeros[8] = {0};
    write_all(w, data, bytes);
    if (w->with_crc && bytes > 0) w->crc = crc32_z(w->crc, data, (z_size_t)bytes);
    write_all(w, zeros, padded(bytes) - bytes);
}

static const MeshBlock *block_at(const Mesh *m, int b) {
    return b < m->ncell_blocks ? &m->cells[b] : &m->facets[b - m->ncell_blocks];
}

int mesh_blob_write(int fd, const Mesh *m, int with_crc, int with_topology) {
    with_topology = with_topology && m->has_topology;
    BlobHeader h = {.version = BLOB_VERSION,
                    .byte_order = BLOB_BYTE_ORDER,
                    .dim = m->dim,
                    .ncell_blocks = m->ncell_blocks,
                    .nfacet_blocks = m->nfacet_blocks,
                    .ngroups = m->ngroups,
                    .nnodes = m->nnodes,
                    .has_crc = with_crc != 0,
                    .has_topology = with_topology,
                    .has_parent = m->parent != NULL};
    const Topology *tp = &m->topo;
    const int64_t fi = (int64_t)sizeof(fem_idx);
    memcpy(h.magic, blob_magic, sizeof h.magic);
    h.payload = padded(24 * m->nnodes) + padded(8 * m->nnodes);
    for (int b = 0; b < m->ncell_blocks + m->nfacet_blocks; b++) {
        const MeshBlock *k = block_at(m, b);
        h.gmsh_type[b] = k->type->gmsh_type;
        h.count[b] = k->count;
        h.payload += padded((int64_t)sizeof(fem_idx) * k->count * k->nnodes) + padded(4 * k->count) +
                     padded(8 * k->count);
    }
    for (int g = 0; g < m->ngroups; g++)
        h.payload += (int64_t)sizeof(BlobGroup) + padded(4 * (int64_t)m->groups[g].nentities);
    if (with_topology) {
        h.payload += (int64_t)sizeof(BlobTopology) + padded(fi * m->nnodes) + padded(2 * fi * tp->nedges);
        for (int b = 0; b < m->ncell_blocks; b++)
            h.payload += padded(fi * cell_edge_count(&m->cells[b])) +
                         padded(fi * cell_face_count(m->dim, &m->cells[b]));
        for (int b = 0; b < m->nfacet_blocks; b++)
            h.payload += padded((int64_t)sizeof(FacetCell) * m->facets[b].count);
    }
    off_t start = lseek(fd, 0, SEEK_CUR);
    Writer w = {fd, start < 0 ? errno : 0, with_crc, crc32_z(0L, Z_NULL, 0)};
    write_all(&w, &h, sizeof h); /* again at the end, with the CRC */
    put(&w, m->x, 24 * m->nnodes);
    put(&w, m->node_tag, 8 * m->nnodes);
    for (int b = 0; b < m->ncell_blocks + m->nfacet_blocks; b++) {
        const MeshBlock *k = block_at(m, b);
        put(&w, k->nodes, (int64_t)sizeof(fem_idx) * k->count * k->nnodes);
        put(&w, k->entity, 4 * k->count);
        put(&w, k->tag, 8 * k->count);
    }
    for (int g = 0; g < m->ngroups; g++) {
        const PhysicalGroup *pg = &m->groups[g];
        BlobGroup bg = {pg->dim, pg->tag, pg->nentities, 0, {0}};
        memcpy(bg.name, pg->name, sizeof bg.name);
        put(&w, &bg, sizeof bg);
        put(&w, pg->entities, 4 * (int64_t)pg->nentities);
    }
    if (with_topology) {
        BlobTopology bt = {tp->nvertices, tp->nedges, tp->nfaces, tp->nboundary_facets};
        put(&w, &bt, sizeof bt);
        put(&w, tp->vertex_of_node, fi * m->nnodes);
        put(&w, tp->edges, 2 * fi * tp->nedges);
        for (int b = 0; b < m->ncell_blocks; b++) {
            put(&w, tp->cell_edges[b], fi * cell_edge_count(&m->cells[b]));
            put(&w, tp->cell_faces[b], fi * cell_face_count(m->dim, &m->cells[b]));
        }
        for (int b = 0; b < m->nfacet_blocks; b++)
            put(&w, tp->facet_cell[b], (int64_t)sizeof(FacetCell) * m->facets[b].count);
    }
    h.crc = (uint32_t)w.crc;
    if (!w.err && pwrite(fd, &h, sizeof h, start) != (ssize_t)sizeof h) w.err = errno ? errno : EIO;
    if (w.err) return fem_fail(FEM_ERR_INPUT, "%s", strerror(w.err));
    return m->parent ? mesh_blob_write(fd, m->parent, with_crc, with_topology) : FEM_OK;
}

/* ---- reading */

typedef struct {
    int fd;
    int64_t left; /* bytes the record may still use */
    uLong crc;
    int bad;   /* 1: truncated or unreadable */
    int check; /* 1: the record has a CRC to check */
} Reader;

/* Reads `bytes` (then the padding) into a new array of `bytes` (at least 1) bytes; NULL on failure. */
static void *take(Reader *r, int64_t bytes) {
    int64_t full = padded(bytes);
    char *out = r->bad || full > r->left ? NULL : malloc((size_t)(full ? full : 1));
    r->bad |= !out;
    for (int64_t got = 0; out && got < full;) {
        ssize_t n = read(r->fd, out + got, (size_t)(full - got < (1 << 30) ? full - got : (1 << 30)));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            free(out);
            out = NULL;
            r->bad = 1;
        } else {
            got += n;
        }
    }
    if (out) {
        r->left -= full;
        if (r->check) r->crc = crc32_z(r->crc, (const Bytef *)out, (z_size_t)bytes);
    }
    return out;
}

/* The header's promises: a known format, counts that fit the record, element types femto reads. */
static const char *check_header(const BlobHeader *h, int64_t bytes) {
    if (memcmp(h->magic, blob_magic, sizeof h->magic) != 0 || h->version != BLOB_VERSION ||
        h->byte_order != BLOB_BYTE_ORDER)
        return "it is not a femto mesh record of this version";
    if (h->dim < 2 || h->dim > 3 || h->ncell_blocks < 1 || h->ncell_blocks > MESH_MAX_BLOCKS ||
        h->nfacet_blocks < 0 || h->nfacet_blocks > MESH_MAX_BLOCKS || h->ngroups < 0 || h->nnodes < 0 ||
        h->payload < 0 || h->payload > bytes - (int64_t)sizeof *h)
        return "its header is inconsistent or it is truncated";
    if (h->nnodes > h->payload / 32 || h->ngroups > h->payload / (int64_t)sizeof(BlobGroup))
        return "its counts do not fit its size";
    for (int b = 0; b < h->ncell_blocks + h->nfacet_blocks; b++) {
        const MeshElementType *t = mesh_gmsh_type(h->gmsh_type[b]);
        int want = b < h->ncell_blocks ? h->dim : h->dim - 1;
        if (!t || shape_dim(t->shape) != want || h->count[b] < 0 ||
            h->count[b] > h->payload / (12 + 4 * t->nnodes))
            return "it lists an element block that femto does not read";
    }
    return NULL;
}

static void read_block(Reader *r, MeshBlock *k, int gmsh_type, int64_t count) {
    const MeshElementType *t = mesh_gmsh_type(gmsh_type);
    k->type = t;
    k->shape = t->shape;
    k->order = t->order;
    k->nnodes = t->nnodes;
    k->count = count;
    k->nodes = take(r, (int64_t)sizeof(fem_idx) * count * t->nnodes);
    k->entity = take(r, 4 * count);
    k->tag = take(r, 8 * count);
}

static void read_groups(Reader *r, Mesh *m) {
    m->groups = calloc((size_t)m->ngroups + 1, sizeof *m->groups);
    r->bad |= !m->groups;
    for (int g = 0; g < m->ngroups && !r->bad; g++) {
        BlobGroup *bg = take(r, sizeof *bg);
        if (!bg || bg->nentities < 0 || bg->nentities > r->left / 4 || bg->dim < 0 || bg->dim > 3) {
            r->bad = 1;
        } else {
            PhysicalGroup *pg = &m->groups[g];
            pg->dim = bg->dim;
            pg->tag = bg->tag;
            pg->nentities = bg->nentities;
            memcpy(pg->name, bg->name, sizeof pg->name);
            pg->name[sizeof pg->name - 1] = '\0';
            pg->entities = take(r, 4 * (int64_t)bg->nentities);
        }
        free(bg);
    }
}

/* n numbers in [lo, hi) */
static int in_range(const fem_idx *v, int64_t n, int64_t lo, int64_t hi) {
    int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n > 100000)
    for (int64_t i = 0; i < n; i++) bad += v[i] < lo || v[i] >= hi;
    return bad == 0;
}

/* The topology of a record written with one, its numbers checked to be in range. */
static void read_topology(Reader *r, Mesh *m) {
    BlobTopology *bt = take(r, sizeof *bt);
    Topology *tp = &m->topo;
    const int64_t fi = (int64_t)sizeof(fem_idx);
    if (!bt || bt->nvertices < 0 || bt->nvertices > m->nnodes || bt->nedges < 0 ||
        bt->nedges > r->left / (2 * fi) || bt->nfaces < 0 || bt->nboundary_facets < 0) {
        free(bt);
        r->bad = 1;
        return;
    }
    tp->nvertices = bt->nvertices, tp->nedges = bt->nedges, tp->nfaces = bt->nfaces;
    tp->nboundary_facets = bt->nboundary_facets;
    free(bt);
    tp->vertex_of_node = take(r, fi * m->nnodes);
    tp->edges = take(r, 2 * fi * tp->nedges);
    int ok = !r->bad && in_range(tp->vertex_of_node, m->nnodes, -1, tp->nvertices) &&
             in_range(tp->edges, 2 * tp->nedges, 0, tp->nvertices);
    for (int b = 0; b < m->ncell_blocks && ok; b++) {
        const MeshBlock *k = &m->cells[b];
        tp->cell_edges[b] = take(r, fi * cell_edge_count(k));
        tp->cell_faces[b] = m->dim == 3 ? take(r, fi * cell_face_count(m->dim, k)) : NULL;
        ok = !r->bad && in_range(tp->cell_edges[b], cell_edge_count(k), 0, tp->nedges) &&
             (m->dim != 3 || in_range(tp->cell_faces[b], cell_face_count(m->dim, k), 0, tp->nfaces));
    }
    for (int b = 0; b < m->nfacet_blocks && ok; b++) {
        const FacetCell *fc = tp->facet_cell[b] = take(r, (int64_t)sizeof(FacetCell) * m->facets[b].count);
        ok = !r->bad;
        for (int64_t c = 0; c < m->facets[b].count && ok; c++)
            ok = fc[c].block >= 0 && fc[c].block < m->ncell_blocks && fc[c].cell >= 0 &&
                 fc[c].cell < m->cells[fc[c].block].count && fc[c].facet >= 0 &&
                 fc[c].facet < shape_nfacets(m->cells[fc[c].block].shape);
    }
    r->bad |= !ok;
    m->has_topology = !r->bad;
}

/* Every element's nodes are nodes of the mesh. */
static int nodes_in_range(const Mesh *m) {
    for (int b = 0; b < m->ncell_blocks + m->nfacet_blocks; b++) {
        const MeshBlock *k = block_at(m, b);
        int64_t n = k->count * k->nnodes, bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n > 100000)
        for (int64_t i = 0; i < n; i++) bad += k->nodes[i] < 0 || k->nodes[i] >= m->nnodes;
        if (bad) return 0;
    }
    return 1;
}

int mesh_blob_read(int fd, int64_t bytes, Mesh *m) {
    BlobHeader h;
    /* everything but the path, so that a failure can free what was read */
    memset(&m->dim, 0, sizeof *m - offsetof(Mesh, dim));
    Reader r = {fd, bytes, 0, 0, 0};
    ssize_t n = read(fd, &h, sizeof h);
    if (n != (ssize_t)sizeof h) return fem_fail(FEM_ERR_INPUT, "it is truncated");
    const char *wrong = check_header(&h, bytes);
    if (wrong) return fem_fail(FEM_ERR_INPUT, "%s", wrong);
    r.left = h.payload;
    r.crc = crc32_z(0L, Z_NULL, 0);
    r.check = h.has_crc != 0;
    m->dim = h.dim;
    m->nnodes = h.nnodes;
    m->x = take(&r, 24 * h.nnodes);
    m->node_tag = take(&r, 8 * h.nnodes);
    m->ncell_blocks = h.ncell_blocks;
    m->nfacet_blocks = h.nfacet_blocks;
    for (int b = 0; b < h.ncell_blocks + h.nfacet_blocks && !r.bad; b++)
        read_block(&r, b < h.ncell_blocks ? &m->cells[b] : &m->facets[b - h.ncell_blocks], h.gmsh_type[b],
                   h.count[b]);
    m->ngroups = r.bad ? 0 : h.ngroups;
    if (!r.bad) read_groups(&r, m);
    if (!r.bad && h.has_topology) read_topology(&r, m);
    wrong = r.bad || r.left != 0          ? "it is truncated or its sizes are inconsistent"
            : h.has_crc && r.crc != h.crc ? "its checksum does not match its contents"
            : !nodes_in_range(m)          ? "an element refers to a node that it does not hold"
                                          : NULL;
    if (!wrong && h.has_parent) {
        Mesh *p = calloc(1, sizeof *p);
        if (!p) {
            mesh_destroy(m);
            return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a mesh record");
        }
        snprintf(p->path, sizeof p->path, "%s", m->path);
        m->parent = p;
        if (mesh_blob_read(fd, bytes - (int64_t)sizeof h - h.payload, p) != FEM_OK) {
            mesh_destroy(m); /* the parent's sentence stays the error */
            return FEM_ERR_INPUT;
        }
        if (p->nnodes != m->nnodes || p->dim != m->dim) wrong = "its coarser mesh does not match it";
    }
    if (!wrong) return FEM_OK;
    mesh_destroy(m);
    return fem_fail(FEM_ERR_INPUT, "%s", wrong);
}
