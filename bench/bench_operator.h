/* femto-bench's operator table (bench_operator.c) and CG rows (bench_cg.c): operators of real physics models
 * timed on every device configuration, one row per (case, configuration, operation), printed as one markdown
 * table "operator" (op_table_print) with the device, commit and date of the run in every row. */
#ifndef FEMTO_BENCH_OPERATOR_H
#define FEMTO_BENCH_OPERATOR_H

#include "bench.h"
#include "physics/model.h"

enum { BENCH_MAX_CONFIGS = 10 };
/* Vector passes of one Jacobi-preconditioned CG iteration besides the operator (fem/solvers/krylov.c): dots
 * p.Ap (2 reads), r.r (1), r.z (2); axpbys of x, r and p (2 reads + 1 write each); z = D^-1 r (2 + 1). */
enum { CG_VECTOR_PASSES = 17 };

/* One device configuration: CPU (serial, threaded atomic, threaded gather) or GPU (atomic or gather assembly,
 * with the fused kernels, the shared-memory fused kernel alone, or the separate kernels). */
typedef struct {
    Device *dev;
    int gpu, unfused, fused_shared;
    double copy_gbps; /* the reference copy of this configuration (GPU, or host with its threads) */
} OpConfig;

/* One operator to time: a space, a model, constrained dofs, and the host vectors it is applied to. */
typedef struct {
    char problem[48], cells[24];
    const Space *sp;
    const Model *md;
    int64_t ndir;
    const int32_t *dir;
    int64_t elements;
    const double *u, *x; /* the state of the residual, the direction of the Jacobian action */
    int linear;          /* the residual is affine in u: R(x0) - R(0) = J x0 is checked */
} OpCase;

typedef struct {
    char problem[48], cells[24], operation[48], device[256], implementation[32], assembly[16];
    int p, nq;
    int64_t elements, dofs;
    double us, element_us; /* element_us < 0: none */
    double bytes;          /* the minimal-bytes model; 0: none */
    double copy_gbps;
    char launch[1024];
} OpRow;

/* The checks of one case on one configuration: relative differences of R(u) and J x from the first
 * configuration's (< 0: this is the first), and for a linear physics ||R(x0) - R(0) - J x0|| / ||J x0|| with
 * x0 the direction zeroed on the constrained dofs (< 0: not linear). */
typedef struct {
    char problem[48], cells[24], device[256], implementation[32], assembly[16];
    int p;
    double r_vs_first, j_vs_first, linear;
} OpCheck;

typedef struct OpTable OpTable;
OpTable *op_table_create(void);
void op_table_destroy(OpTable *t);
OpRow *op_table_add(OpTable *t);
OpCheck *op_table_add_check(OpTable *t);

/* The configurations the options and the machine allow (at most BENCH_MAX_CONFIGS). */
int bench_op_configs(Bench *B, const Options *o, OpConfig *cfg);
/* k's operator on c's device (fused or not), with k's constrained dofs. */
int bench_op_create(Bench *B, const OpConfig *c, const OpCase *k, Operator *op);
/* The columns of a row that come from the case, the configuration and the operator (bytes: the model). */
void bench_op_row(const OpCase *k, const OpConfig *c, const Operator *op, const char *operation, OpRow *r);
/* The minimal bytes of one application (see docs/PERFORMANCE.md, "Operator rows"). */
double bench_op_bytes(const Operator *op, int residual);

/* The rows of one case on every configuration (checked against each other). */
void bench_operator_case(Bench *B, const Options *o, const OpCase *k, OpTable *t);
/* The rows of one shape: every order and physics the options ask for, on m (orders <= 3) or on meshes of
 * fewer elements (higher orders). */
void bench_operator_shape(Bench *B, const Options *o, const char *shape, const Mesh *m, OpTable *t);
/* The CG rows: one CG iteration on the problem of --cg-problem, and its operator rows. */
void bench_cg(Bench *B, const Options *o, OpTable *t);
/* The table and its notes, then the table of checks. */
void op_table_print(const Bench *B, const Options *o, const OpTable *t);

#endif
