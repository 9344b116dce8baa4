/* A physics as a run sees it: one entry of the registry (physics/registry.c) that the application runs through
 * this table alone. app/ never names heat or elasticity: for every physics the problem holds, in registry
 * order, it builds the space and the model, refuses an undetermined problem, solves with the stepper
 * (fem/solvers/stepper.h: steady, load steps, or time steps), writes the unknown and the derived fields the
 * physics gives, and prints the summary the physics writes into a Report. A physics may read the field an
 * earlier one solved (elasticity's thermal strain reads heat's temperature) as its operator's auxiliary field.
 *
 * Adding a physics: its q-functions (a *_qf.h header and entries in physics/qfunctions.h), its model and
 * these hooks (a .c file), one line in registry.c; and, outside physics/, its rows in the problem format's
 * table (io/problem_format.c) and its elements in the XSD. A section the table reads alone
 * (PF_DEST_SECTION) reaches the physics through problem_section() and problem_records(), as records whose
 * structs the physics declares: physics/reaction_diffusion.c is the example. */
#ifndef FEMTO_PHYSICS_H
#define FEMTO_PHYSICS_H

#include "fem/solvers/newton.h"
#include "physics/model.h"

FEM_EXTERN_C_BEGIN

/* Where a physics reports its summary: lines for the person reading the run, keys with units for
 * NAME_summary.txt, and warnings about implausible results. The application provides it. */
typedef struct {
    void *ctx;
    void (*line)(void *ctx, const char *text); /* one or more whole lines, newline-terminated */
    void (*key)(void *ctx, const char *key, double value, const char *unit);
    FemWarnings *warnings;
} Report;

/* printf into rep->line */
void report_line(const Report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a physics accumulates over the time steps of a transient run (heat: the heat through each boundary,
 * integrated in time), kept by the run between the physics' step hook and its summary. */
enum { PHYSICS_TRACK_MAX = 272 };
typedef struct {
    int steps; /* time steps accumulated so far */
    double t;  /* the time of the last one [s] */
    double v[PHYSICS_TRACK_MAX];
} PhysicsTrack;

/* A solved physics, as its hooks see it. Over MPI ranks every rank calls the hooks on its part (fem/dist.h):
 * sp is the part's space, md the part's model (md->dist set: the evaluations, extremes and balances are
 * collective), u and u_host the rank's owned and ghost values (the ghosts current), aux the same of the field
 * read, and op the rank's operator, whose constants (op_update_ctx) are md's. On one process they are the
 * whole space's (md->dist NULL). */
typedef struct PhysicsState PhysicsState;
struct PhysicsState {
    const Problem *pb;
    const Space *sp;
    Model *md;
    Operator *op;
    const Vec *u;          /* the solution (device) */
    const double *u_host;  /* and its host copy */
    const double *aux;     /* the field it reads from an earlier physics (host, scalar, sp->nnodes), or NULL */
    const double *aux_dev; /* the same on the device, or NULL */
    PhysicsTrack *track;   /* a transient run's accumulators (the step hook's), else NULL */
    /* r[sp->ndofs] (host) = the unconstrained residual at the solution (reactions, heat flows); collective
     * over MPI ranks, where the rank's owned dofs hold it and its ghosts are zero */
    int (*residual)(const PhysicsState *s, double *r);
    void *run; /* the run's, for residual */
};

/* A derived nodal field for output: values at the space's nodes, [nnodes][ncomp], malloc'ed by the physics
 * and freed by the caller. */
typedef struct {
    const char *name, *unit;
    int ncomp;
    double *data;
} NodalField;

enum { PHYSICS_MAX_FIELDS = 8 };

typedef struct {
    const char *name;              /* "heat": the problem file's section (problem_has_physics) and messages */
    const char *field, *unit;      /* the unknown: "temperature", "K" */
    const char *const *components; /* names of a vector unknown's components; NULL: a scalar */
    /* the field of an earlier physics this problem reads (NULL: none) */
    const char *(*reads)(const Problem *pb);
    int (*transient)(const Problem *pb); /* time steps (else steady, in load steps when nonlinear) */
    int (*create)(const Problem *pb, const Space *sp, Model *md);
    /* refuses (exit 2, one sentence) a problem whose solution the conditions do not determine */
    int (*check)(const Problem *pb, const Space *sp, const Model *md);
    /* what the run line says of the model ("linear, plane strain"), into buf */
    void (*describe)(const Problem *pb, const Model *md, char *buf, size_t len);
    double (*initial)(const Problem *pb);                 /* the unknown's initial value everywhere */
    void (*set_load)(Model *md, double L);                /* NULL: nothing but prescribed values scales */
    void (*set_time)(Model *md, double a, double theta);  /* NULL: steady only */
    /* the derived fields to write (the problem's <output><fields> decide which); *n set */
    int (*fields)(const PhysicsState *s, NodalField *out, int *n);
    /* after every time step at time t, with the operator still in that step's state and u_host current
     * (NULL: nothing to accumulate) */
    int (*step)(const PhysicsState *s, double t);
    int (*summary)(const PhysicsState *s, const Report *rep);
} PhysicsType;

/* Every physics, in the order a run solves them (a physics comes after those whose fields it reads). */
extern const PhysicsType *const physics_types[];
extern const int physics_ntypes;

FEM_EXTERN_C_END

#endif
