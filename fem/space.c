/* Dof numbering of H1 spaces (see space.h). */
#include "space.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

/* Position of a node inside its entity, in the entity's canonical frame (see space.h). corner_vertex holds
 * the global vertex numbers of the element's corners. With local_interior, interior nodes of the element
 * itself keep their local order (no other element sees them); a facet's interior is shared, so facets pass 0.
 * Returns -1 for a vertex (nothing to place). */
static int64_t position_at_site(Shape s, int p, const int lat[3], const LatticeSite *sp_site,
                                const fem_idx *corner_vertex, int local_interior) {
    LatticeSite site = *sp_site;
    int d = shape_dim(s);
    if (site.dim == 0) return -1;
    if (site.dim == d && local_interior) { /* element interior: shift the lattice by one and number it as a
                                              lattice of lower order */
        int inner[3] = {lat[0] - 1, lat[1] - 1, lat[2] - 1};
        return lattice_index(s, shape_is_tensor(s) ? p - 2 : p - d - 1, inner);
    }
    fem_idx g[8];
    for (int i = 0; i < site.ncorners; i++) g[i] = corner_vertex[site.corner[i]];
    if (site.dim == 1) {
        int k = shape_is_tensor(s) ? site.axis[0] : site.count[1]; /* steps from corner[0] */
        if (g[0] > g[1]) k = p - k;
        return k - 1;
    }
    if (!shape_is_tensor(s)) { /* triangle face: counts in increasing vertex-number order */
        int order[3] = {0, 1, 2};
        for (int i = 1; i < 3; i++)
            for (int j = i; j > 0 && g[order[j - 1]] > g[order[j]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        int inner[3] = {site.count[order[1]] - 1, site.count[order[2]] - 1, 0};
        return lattice_index(SHAPE_TRI, p - 3, inner);
    }
    /* quadrilateral face: corners (0,0) (1,0) (0,1) (1,1) in the face's (u, v) frame */
    int m = 0;
    for (int i = 1; i < 4; i++)
        if (g[i] < g[m]) m = i;
    int u = site.axis[0], v = site.axis[1];
    if (m & 1) u = p - u;
    if (m & 2) v = p - v;
    int a = u, b = v;
    if (g[m ^ 2] < g[m ^ 1]) a = v, b = u; /* first axis towards the lower-numbered neighbour */
    return (int64_t)(a - 1) + (int64_t)(p - 1) * (b - 1);
}

int64_t space_canonical_position(Shape s, int p, const int lat[3], const fem_idx *corner_vertex,
                                 int local_interior) {
    LatticeSite site;
    lattice_site(s, p, lat, &site);
    return position_at_site(s, p, lat, &site, corner_vertex, local_interior);
}

static int entity_count(Shape entity_shape, int p) {
    return lattice_interior_count(entity_shape, p);
}

/* Finds the cell's local edge whose corners are {a, b} (cell corner numbers). */
static int local_edge(Shape s, int a, int b) {
    for (int e = 0; e < shape_nedges(s); e++) {
        const int *v = shape_edge(s, e);
        if ((v[0] == a && v[1] == b) || (v[0] == b && v[1] == a)) return e;
    }
    return -1;
}

/* The cell's local facet with exactly these corners. */
static int local_facet(Shape s, const int *corners, int n) {
    for (int f = 0; f < shape_nfacets(s); f++) {
        int v[4], k = shape_facet_vertices(s, f, v), hits = 0;
        if (k != n) continue;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) hits += v[i] == corners[j];
        if (hits == n) return f;
    }
    return -1;
}

typedef struct {
    fem_idx *vertex, *edge, *face; /* first node number of each entity, -1 until touched */
    int64_t next;
} Numbering;

static fem_idx take(fem_idx *base, int64_t id, int count, Numbering *nb) {
    if (base[id] < 0) {
        base[id] = (fem_idx)nb->next;
        nb->next += count;
    }
    return base[id];
}

static void element_corner_vertices(const Mesh *m, const MeshBlock *mb, int64_t c, fem_idx *cv) {
    for (int v = 0; v < shape_nvertices(mb->shape); v++)
        cv[v] = m->topo.vertex_of_node[mb->nodes[c * mb->nnodes + lattice_vertex(mb->shape, mb->order, v)]];
}

/* What every element of a shape shares about its node n: lattice position, site, and the local edge or face.
 */
typedef struct {
    int lat[3];
    LatticeSite site;
    int entity;
} NodeSite;

static void node_sites(Shape s, int p, int ndof, NodeSite *ns) {
    for (int n = 0; n < ndof; n++) {
        lattice_node(s, p, n, ns[n].lat);
        lattice_site(s, p, ns[n].lat, &ns[n].site);
        const LatticeSite *site = &ns[n].site;
        ns[n].entity = site->dim == 1 ? local_edge(s, site->corner[0], site->corner[1])
                       : site->dim > 1 && site->dim < shape_dim(s)
                           ? local_facet(s, site->corner, site->ncorners)
                           : -1;
    }
}

/* The dofs of cell c of block bi, numbering its vertices, edges, faces and interior on first sight. */
static void number_cell(const Mesh *m, int bi, int64_t c, const SpaceBlock *b, const NodeSite *ns,
                        Numbering *nb, fem_idx *dofs) {
    const MeshBlock *mb = &m->cells[bi];
    Shape s = mb->shape;
    int p = b->order, d = shape_dim(s), ne = shape_nedges(s), nf = shape_nfacets(s);
    int n_edge = entity_count(SHAPE_LINE, p), n_face = d == 3 ? entity_count(shape_facet(s), p) : 0;
    fem_idx cv[SHAPE_MAX_VERTICES], interior_base = -1;
    element_corner_vertices(m, mb, c, cv);
    for (int n = 0; n < b->ndof; n++) {
        const LatticeSite *site = &ns[n].site;
        int64_t pos = site->dim == 0 ? 0 : position_at_site(s, p, ns[n].lat, site, cv, 1);
        fem_idx base;
        if (site->dim == 0) {
            base = take(nb->vertex, cv[site->corner[0]], 1, nb);
        } else if (site->dim == d) {
            if (interior_base < 0)
                interior_base = (fem_idx)nb->next, nb->next += lattice_interior_count(s, p);
            base = interior_base;
        } else if (site->dim == 1) {
            base = take(nb->edge, m->topo.cell_edges[bi][c * ne + ns[n].entity], n_edge, nb);
        } else {
            base = take(nb->face, m->topo.cell_faces[bi][c * nf + ns[n].entity], n_face, nb);
        }
        dofs[n] = base + (fem_idx)pos;
    }
}

static int number_cells(Space *sp, Numbering *nb) {
    const Mesh *m = sp->mesh;
    int p = sp->order;
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        const MeshBlock *mb = &m->cells[bi];
        SpaceBlock *b = &sp->cells[bi];
        Shape s = mb->shape;
        b->shape = s;
        b->order = p;
        b->ndof = lattice_count(s, p);
        b->count = mb->count;
        if ((int64_t)b->count * b->ndof >= INT32_MAX)
            return fem_fail(FEM_ERR_INPUT,
                            "%lld %s elements of order %d exceed femto's 2^31 element-dof slots per "
                            "block",
                            (long long)b->count, shape_name(s), p);
        FEM_ALLOC(b->dofs, b->count * b->ndof, "the element-to-dof map");
        NodeSite *ns = malloc(sizeof(NodeSite) * (size_t)b->ndof);
        if (!ns) return fem_fail(FEM_ERR_INTERNAL, "out of host memory numbering dofs");
        node_sites(s, p, b->ndof, ns);
        for (int64_t c = 0; c < b->count; c++) number_cell(m, bi, c, b, ns, nb, &b->dofs[c * b->ndof]);
        free(ns);
    }
    return FEM_OK;
}

