/* Everything that calls the Gmsh SDK: open a .msh, or open and mesh a .geo (after estimating its size), and
 * copy Gmsh's model into a Mesh. Runs in the reading child (io/mesh_child.c) or, for trusted files, in the
 * caller. Gmsh's own messages are captured by its logger, never printed: a failure becomes one sentence for
 * the user. gmshc.h has no extern "C" guard, so only C files include it. */
#include "mesh_internal.h"

#include "fem/error.h"
#include "io/gmsh_load.h"

#include <gmshc.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Gmsh's last error as one line (its messages may span lines and start with "Error   : "); a script's error
 * starts with "'PATH', line N: " and the path is dropped, since femto's sentence names the file already.
 * Returns a heap string (NULL when out of memory). */
static char *gmsh_error(const char *path) {
    int ierr = 0;
    char *err = NULL;
    gmshLoggerGetLastError(&err, &ierr);
    const char *s = err ? err : "";
    while (*s == ' ') s++;
    size_t n = strlen(path);
    if (s[0] == '\'' && strncmp(s + 1, path, n) == 0 && strncmp(s + 1 + n, "', ", 3) == 0) s += n + 4;
    char *msg = strdup(
        s[0] ? s : "the Gmsh library failed without saying why (a corrupt file, or not enough memory)");
    for (char *c = msg; c && *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    if (err) gmshFree(err);
    return msg;
}

/* "BEFORE 'PATH'AFTER: GMSH'S MESSAGE" as the recorded failure. */
static int gmsh_fail(const char *before, const char *path, const char *after) {
    char *msg = gmsh_error(path);
    int status = fem_fail(FEM_ERR_INPUT, "%s '%s'%s: %s", before, path, after, msg ? msg : "out of memory");
    free(msg);
    return status;
}

/* Gmsh's initialisation sets OpenMP's thread count to its own default (1): keep the program's. */
static int saved_threads;

static int gmsh_begin(void) {
    int ierr = 0;
    FEM_TRY(gmsh_library_load());
    saved_threads = omp_get_max_threads();
    gmshInitialize(0, NULL, 0, &ierr);
    if (ierr) return fem_fail(FEM_ERR_INTERNAL, "the Gmsh library could not be initialised");
    gmshOptionSetNumber("General.Terminal", 0, &ierr);
    gmshOptionSetNumber("General.Verbosity", 1, &ierr);
    gmshLoggerStart(&ierr);
    return FEM_OK;
}

static void gmsh_end(void) {
    int ierr = 0;
    gmshLoggerStop(&ierr);
    gmshFinalize(&ierr);
    omp_set_num_threads(saved_threads);
}

/* Cells Gmsh makes per h^d of area or volume at a uniform size h: about 2.3 triangles per h^2 and 4.3
 * tetrahedra per h^3 (Gmsh 4.8 on a unit square and cube), rounded up; quadrilaterals and hexahedra make
 * fewer, so the estimate errs on the large side there. */
static const double cells_per_hd[4] = {0, 1, 2.5, 4.5};

/* The area or volume of the model's entities of dimension dim: exact for OpenCASCADE entities; the built-in
 * kernel has no mass, so its entities count with their bounding box (an upper bound). Entities are checked
 * against the OpenCASCADE list first because asking for the mass of another leaves an error in the log. */
static double model_measure(int dim) {
    int ierr = 0, *occ = NULL, *all = NULL;
    size_t nocc = 0, nall = 0;
    gmshModelOccGetEntities(&occ, &nocc, dim, &ierr);
    gmshModelGetEntities(&all, &nall, dim, &ierr);
    double total = 0;
    for (size_t e = 0; e < nall / 2; e++) {
        int tag = all[2 * e + 1], is_occ = 0;
        for (size_t k = 0; k < nocc / 2 && !is_occ; k++) is_occ = occ[2 * k + 1] == tag;
        double mass = 0, b[6] = {0, 0, 0, 0, 0, 0};
        ierr = 0;
        if (is_occ) {
            gmshModelOccGetMass(dim, tag, &mass, &ierr);
        } else {
            gmshModelGetBoundingBox(dim, tag, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &ierr);
            double dx = b[3] - b[0], dy = b[4] - b[1], dz = b[5] - b[2];
            mass = dim == 3 ? dx * dy * dz : fmax(dx * dy, fmax(dy * dz, dx * dz));
        }
        if (!ierr && isfinite(mass) && mass > 0) total += mass;
    }
    if (occ) gmshFree(occ);
    if (all) gmshFree(all);
    return total;
}

/* The mean length of the curves' mesh elements once the curves are meshed: the size the surfaces and volumes
 * will have, whatever set it (the size attribute, the script's point sizes or fields). 0 when unknown. */
static double curve_element_length(void) {
    int ierr = 0;
    size_t *tags = NULL, ntags = 0, ncoord = 0, npc = 0, *etags = NULL, netags = 0, *enodes = NULL,
           nenodes = 0;
    double *coord = NULL, *pc = NULL, length = 0;
    gmshModelMeshGetNodes(&tags, &ntags, &coord, &ncoord, &pc, &npc, -1, -1, 0, 0, &ierr);
    gmshModelMeshGetElementsByType(1, &etags, &netags, &enodes, &nenodes, -1, 0, 1, &ierr);
    size_t max_tag = 0;
    for (size_t i = 0; i < ntags; i++) max_tag = tags[i] > max_tag ? tags[i] : max_tag;
    size_t *at = max_tag < 64 * (ntags + 1024) ? malloc(sizeof(size_t) * (max_tag + 1)) : NULL;
    if (at) {
        for (size_t i = 0; i < ntags; i++) at[tags[i]] = i;
        for (size_t e = 0; e + 1 < nenodes; e += 2) {
            const double *a = &coord[3 * at[enodes[e]]], *b = &coord[3 * at[enodes[e + 1]]];
            length += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                           (a[2] - b[2]) * (a[2] - b[2]));
        }
    }
    free(at);
    gmshFree(tags);
    gmshFree(coord);
    gmshFree(pc);
    gmshFree(etags);
    gmshFree(enodes);
    return netags && at ? length / (double)netags : 0.0;
}

