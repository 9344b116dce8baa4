/* A physics set up for one problem on one mesh: the operator's q-point functions and constants, each cell's
 * material, each boundary facet's condition, the Dirichlet dofs and values. physics/heat.c and
 * physics/elasticity.c build one from the Problem; app/ runs it. The helpers here map the problem's region
 * and boundary names onto the mesh, with one clear error for every name the mesh does not have. */
#ifndef FEMTO_MODEL_H
#define FEMTO_MODEL_H

#include "fem/dist.h"
#include "fem/operator.h"
#include "io/problem.h"

FEM_EXTERN_C_BEGIN

enum { MODEL_MAX_REGIONS = 64 };

typedef struct Model {
    const char *name; /* "heat", "elasticity" */
    int ncomp;
    int symmetric; /* the Jacobian is symmetric (CG applies) */
    int linear;    /* the residual is affine in the unknown (one Newton step solves it) */
    OpPhysics phys;
    int32_t *cell_tags[MESH_MAX_BLOCKS];  /* material index per cell */
    int32_t *facet_tags[MESH_MAX_BLOCKS]; /* natural-condition record per facet, -1 none */
    int64_t ndir;
    int32_t *dir_dofs;  /* constrained dofs (host) */
    double *dir_values; /* their values at full load (host) */
    int32_t *dir_call;  /* the model_add_dirichlet call each came from (0, 1, ...: the later call wins) */
    int ncalls;
    void *ctx;        /* the physics' constants (owned, unless ctx_borrowed) */
    int ctx_borrowed; /* ctx is another model's (model_localize): not freed with this one */
    /* Over MPI ranks, the rank's part this model is made on (model_join_part, or model_localize), which the
     * physics' evaluations (fem/evaluate.h EvalField.dist) are collective over; NULL: a whole space's model
     */
    const Dist *dist;
    int nregions;
    const char *region_names[MODEL_MAX_REGIONS]; /* material i's region (the problem's strings) */
} Model;

void model_destroy(Model *md);

/* cell_tags[b][c] = index i of the region names[i] whose physical group holds cell c. One unnamed region
 * (names[i] = "") takes every cell. Errors: a region the mesh lacks (lists the groups it has), a cell with no
 * region or with two. */
int model_cell_tags(const Problem *pb, const Mesh *m, int n, const char *const *names, const int *lines,
                    int32_t **cell_tags);

/* The boundary group named `name` (error naming the problem file and line and listing the mesh's boundary
 * groups when absent). */
int model_boundary(const Problem *pb, const Mesh *m, const char *name, int line, const PhysicalGroup **g);

/* Natural boundary conditions per facet. boundary[i] names the group of condition i, or is NULL for a
 * condition that is not natural (Dirichlet). Several conditions may act on one facet (convection and
 * radiation on one surface): every distinct set of them becomes one record, sets[k] with bit i set when
 * condition i acts, and md->facet_tags[b][c] is the record of facet c of facet block b (-1: none). At most
 * max_sets records. */
int model_natural_sets(Model *md, const Problem *pb, const Mesh *m, int n, const char *const *boundary,
                       const int *lines, int max_sets, uint64_t *sets, int *nsets);

/* Appends the dofs node * ncomp + c (c in the bit mask `components`) of the nodes on group g, with value
 * values[c], to the model's Dirichlet list (later entries win on shared nodes). */
int model_add_dirichlet(Model *md, const Space *sp, const PhysicalGroup *g, int components,
                        const double *values);
/* Sorts the Dirichlet list and removes duplicates (keeping the value of the latest call). */
int model_finish_dirichlet(Model *md);

/* A model made on a rank's part (its local space, fem/dist.h) joins the others: md->dist = d, and the
 * Dirichlet list made consistent over the ranks. A rank's part holds only the boundary facets of its own
 * cells, so a node it shares can be constrained by a facet another rank holds: every copy of a shared node
 * takes every rank's entries for it (one exchange along Dist.share), the latest call winning as in one
 * process. Collective. */
int model_join_part(Model *md, const Dist *d);

/* The constrained dofs of the whole problem: md->ndir in one process; over MPI ranks (md->dist) each
 * rank's owned ones, summed. Collective then. */
int model_count_dirichlet(const Model *md, int64_t *n);

/* A rank's share of a model made on the whole space (fem/dist.h; the tests compare it with the model made on
 * the part, which femto-app uses): the tags of its cells and facets, and every
 * local dof (owned or ghost) that the global model constrains, with its value; local->dist = d. The constants
 * stay the global model's (local->ctx and local->phys.ctx point at them, borrowed: a load factor or time
 * step set on either model is the other's too), so global must outlive local. */
int model_localize(const Model *global, const Dist *d, Model *local);

FEM_EXTERN_C_END

#endif