/* Facet traces: the numbers were all given by the cells; find them through the cell each facet bounds. */
static int number_facets(Space *sp, Numbering *nb) {
    const Mesh *m = sp->mesh;
    int p = sp->order;
    for (int fi = 0; fi < m->nfacet_blocks; fi++) {
        const MeshBlock *mb = &m->facets[fi];
        SpaceBlock *b = &sp->facets[fi];
        Shape s = mb->shape;
        b->shape = s;
        b->order = p;
        b->ndof = lattice_count(s, p);
        b->count = mb->count;
        FEM_ALLOC(b->dofs, b->count * b->ndof, "the facet-to-dof map");
        for (int64_t c = 0; c < b->count; c++) {
            const FacetCell *fc = &m->topo.facet_cell[fi][c];
            const MeshBlock *cb = &m->cells[fc->block];
            int ne = shape_nedges(cb->shape), nf = shape_nfacets(cb->shape);
            fem_idx fv[4], cv[SHAPE_MAX_VERTICES];
            element_corner_vertices(m, mb, c, fv);
            element_corner_vertices(m, cb, fc->cell, cv);
            for (int n = 0; n < b->ndof; n++) {
                int lat[3];
                LatticeSite site;
                lattice_node(s, p, n, lat);
                lattice_site(s, p, lat, &site);
                int64_t pos = space_canonical_position(s, p, lat, fv, 0);
                fem_idx base = -1;
                if (site.dim == 0) {
                    base = nb->vertex[fv[site.corner[0]]];
                    pos = 0;
                } else if (site.dim == 1) { /* an edge of the cell: match its vertex numbers */
                    fem_idx a = fv[site.corner[0]], bb = fv[site.corner[1]];
                    for (int e = 0; e < ne; e++) {
                        const int *ev = shape_edge(cb->shape, e);
                        if ((cv[ev[0]] == a && cv[ev[1]] == bb) || (cv[ev[0]] == bb && cv[ev[1]] == a))
                            base = nb->edge[m->topo.cell_edges[fc->block][(int64_t)fc->cell * ne + e]];
                    }
                } else {
                    base = nb->face[m->topo.cell_faces[fc->block][(int64_t)fc->cell * nf + fc->facet]];
                }
                if (base < 0)
                    return fem_fail(FEM_ERR_INTERNAL, "facet %lld: a node of order %d has no number",
                                    (long long)mb->tag[c], p);
                b->dofs[c * b->ndof + n] = base + (fem_idx)pos;
            }
        }
    }
    return FEM_OK;
}