/* Refuses, before the surfaces and volumes are meshed, a script whose mesh would not fit in this machine's
 * memory (unless opt->force). First from the largest size Gmsh may use (the size attribute: cheap, and
 * enough for a size that is far too small), then from the meshed curves. *cells: the estimate. */
static int check_size(const char *path, const MeshReadOptions *opt, int dim, double *cells) {
    int ierr = 0, refine = opt ? opt->refine : 0, force = opt && opt->force;
    double hmax = 0, factor = 1, measure = model_measure(dim);
    double limit = opt && opt->cell_limit > 0 ? opt->cell_limit : mesh_cell_limit();
    double grow = pow(2.0, dim * refine), h = 0;
    gmshOptionGetNumber("Mesh.MeshSizeMax", &hmax, &ierr);
    gmshOptionGetNumber("Mesh.MeshSizeFactor", &factor, &ierr);
    if (hmax > 0 && hmax < 1e20 && factor > 0) h = hmax * factor;
    *cells = h > 0 ? cells_per_hd[dim] * measure / pow(h, dim) * grow : 0;
    if (*cells <= limit || force) {
        gmshModelMeshGenerate(1, &ierr);
        if (ierr) return gmsh_fail("meshing", path, " failed");
        double h1 = curve_element_length();
        double from_curves = h1 > 0 ? cells_per_hd[dim] * measure / pow(h1, dim) * grow : 0;
        if (from_curves > *cells) *cells = from_curves, h = h1;
    }
    if (*cells <= limit || force) return FEM_OK;
    char refined[64] = "";
    if (refine) snprintf(refined, sizeof refined, ", refined %d time%s", refine, refine > 1 ? "s" : "");
    return fem_fail(FEM_ERR_INPUT,
                    "meshing '%s' would make about %.2g cells (its %s of %.3g m^%d at mesh size %.3g m%s), "
                    "more than femto's limit of %.2g cells%s; use a larger size, or --force to mesh anyway",
                    path, *cells, dim == 3 ? "volume" : "area", measure, dim, h, refined, limit,
                    opt && opt->cell_limit > 0 ? "" : " (what this machine's memory holds at 2 KiB a cell)");
}

