/* `femto-app info FILE`: what a mesh holds, or a problem's settings (info_problem.c) and then its mesh. */
#include "app.h"

#include "fem/error.h"
#include "fem/partition.h"
#include "io/mesh_read.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void print_blocks(const char *what, const MeshBlock *blocks, int n) {
    for (int b = 0; b < n; b++)
        printf("  %-7s %-6s %10lld  (%s, geometric order %d)\n", b ? "" : what, blocks[b].type->name,
               (long long)blocks[b].count, shape_name(blocks[b].shape), blocks[b].order);
}

void app_print_mesh(const Mesh *m) {
    printf("mesh %s\n  dimension %d, %lld nodes\n", m->path, m->dim, (long long)m->nnodes);
    print_blocks("cells", m->cells, m->ncell_blocks);
    print_blocks("facets", m->facets, m->nfacet_blocks);
    printf("  physical groups:%s\n", m->ngroups ? "" : " none");
    for (int g = 0; g < m->ngroups; g++) {
        const PhysicalGroup *pg = &m->groups[g];
        const char *kind = pg->dim == m->dim       ? "cells"
                           : pg->dim == m->dim - 1 ? "facets"
                                                   : "(not used by femto)";
        char name[MESH_NAME_MAX + 2];
        snprintf(name, sizeof name, "'%s'", pg->name);
        printf("    %dD  %-24s tag %-4d %10lld %s\n", pg->dim, pg->name[0] ? name : "(unnamed)", pg->tag,
               (long long)pg->nelements, kind);
    }
    const Topology *t = &m->topo;
    int64_t ncells = 0;
    for (int b = 0; b < m->ncell_blocks; b++) ncells += m->cells[b].count;
    if (m->dim == 3)
        printf("  topology: %lld vertices, %lld edges, %lld faces, %lld cells (V - E + F - C = %lld), %lld "
               "boundary "
               "faces\n",
               (long long)t->nvertices, (long long)t->nedges, (long long)t->nfaces, (long long)ncells,
               (long long)(t->nvertices - t->nedges + t->nfaces - ncells), (long long)t->nboundary_facets);
    else
        printf("  topology: %lld vertices, %lld edges, %lld cells (V - E + F = %lld), %lld boundary edges\n",
               (long long)t->nvertices, (long long)t->nedges, (long long)ncells,
               (long long)(t->nvertices - t->nedges + ncells), (long long)t->nboundary_facets);
    int kept = mesh_parent_count(m), k = kept;
    for (const Mesh *p = m->parent; p; p = p->parent, k--)
        printf(
            "  the mesh before refinement %d of the last %d: %lld cells, %lld vertices (a multigrid level)\n",
            k, kept, (long long)partition_ncells(p), (long long)p->topo.nvertices);
    double lo[3], hi[3];
    mesh_bounding_box(m, lo, hi);
    printf("  bounding box: [%g, %g] x [%g, %g] x [%g, %g] m\n", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
    for (int b = 0; b < m->ncell_blocks; b++) {
        double jmin = INFINITY, jmax = -INFINITY;
        int64_t n = m->cells[b].count;
        double *lo = malloc(sizeof(double) * (size_t)(n + 1)), *hi = malloc(sizeof(double) * (size_t)(n + 1));
        if (lo && hi && mesh_block_jacobian_range(m, b, lo, hi) == FEM_OK)
            for (int64_t c = 0; c < n; c++) jmin = fmin(jmin, lo[c]), jmax = fmax(jmax, hi[c]);
        free(lo);
        free(hi);
        printf("  Jacobian determinant (%s): %.4g to %.4g m^%d per unit reference %s\n",
               m->cells[b].type->name, jmin, jmax, m->dim, m->dim == 3 ? "volume" : "area");
    }
}

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int app_info(const AppOptions *o) {
    Mesh m;
    MeshReadOptions mo = app_mesh_options(o, NULL, NULL);
    const char *mesh_path = o->file;
    Problem pb;
    int have_problem = 0;
    if (has_suffix(o->file, ".xml")) {
        FEM_TRY(problem_read(o->file, &pb));
        have_problem = 1;
        mesh_path = pb.mesh_file;
        mo = app_mesh_options(o, &pb, NULL);
        app_print_problem(&pb);
    }
    int status = mesh_read(mesh_path, &mo, &m);
    if (have_problem) problem_destroy(&pb);
    FEM_TRY(status);
    app_print_mesh(&m);
    mesh_destroy(&m);
    return FEM_OK;
}