static int build_transpose(SpaceBlock *b, int64_t nnodes) {
    FEM_ALLOC(b->t_offsets, nnodes + 1, "the dof-to-element map");
    /* one more than the slots: restriction_create copies that many (a block without elements has one) */
    FEM_ALLOC(b->t_slots, b->count * b->ndof + 1, "the dof-to-element map");
    int64_t nslots = b->count * b->ndof;
    for (int64_t k = 0; k < nslots; k++) b->t_offsets[b->dofs[k] + 1]++;
    for (int64_t n = 0; n < nnodes; n++) b->t_offsets[n + 1] += b->t_offsets[n];
    int64_t *fill = malloc(sizeof(int64_t) * (nnodes + 1));
    if (!fill) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the dof-to-element map");
    memcpy(fill, b->t_offsets, sizeof(int64_t) * (nnodes + 1));
    for (int64_t k = 0; k < nslots; k++)
        b->t_slots[fill[b->dofs[k]]++] = (int32_t)k; /* ascending: deterministic */
    free(fill);
    return FEM_OK;
}

int space_lattice_points(const Space *sp, int equispaced, double *x) {
    const Mesh *m = sp->mesh;
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        const MeshBlock *mb = &m->cells[bi];
        const SpaceBlock *b = &sp->cells[bi];
        double *pts = malloc(sizeof(double) * 3 * b->ndof),
               *val = malloc(sizeof(double) * b->ndof * mb->nnodes);
        if (!pts || !val) {
            free(pts);
            free(val);
            return fem_fail(FEM_ERR_INTERNAL, "out of host memory for node coordinates");
        }
        lattice_points(b->shape, b->order, equispaced, pts);
        basis_tabulate(mb->shape, mb->order, b->ndof, pts, val, NULL);
        /* a node shared by cells of this block is placed by the first of them (its first slot in the
         * transpose), so that threads never write the same node */
#pragma omp parallel for schedule(static) if (b->count > 4096 && b->t_offsets)
        for (int64_t c = 0; c < b->count; c++)
            for (int n = 0; n < b->ndof; n++) {
                fem_idx node = b->dofs[c * b->ndof + n];
                if (b->t_offsets && b->t_slots[b->t_offsets[node]] != (int32_t)(c * b->ndof + n)) continue;
                double *xn = &x[3 * (int64_t)node];
                xn[0] = xn[1] = xn[2] = 0.0;
                for (int j = 0; j < mb->nnodes; j++)
                    for (int a = 0; a < 3; a++)
                        xn[a] +=
                            val[n * mb->nnodes + j] * m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + j] + a];
            }
        free(pts);
        free(val);
    }
    return FEM_OK;
}