/* The meshes before the refinements of <mesh refine>, kept for multigrid (Mesh.parent): before each of the
 * last MESH_MAX_PARENTS refinements the model is made of order 2 and read (Gmsh's refinement splits exactly
 * these order-2 cells, and its new corners are their nodes), then made of order 1 again. */
typedef struct {
    int n, broken;
    Mesh *level[MESH_MAX_PARENTS]; /* oldest first */
} Ancestry;

static int read_model(Mesh *m);

static void ancestry_free(Ancestry *a) {
    for (int i = 0; i < a->n; i++) {
        mesh_destroy(a->level[i]);
        free(a->level[i]);
    }
    a->n = 0;
}

static void capture_parent(Ancestry *a, const char *path) {
    int ierr = 0;
    Mesh *m = a->broken || a->n == MESH_MAX_PARENTS ? NULL : calloc(1, sizeof *m);
    if (!m) {
        a->broken = 1;
        return;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    gmshModelMeshSetOrder(2, &ierr);
    if (!ierr && read_model(m) == FEM_OK) {
        a->level[a->n++] = m;
    } else {
        mesh_destroy(m);
        free(m);
        a->broken = 1; /* a chain with a gap is no use */
    }
    ierr = 0;
    gmshModelMeshSetOrder(1, &ierr);
    if (ierr) a->broken = 1;
}

/* Makes each kept level's cells refer to the fine mesh's nodes and chains them as its parents; when a node
 * is not found (a script that moves nodes after refining), none is kept. */
static void ancestry_link(Ancestry *a, Mesh *fine) {
    if (a->broken || a->n == 0) {
        ancestry_free(a);
        return;
    }
    MeshPointIndex t;
    int ok = mesh_point_index_create(&t, fine->x, fine->nnodes) == FEM_OK;
    for (int l = 0; ok && l < a->n; l++) {
        Mesh *m = a->level[l];
        fem_idx *to = malloc(sizeof(fem_idx) * (size_t)(m->nnodes + 1));
        ok = to != NULL;
        for (int64_t i = 0; ok && i < m->nnodes; i++) to[i] = mesh_point_index_find(&t, &m->x[3 * i]);
        for (int b = 0; ok && b < m->ncell_blocks + m->nfacet_blocks; b++) {
            MeshBlock *k = b < m->ncell_blocks ? &m->cells[b] : &m->facets[b - m->ncell_blocks];
            for (int64_t i = 0; ok && i < k->count * k->nnodes; i++)
                ok = (k->nodes[i] = to[k->nodes[i]]) >= 0;
        }
        free(to);
        double *x = ok ? malloc(sizeof(double) * 3 * (size_t)(fine->nnodes + 1)) : NULL;
        int64_t *tag = ok ? malloc(sizeof(int64_t) * (size_t)(fine->nnodes + 1)) : NULL;
        ok = x && tag;
        if (ok) {
            memcpy(x, fine->x, sizeof(double) * 3 * (size_t)fine->nnodes);
            memcpy(tag, fine->node_tag, sizeof(int64_t) * (size_t)fine->nnodes);
            free(m->x), free(m->node_tag);
            m->x = x, m->node_tag = tag, m->nnodes = fine->nnodes;
        } else {
            free(x), free(tag);
        }
    }
    if (t.slot) mesh_point_index_destroy(&t);
    if (!ok) {
        ancestry_free(a);
        return;
    }
    Mesh *child = fine;
    for (int l = a->n - 1; l >= 0; l--) child = child->parent = a->level[l];
    a->n = 0;
}

/* Meshes the model. When threads are asked for and the script chose no 3D algorithm, Algorithm3D holds the
 * HXT preset and the 3D step runs on that many threads (its mesh then depends on the threads' timing; 2D
 * meshes stay reproducible). Should HXT fail where it was only femto's default, Delaunay gets a try. anc
 * (may be NULL) keeps the meshes before the refinements. */
static int generate(const char *path, const MeshReadOptions *opt, int dim, Ancestry *anc) {
    int ierr = 0;
    double alg = 0, nthreads = 0;
    gmshOptionGetNumber("Mesh.Algorithm3D", &alg, &ierr);
    int hxt = dim == 3 && opt && opt->threads > 0 && alg == MESH_ALGORITHM_HXT;
    gmshOptionGetNumber("Mesh.MaxNumThreads3D", &nthreads, &ierr);
    if (hxt && nthreads <= 0) gmshOptionSetNumber("Mesh.MaxNumThreads3D", opt->threads, &ierr);
    ierr = 0;
    gmshModelMeshGenerate(dim, &ierr);
    if (ierr && hxt) {
        ierr = 0;
        gmshModelMeshClear(NULL, 0, &ierr);
        gmshOptionSetNumber("Mesh.Algorithm3D", MESH_ALGORITHM_DELAUNAY, &ierr);
        gmshModelMeshGenerate(dim, &ierr);
    }
    for (int r = 0; !ierr && opt && r < opt->refine; r++) {
        if (anc && opt->refine - r <= MESH_MAX_PARENTS) capture_parent(anc, path);
        gmshModelMeshRefine(&ierr);
    }
    /* an explicit order wins over the script's Mesh.ElementOrder (order 1 included); 0 keeps the script's */
    if (!ierr && opt && opt->order > 0) gmshModelMeshSetOrder(opt->order, &ierr);
    return ierr ? gmsh_fail("meshing", path, " failed") : FEM_OK;
}

/* Opens a .msh, or opens and meshes a .geo, into Gmsh's current model. The file was checked by the caller
 * (mesh_check_file). */
static int gmsh_load(const char *path, int geo, const MeshReadOptions *opt, const MeshGmshHooks *hooks,
                     Ancestry *anc) {
    int ierr = 0;
    if (geo) {
        /* sizes, order and algorithm are options read while meshing; set them before the script so that it
         * may override them */
        if (opt && opt->size > 0) gmshOptionSetNumber("Mesh.MeshSizeMax", opt->size, &ierr);
        gmshOptionSetNumber("Mesh.SecondOrderIncomplete", 0, &ierr);
        if (opt && opt->threads > 0) gmshOptionSetNumber("Mesh.Algorithm3D", MESH_ALGORITHM_HXT, &ierr);
    }
    gmshOpen(path, &ierr);
    char *last = NULL;
    int ierr2 = 0;
    gmshLoggerGetLastError(&last, &ierr2);
    int failed = ierr || (last && last[0]);
    if (last) gmshFree(last);
    if (failed) return gmsh_fail(geo ? "cannot read the Gmsh script" : "cannot read mesh file", path, "");
    if (!geo) return FEM_OK;
    int dim = gmshModelGetDimension(&ierr);
    if (dim < 2)
        return fem_fail(FEM_ERR_INPUT, "the Gmsh script '%s' defines no surface or volume to mesh", path);
    double cells = 0;
    FEM_TRY(check_size(path, opt, dim, &cells));
    if (hooks && hooks->estimated) hooks->estimated(cells, hooks->ctx);
    return generate(path, opt, dim, anc);
}

/* Node tag -> index map: dense when tags are compact (the usual case), else sorted pairs. */
typedef struct {
    size_t max_tag;
    fem_idx *dense;
} NodeMap;

static fem_idx node_index(const NodeMap *map, size_t tag) {
    return tag <= map->max_tag ? map->dense[tag] : -1;
}

static int read_nodes(Mesh *m, NodeMap *map) {
    int ierr = 0;
    size_t *tags = NULL, ntags = 0, ncoord = 0, npc = 0;
    double *coord = NULL, *pc = NULL;
    gmshModelMeshGetNodes(&tags, &ntags, &coord, &ncoord, &pc, &npc, -1, -1, 0, 0, &ierr);
    if (ierr) return fem_fail(FEM_ERR_INPUT, "%s: cannot read the mesh nodes", m->path);
    int status = FEM_OK;
    m->nnodes = (int64_t)ntags;
    m->x = malloc(sizeof(double) * 3 * (ntags + 1));
    m->node_tag = malloc(sizeof(int64_t) * (ntags + 1));
    map->max_tag = 0;
    for (size_t i = 0; i < ntags; i++)
        if (tags[i] > map->max_tag) map->max_tag = tags[i];
    if (map->max_tag > 64 * (ntags + 1024)) /* a sparse numbering would waste memory in a dense map */
        status = fem_fail(FEM_ERR_INPUT,
                          "%s: node tags are too sparse (largest %zu for %zu nodes); renumber the mesh "
                          "(gmsh -renumber)",
                          m->path, map->max_tag, ntags);
    map->dense = status ? NULL : malloc(sizeof(fem_idx) * (map->max_tag + 1));
    if (!status && (!m->x || !m->node_tag || !map->dense))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for %zu mesh nodes", ntags);
    if (!status) {
        for (size_t t = 0; t <= map->max_tag; t++) map->dense[t] = -1;
        for (size_t i = 0; i < ntags; i++) {
            map->dense[tags[i]] = (fem_idx)i;
            m->node_tag[i] = (int64_t)tags[i];
            memcpy(&m->x[3 * i], &coord[3 * i], 3 * sizeof(double));
        }
    }
    gmshFree(tags);
    gmshFree(coord);
    gmshFree(pc);
    return status;
}

/* Finds or makes the block for element type `type` among blocks[0..*n). */
static MeshBlock *block_for(MeshBlock *blocks, int *n, const MeshElementType *type) {
    for (int b = 0; b < *n; b++)
        if (blocks[b].type == type) return &blocks[b];
    if (*n == MESH_MAX_BLOCKS) return NULL;
    MeshBlock *b = &blocks[(*n)++];
    memset(b, 0, sizeof *b);
    b->type = type;
    b->shape = type->shape;
    b->order = type->order;
    b->nnodes = type->nnodes;
    return b;
}

typedef struct {
    int type;
    size_t count;
} Unsupported;

static int grow_block(MeshBlock *b, int64_t extra) {
    int64_t n = b->count + extra;
    fem_idx *nodes = realloc(b->nodes, sizeof(fem_idx) * (size_t)(n * b->nnodes + 1));
    if (nodes) b->nodes = nodes;
    int32_t *entity = realloc(b->entity, sizeof(int32_t) * (size_t)(n + 1));
    if (entity) b->entity = entity;
    int64_t *tag = realloc(b->tag, sizeof(int64_t) * (size_t)(n + 1));
    if (tag) b->tag = tag;
    if (!nodes || !entity || !tag) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for mesh elements");
    return FEM_OK;
}

static const char *gmsh_type_name(int type, char *buf, size_t len) {
    int ierr = 0, dim, order, nn, np;
    char *name = NULL;
    double *c = NULL;
    size_t cn;
    gmshModelMeshGetElementProperties(type, &name, &dim, &order, &nn, &c, &cn, &np, &ierr);
    snprintf(buf, len, "%s", (!ierr && name) ? name : "unknown");
    if (name) gmshFree(name);
    if (c) gmshFree(c);
    return buf;
}

/* Appends the elements of dimension `dim` of every entity into blocks; counts unsupported types. */
static int read_elements(Mesh *m, const NodeMap *map, int dim, MeshBlock *blocks, int *nblocks,
                         Unsupported *bad, int *nbad) {
    int ierr = 0;
    int *dimtags = NULL;
    size_t ndimtags = 0;
    gmshModelGetEntities(&dimtags, &ndimtags, dim, &ierr);
    int status = ierr ? fem_fail(FEM_ERR_INPUT, "%s: cannot list the mesh entities", m->path) : FEM_OK;
    for (size_t e = 0; e < ndimtags / 2 && !status; e++) {
        int entity = dimtags[2 * e + 1];
        int *types = NULL;
        size_t ntypes = 0, **etags = NULL, *etags_n = NULL, etags_nn = 0, **ntags = NULL, *ntags_n = NULL,
               ntags_nn = 0;
        gmshModelMeshGetElements(&types, &ntypes, &etags, &etags_n, &etags_nn, &ntags, &ntags_n, &ntags_nn,
                                 dim, entity, &ierr);
        if (ierr)
            status = fem_fail(FEM_ERR_INPUT, "%s: cannot read the elements of entity %d", m->path, entity);
        for (size_t t = 0; t < ntypes && !status; t++) {
            const MeshElementType *type = mesh_gmsh_type(types[t]);
            if (!type || shape_dim(type->shape) != dim) {
                int k = 0;
                while (k < *nbad && bad[k].type != types[t]) k++;
                if (k == *nbad && *nbad < 16) bad[(*nbad)++] = (Unsupported){types[t], 0};
                if (k < 16) bad[k].count += etags_n[t];
                continue;
            }
            MeshBlock *b = block_for(blocks, nblocks, type);
            if (!b) {
                status = fem_fail(FEM_ERR_INPUT, "%s: too many element types in one mesh", m->path);
                break;
            }
            int64_t count = (int64_t)etags_n[t];
            status = grow_block(b, count);
            for (int64_t c = 0; c < count && !status; c++) {
                int64_t dst = b->count + c;
                b->entity[dst] = entity;
                b->tag[dst] = (int64_t)etags[t][c];
                for (int k = 0; k < type->nnodes; k++) {
                    fem_idx node = node_index(map, ntags[t][c * type->nnodes + k]);
                    if (node < 0) {
                        status = fem_fail(FEM_ERR_INPUT,
                                          "%s: element %zu refers to node %zu, which the mesh does not "
                                          "define",
                                          m->path, etags[t][c], ntags[t][c * type->nnodes + k]);
                        break;
                    }
                    b->nodes[dst * type->nnodes + type->lattice_from_gmsh[k]] = node;
                }
            }
            if (!status) b->count += count;
        }
        for (size_t t = 0; t < etags_nn; t++) gmshFree(etags[t]);
        for (size_t t = 0; t < ntags_nn; t++) gmshFree(ntags[t]);
        gmshFree(types);
        gmshFree(etags);
        gmshFree(etags_n);
        gmshFree(ntags);
        gmshFree(ntags_n);
    }
    gmshFree(dimtags);
    return status;
}

static int read_groups(Mesh *m) {
    int ierr = 0;
    int *dimtags = NULL;
    size_t n = 0;
    gmshModelGetPhysicalGroups(&dimtags, &n, -1, &ierr);
    if (ierr) return fem_fail(FEM_ERR_INPUT, "%s: cannot read the physical groups", m->path);
    m->ngroups = (int)(n / 2);
    m->groups = calloc((size_t)m->ngroups + 1, sizeof(PhysicalGroup));
    int status = m->groups ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for physical groups");
    for (int g = 0; g < m->ngroups && !status; g++) {
        PhysicalGroup *pg = &m->groups[g];
        pg->dim = dimtags[2 * g];
        pg->tag = dimtags[2 * g + 1];
        char *name = NULL;
        gmshModelGetPhysicalName(pg->dim, pg->tag, &name, &ierr);
        snprintf(pg->name, sizeof pg->name, "%s", name ? name : "");
        if (name) gmshFree(name);
        int *ents = NULL;
        size_t nents = 0;
        gmshModelGetEntitiesForPhysicalGroup(pg->dim, pg->tag, &ents, &nents, &ierr);
        pg->nentities = (int)nents;
        pg->entities = malloc(sizeof(int) * (nents + 1));
        if (!pg->entities)
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for physical groups");
        else if (nents)
            memcpy(pg->entities, ents, sizeof(int) * nents);
        if (ents) gmshFree(ents);
    }
    gmshFree(dimtags);
    return status;
}

static int read_model(Mesh *m) {
    int ierr = 0;
    NodeMap map = {0, NULL};
    FEM_TRY(read_nodes(m, &map));
    int dim = gmshModelGetDimension(&ierr);
    Unsupported bad[16];
    int nbad = 0, status = FEM_OK;
    if (dim < 2)
        status = fem_fail(FEM_ERR_INPUT,
                          "the mesh '%s' has no 2D or 3D cells; femto needs a surface or "
                          "volume mesh",
                          m->path);
    if (!status) {
        m->dim = dim;
        status = read_elements(m, &map, dim, m->cells, &m->ncell_blocks, bad, &nbad);
    }
    if (!status) status = read_elements(m, &map, dim - 1, m->facets, &m->nfacet_blocks, bad, &nbad);
    free(map.dense);
    if (!status && nbad) {
        char list[1024] = "", name[128];
        size_t used = 0;
        for (int k = 0; k < nbad; k++) {
            int w =
                snprintf(list + used, sizeof list - used, "%s%zu of type '%s' (Gmsh type %d)", k ? ", " : "",
                         bad[k].count, gmsh_type_name(bad[k].type, name, sizeof name), bad[k].type);
            if (w < 0 || (size_t)w >= sizeof list - used) break;
            used += (size_t)w;
        }
        status = fem_fail(FEM_ERR_INPUT, "%s: unsupported elements: %s; femto reads %s", m->path, list,
                          mesh_supported_types());
    }
    int64_t ncells = 0;
    for (int b = 0; b < m->ncell_blocks; b++) ncells += m->cells[b].count;
    if (!status && ncells == 0)
        status = fem_fail(FEM_ERR_INPUT,
                          "the mesh '%s' has no %dD cells (its %dD entities have no elements: was the %s "
                          "meshed?)",
                          m->path, dim, dim, dim == 3 ? "volume" : "surface");
    if (!status) status = read_groups(m);
    return status;
}

int mesh_gmsh_read(const char *path, int geo, const MeshReadOptions *opt, const MeshGmshHooks *hooks,
                   Mesh *m) {
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    FEM_TRY(gmsh_begin());
    Ancestry anc = {0, 0, {NULL}};
    int status = gmsh_load(path, geo, opt, hooks, &anc);
    if (!status) status = read_model(m);
    if (!status) ancestry_link(&anc, m);
    ancestry_free(&anc);
    if (!hooks || !hooks->skip_finalize) gmsh_end();
    if (status) mesh_destroy(m);
    return status;
}

int mesh_generate_file(const char *geo_path, const MeshReadOptions *opt, const char *msh_path) {
    FEM_TRY(mesh_check_file(geo_path, NULL));
    FEM_TRY(gmsh_begin());
    int status = gmsh_load(geo_path, 1, opt, NULL, NULL), ierr = 0;
    if (!status) {
        gmshOptionSetNumber("Mesh.MshFileVersion", 4.1, &ierr);
        gmshWrite(msh_path, &ierr);
        if (ierr) status = fem_fail(FEM_ERR_INPUT, "cannot write mesh file '%s'", msh_path);
    }
    gmsh_end();
    return status;
}