/* What space_create and space_outline start with: the space's header, and the order checked on every cell
 * block. */
static int space_begin(const Mesh *m, int order, int ncomp, Space *sp) {
    memset(sp, 0, sizeof *sp);
    sp->mesh = m;
    sp->order = order;
    sp->ncomp = ncomp;
    sp->ncell_blocks = m->ncell_blocks;
    sp->nfacet_blocks = m->nfacet_blocks;
    for (int b = 0; b < m->ncell_blocks; b++)
        if (order < 1 || order > element_max_order(m->cells[b].shape))
            return fem_fail(FEM_ERR_INPUT, "element order %d is not available on %s cells (1 to %d)", order,
                            shape_name(m->cells[b].shape), element_max_order(m->cells[b].shape));
    return FEM_OK;
}

int space_outline(const Mesh *m, int order, int ncomp, int64_t nnodes, Space *sp) {
    FEM_TRY(space_begin(m, order, ncomp, sp));
    for (int k = 0; k < m->ncell_blocks + m->nfacet_blocks; k++) {
        const MeshBlock *mb = k < m->ncell_blocks ? &m->cells[k] : &m->facets[k - m->ncell_blocks];
        SpaceBlock *b = k < m->ncell_blocks ? &sp->cells[k] : &sp->facets[k - m->ncell_blocks];
        b->shape = mb->shape;
        b->order = order;
        b->ndof = lattice_count(mb->shape, order);
        b->count = mb->count;
    }
    sp->nnodes = sp->nnodes_owned = nnodes;
    sp->ndofs = sp->ndofs_owned = nnodes * ncomp;
    return FEM_OK;
}

int space_create(const Mesh *m, int order, int ncomp, Space *sp) {
    FEM_TRY(space_begin(m, order, ncomp, sp));
    if (!m->has_topology || m->outline)
        return fem_fail(FEM_ERR_INTERNAL, "space_create: the mesh has no topology (or is an outline)");
    Numbering nb = {0};
    int status = FEM_OK;
    nb.vertex = malloc(sizeof(fem_idx) * (m->topo.nvertices + 1));
    nb.edge = malloc(sizeof(fem_idx) * (m->topo.nedges + 1));
    nb.face = malloc(sizeof(fem_idx) * (m->topo.nfaces + 1));
    if (!nb.vertex || !nb.edge || !nb.face)
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory numbering dofs");
    if (!status) {
        memset(nb.vertex, 0xff, sizeof(fem_idx) * (m->topo.nvertices + 1));
        memset(nb.edge, 0xff, sizeof(fem_idx) * (m->topo.nedges + 1));
        memset(nb.face, 0xff, sizeof(fem_idx) * (m->topo.nfaces + 1));
        status = number_cells(sp, &nb);
    }
    if (!status) {
        sp->nnodes = sp->nnodes_owned = nb.next;
        sp->ndofs = sp->ndofs_owned = nb.next * ncomp;
        if (sp->ndofs >= INT32_MAX)
            status = fem_fail(FEM_ERR_INPUT, "%lld dofs exceed femto's limit of 2^31", (long long)sp->ndofs);
    }
    if (!status) status = number_facets(sp, &nb);
    for (int b = 0; b < sp->ncell_blocks && !status; b++) status = build_transpose(&sp->cells[b], sp->nnodes);
    for (int b = 0; b < sp->nfacet_blocks && !status; b++)
        status = build_transpose(&sp->facets[b], sp->nnodes);
    if (!status) {
        sp->node_x = malloc(sizeof(double) * 3 * (size_t)(sp->nnodes + 1));
        status = sp->node_x ? space_lattice_points(sp, 0, sp->node_x)
                            : fem_fail(FEM_ERR_INTERNAL, "out of host memory for node coordinates");
    }
    free(nb.vertex);
    free(nb.edge);
    free(nb.face);
    if (status) space_destroy(sp);
    return status;
}

int space_renumber(Space *sp, const fem_idx *new_of_old, int64_t nowned) {
    SpaceBlock *blocks[2 * MESH_MAX_BLOCKS];
    int nb = 0;
    for (int b = 0; b < sp->ncell_blocks; b++) blocks[nb++] = &sp->cells[b];
    for (int b = 0; b < sp->nfacet_blocks; b++) blocks[nb++] = &sp->facets[b];
    for (int i = 0; i < nb; i++) {
        SpaceBlock *b = blocks[i];
        for (int64_t k = 0; k < b->count * b->ndof; k++) b->dofs[k] = new_of_old[b->dofs[k]];
        free(b->t_offsets);
        free(b->t_slots);
        b->t_offsets = NULL;
        b->t_slots = NULL;
        FEM_TRY(build_transpose(b, sp->nnodes));
    }
    double *x = malloc(sizeof(double) * 3 * (size_t)(sp->nnodes + 1));
    if (!x) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for node coordinates");
    for (int64_t n = 0; n < sp->nnodes; n++)
        memcpy(&x[3 * (int64_t)new_of_old[n]], &sp->node_x[3 * n], 3 * sizeof(double));
    free(sp->node_x);
    sp->node_x = x;
    sp->nnodes_owned = nowned;
    sp->ndofs_owned = nowned * sp->ncomp;
    return FEM_OK;
}

static void block_free(SpaceBlock *b) {
    free(b->dofs);
    free(b->t_offsets);
    free(b->t_slots);
}

void space_destroy(Space *sp) {
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) block_free(&sp->cells[b]), block_free(&sp->facets[b]);
    free(sp->node_x);
    memset(sp, 0, sizeof *sp);
}

static int cmp_idx(const void *a, const void *b) {
    fem_idx x = *(const fem_idx *)a, y = *(const fem_idx *)b;
    return (x > y) - (x < y);
}

int space_group_nodes(const Space *sp, const PhysicalGroup *g, fem_idx **nodes, int64_t *count) {
    const Mesh *m = sp->mesh;
    int64_t n = 0;
    for (int fi = 0; fi < sp->nfacet_blocks; fi++)
        for (int64_t c = 0; c < sp->facets[fi].count; c++)
            if (mesh_group_has_entity(g, m->facets[fi].entity[c])) n += sp->facets[fi].ndof;
    fem_idx *list = malloc(sizeof(fem_idx) * (n + 1));
    if (!list) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for boundary nodes");
    int64_t k = 0;
    for (int fi = 0; fi < sp->nfacet_blocks; fi++)
        for (int64_t c = 0; c < sp->facets[fi].count; c++)
            if (mesh_group_has_entity(g, m->facets[fi].entity[c]))
                for (int i = 0; i < sp->facets[fi].ndof; i++)
                    list[k++] = sp->facets[fi].dofs[c * sp->facets[fi].ndof + i];
    qsort(list, (size_t)k, sizeof(fem_idx), cmp_idx);
    int64_t u = 0;
    for (int64_t i = 0; i < k; i++)
        if (u == 0 || list[i] != list[u - 1]) list[u++] = list[i];
    *nodes = list;
    *count = u;
    return FEM_OK;
}
