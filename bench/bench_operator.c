/* femto-bench's operator table: the Jacobian action (op_jacobian, and its element-level entry ops.apply_add)
 * and the residual (op_residual, and ops.residual) of real Operators built from the physics models, on every
 * device configuration: CPU serial and threaded (atomic and gather assembly), GPU with the fused kernel
 * (gpu/fused.cu, with gpu/fused_simplex.cu's register kernel on simplices of order <= 2), with the
 * shared-memory fused kernel alone (GpuTuning.fused_shared) and with the separate kernels
 * (GpuTuning.unfused), each with atomic and gather assembly. Every configuration's R(u) and J x are checked
 * against the first one's (relative 1e-12).
 *
 * Bytes: the minimal-bytes model of bench_op_bytes, the same for every configuration of a case, so that the
 * GB/s and "% of copy" columns compare implementations on one scale (docs/PERFORMANCE.md, "Operator rows").
 */
#include "bench_operator.h"

#include "fem/error.h"
#include "fem/geometry.h"
#include "physics/elasticity.h"
#include "physics/heat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct OpTable {
    OpRow *rows;
    int n, cap;
    OpCheck *checks;
    int nchecks, capchecks;
};

OpTable *op_table_create(void) {
    OpTable *t = calloc(1, sizeof *t);
    if (!t) bench_die("the operator table");
    return t;
}

void op_table_destroy(OpTable *t) {
    if (t) free(t->rows), free(t->checks);
    free(t);
}

/* The array a of n entries of `size` bytes with room for one more (*cap grows by doubling). */
static void *room(void *a, int n, int *cap, size_t size) {
    if (n < *cap) return a;
    *cap = *cap ? 2 * *cap : 64;
    void *r = realloc(a, size * (size_t)*cap);
    if (!r) {
        fprintf(stderr, "femto-bench: out of host memory\n");
        exit(1);
    }
    return r;
}

OpRow *op_table_add(OpTable *t) {
    t->rows = room(t->rows, t->n, &t->cap, sizeof(OpRow));
    OpRow *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    return r;
}

OpCheck *op_table_add_check(OpTable *t) {
    t->checks = room(t->checks, t->nchecks, &t->capchecks, sizeof(OpCheck));
    OpCheck *c = &t->checks[t->nchecks++];
    memset(c, 0, sizeof *c);
    return c;
}

/* ------------------------------------------------------------------------------------------------ devices */

int bench_op_configs(Bench *B, const Options *o, OpConfig *cfg) {
    int n = 0;
    if (o->cpu) {
        cfg[n++] = (OpConfig){.dev = &B->cpu1, .copy_gbps = B->cpu_copy_gbps[0]};
        cfg[n++] = (OpConfig){.dev = &B->cpun, .copy_gbps = B->cpu_copy_gbps[1]};
        cfg[n++] = (OpConfig){.dev = &B->cpun_gather, .copy_gbps = B->cpu_copy_gbps[1]};
    }
    if (B->have_gpu) /* fused (register kernel on simplices), separate, shared-memory fused */
        for (int v = 0; v < 3; v++) {
            cfg[n++] = (OpConfig){&B->gpa, 1, v == 1, v == 2, B->copy_gbps};
            cfg[n++] = (OpConfig){&B->gpg, 1, v == 1, v == 2, B->copy_gbps};
        }
    return n;
}

int bench_op_create(Bench *B, const OpConfig *c, const OpCase *k, Operator *op) {
#ifdef FEMTO_HAVE_CUDA
    GpuTuning tu = B->tuning;
    tu.unfused = c->unfused;
    tu.fused_shared = c->fused_shared;
    if (c->gpu) FEM_TRY(gpu_device_tune(c->dev, &tu));
#else
    (void)B;
#endif
    int status = op_create(op, c->dev, k->sp, &k->md->phys, 0, k->md->cell_tags, k->md->facet_tags);
    if (!status) status = op_set_dirichlet(op, k->ndir, k->dir);
#ifdef FEMTO_HAVE_CUDA
    if (c->gpu && (c->unfused || c->fused_shared))
        FEM_TRY(gpu_device_tune(c->dev, &B->tuning)); /* the fused default again */
#endif
    return status;
}

/* The device's description without its assembly (a column of its own). */
static void device_name(const Device *d, char *out, size_t len) {
    snprintf(out, len, "%s", d->description);
    char *tail = strstr(out, " assembly");
    if (tail) *tail = 0;
    char *comma = tail ? strrchr(out, ',') : NULL;
    if (comma) *comma = 0;
}

/* ------------------------------------------------------------------------------------------------ bytes */

double bench_op_bytes(const Operator *op, int residual) {
    /* the residual writes the state that the Jacobian reads: the same bytes, but for a Jacobian action from
     * the compact q-point data (op_block_qdata), which reads neither */
    const int dim = op->space->mesh->dim;
    double bytes = 16.0 * (double)op->space->ndofs; /* input read once, output written once */
    for (int facet = 0; facet < 2; facet++)
        for (int bi = 0; bi < (facet ? op->nfacets : op->ncells); bi++) {
            const OpBlock *b = facet ? &op->facets[bi] : &op->cells[bi];
            const double ne = (double)b->nelem, nq = b->basis.tables.nq;
            const int geo = facet ? FGEO_STRIDE : GEO_STRIDE(dim);
            const int nstate = facet ? op->phys.nfstate : op->phys.nstate;
            bytes += 4.0 * ne * b->basis.tables.ndof; /* dof map */
            const QfQdata *qd = facet ? NULL : op_block_qdata(op, b, residual);
            if (qd) { /* the compact q-point data alone: once per element on affine simplices */
                bytes += 8.0 * ne * (b->qdata_per_elem ? 1 : nq) * qf_geo_doubles(qd->layout, dim);
                continue;
            }
            bytes += 4.0 * ne;                                     /* material or condition tag */
            bytes += 8.0 * ne * nq * (geo + nstate);               /* geometry, q-point state */
            if (!facet && op->needs_x) bytes += 8.0 * ne * nq * 3; /* coordinates, when read */
        }
    return bytes;
}

/* ------------------------------------------------------------------------------------------------ calls */

typedef struct {
    Operator *op;
    Vec *u, *x, *y;
} OpCall;

static int call_jacobian(void *p) {
    OpCall *c = p;
    return op_jacobian(c->op, c->x, c->y);
}
static int call_apply_add(void *p) {
    OpCall *c = p;
    return c->op->ops.apply_add(c->op, c->x, c->y);
}
static int call_residual(void *p) {
    OpCall *c = p;
    return op_residual(c->op, c->u, c->y);
}
static int call_residual_element(void *p) {
    OpCall *c = p;
    return c->op->ops.residual(c->op, c->u, c->y);
}

#ifdef FEMTO_HAVE_CUDA
/* The separate kernels of one cell block, one at a time (the launch line of an unfused row). */
typedef struct {
    Operator *op;
    OpBlock *b;
    const double *in;
    double *out;
    QfArgs a;
    QfFn fn;
} Phase;

static int phase_interpolate(void *p) {
    Phase *f = p;
    Device *d = f->op->dev;
    return d->ops.interpolate(d, &f->b->view, f->in, f->b->uq, f->op->grads ? f->b->duq : NULL);
}
static int phase_qfunction(void *p) {
    Phase *f = p;
    return f->fn(&f->a);
}
static int phase_integrate(void *p) {
    Phase *f = p;
    Device *d = f->op->dev;
    return d->ops.integrate(d, &f->b->view, f->b->s, f->b->f, f->out, f->b->evec);
}

/* "separate kernels of cell block 0: interpolation N µs [launch]; q-function N µs; integration N µs [launch]"
 */
static void describe_unfused(Bench *B, const Options *o, OpCall *c, int residual, char *out, size_t len) {
    Operator *op = c->op;
    if (op_block_qpoints(op, &op->cells[0], 0) || op_block_evec(op, &op->cells[0]))
        bench_die("the q-point arrays and element vectors of the separate kernels");
    Phase f = {op,
               &op->cells[0],
               residual ? c->u->data : c->x->data,
               c->y->data,
               op_block_args(op, &op->cells[0], 0, residual),
               residual ? op->cell_residual : op->cell_jacobian};
    char li[160], lg[160], t0[32], t1[32], t2[32];
    bench_fmt_us(t0, sizeof t0, bench_time(B, op->dev, o, phase_interpolate, &f));
    snprintf(li, sizeof li, "%s", gpu_last_launch(op->dev));
    bench_fmt_us(t1, sizeof t1, bench_time(B, op->dev, o, phase_qfunction, &f));
    bench_fmt_us(t2, sizeof t2, bench_time(B, op->dev, o, phase_integrate, &f));
    snprintf(lg, sizeof lg, "%s", gpu_last_launch(op->dev));
    snprintf(out, len,
             "separate kernels of cell block 0: interpolation %s µs [%s]; q-function %s µs; integration %s "
             "µs [%s]",
             t0, li, t1, t2, lg);
}

/* The fused kernel's launch line, with its registers and resident blocks per SM. */
static void describe_fused(Operator *op, int residual, char *out, size_t len) {
    int regs = 0, blocks = 0;
    snprintf(out, len, "%s", gpu_last_launch(op->dev));
    if (gpu_fused_occupancy(op, 0, residual, &regs, &blocks) == FEM_OK && regs > 0) {
        size_t l = strlen(out);
        snprintf(out + l, len - l, ", %d registers, %d blocks/SM", regs, blocks);
    }
}
#endif

/* ------------------------------------------------------------------------------------------------ one case
 */

void bench_op_row(const OpCase *k, const OpConfig *c, const Operator *op, const char *operation, OpRow *r) {
    snprintf(r->problem, sizeof r->problem, "%s", k->problem);
    snprintf(r->cells, sizeof r->cells, "%s", k->cells);
    snprintf(r->operation, sizeof r->operation, "%s", operation);
    device_name(c->dev, r->device, sizeof r->device);
    snprintf(r->implementation, sizeof r->implementation, "%s", op->implementation);
    snprintf(r->assembly, sizeof r->assembly, "%s",
             c->dev->threads == 1 && !c->gpu       ? "serial"
             : c->dev->assembly == ASSEMBLE_GATHER ? "gather"
                                                   : "atomic");
    r->p = k->sp->order;
    r->nq = op->cells[0].basis.tables.nq;
    r->elements = k->elements;
    r->dofs = k->sp->ndofs;
    r->copy_gbps = c->copy_gbps;
    r->bytes = bench_op_bytes(op, strcmp(operation, "R(u)") == 0);
    snprintf(r->launch, sizeof r->launch, "-");
}

/* ||R(x0) - R(0) - J x0|| / ||J x0|| with x0 = k->x zeroed on the constrained dofs (there R is zero and J the
 * identity, so both sides vanish), computed on the operator's device in the call's vectors; then u, x and the
 * q-point state are those of k again. */
static double linear_check(const OpCase *k, OpCall *c, double *x0) {
    const int64_t n = k->sp->ndofs;
    memcpy(x0, k->x, sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < k->ndir; i++) x0[k->dir[i]] = 0.0;
    double jnorm, dnorm;
    if (vec_upload(c->u, x0) || op_jacobian(c->op, c->u, c->y) || vec_norm(c->y, &jnorm) ||
        op_residual(c->op, c->u, c->x) || vec_axpby(-1.0, c->y, 1.0, c->x) || vec_zero(c->u) ||
        op_residual(c->op, c->u, c->y) || vec_axpby(-1.0, c->y, 1.0, c->x) || vec_norm(c->x, &dnorm) ||
        vec_upload(c->u, k->u) || vec_upload(c->x, k->x) || op_residual(c->op, c->u, c->y))
        bench_die("the linearity check");
    return jnorm > 0 ? dnorm / jnorm : dnorm;
}

/* R(u) and J x of one configuration against the reference (the first configuration's), and the linearity
 * check of a linear physics; a failed check is a MISMATCH line on stderr. */
static void check(Bench *B, const OpCase *k, const OpConfig *c, OpCall *call, double *R, double *J,
                  double **Rref, double **Jref, OpCheck *out) {
    int64_t n = k->sp->ndofs;
    OpRow r;
    bench_op_row(k, c, call->op, "", &r);
    snprintf(out->problem, sizeof out->problem, "%s", r.problem);
    snprintf(out->cells, sizeof out->cells, "%s", r.cells);
    snprintf(out->device, sizeof out->device, "%s", r.device);
    snprintf(out->implementation, sizeof out->implementation, "%s", r.implementation);
    snprintf(out->assembly, sizeof out->assembly, "%s", r.assembly);
    out->p = r.p;
    out->r_vs_first = out->j_vs_first = out->linear = -1;
    if (call_residual(call) || vec_download(call->y, R) || call_jacobian(call) || vec_download(call->y, J))
        bench_die("an operator application");
    if (!*Rref) {
        *Rref = bench_malloc(sizeof(double) * (size_t)n), *Jref = bench_malloc(sizeof(double) * (size_t)n);
        memcpy(*Rref, R, sizeof(double) * (size_t)n);
        memcpy(*Jref, J, sizeof(double) * (size_t)n);
    } else {
        out->r_vs_first = bench_rel_err(R, *Rref, n);
        out->j_vs_first = bench_rel_err(J, *Jref, n);
    }
    if (k->linear) out->linear = linear_check(k, call, R);
    if (out->r_vs_first <= 1e-12 && out->j_vs_first <= 1e-12 && out->linear <= 1e-12) return;
    B->mismatches++;
    fprintf(stderr,
            "femto-bench: MISMATCH %s on %s p=%d, %s (%s): R(u) %.2e, J x %.2e relative to the first "
            "configuration; R(x0) - R(0) - J x0 %.2e relative to J x0 (< 0: not checked)\n",
            k->problem, k->cells, k->sp->order, c->dev->description, call->op->implementation,
            out->r_vs_first, out->j_vs_first, out->linear);
}

/* The rows of one configuration: J x and R(u), each the whole call and its element-level entry. */
static void config_rows(Bench *B, const Options *o, const OpCase *k, const OpConfig *c, OpCall *call,
                        OpTable *t) {
    for (int residual = 0; residual < 2; residual++) {
        OpRow *r = op_table_add(t);
        bench_op_row(k, c, call->op, residual ? "R(u)" : "J x", r);
        r->us = bench_time(B, c->dev, o, residual ? call_residual : call_jacobian, call);
        r->element_us = bench_time(B, c->dev, o, residual ? call_residual_element : call_apply_add, call);
#ifdef FEMTO_HAVE_CUDA
        if (c->gpu && strcmp(call->op->implementation, "ref") == 0)
            describe_unfused(B, o, call, residual, r->launch, sizeof r->launch);
        else if (c->gpu)
            describe_fused(call->op, residual, r->launch, sizeof r->launch);
#endif
    }
}

void bench_operator_case(Bench *B, const Options *o, const OpCase *k, OpTable *t) {
    OpConfig cfg[BENCH_MAX_CONFIGS];
    int ncfg = bench_op_configs(B, o, cfg);
    int64_t n = k->sp->ndofs;
    double *R = bench_malloc(sizeof(double) * (size_t)n), *J = bench_malloc(sizeof(double) * (size_t)n);
    double *Rref = NULL, *Jref = NULL;
    for (int i = 0; i < ncfg; i++) {
        Operator op;
        Vec u, x, y;
        double t0 = bench_now_us();
        if (bench_op_create(B, &cfg[i], k, &op) || vec_create(&u, cfg[i].dev, n) ||
            vec_create(&x, cfg[i].dev, n) || vec_create(&y, cfg[i].dev, n) || vec_upload(&u, k->u) ||
            vec_upload(&x, k->x))
            bench_die("setting up an operator");
        OpCall call = {&op, &u, &x, &y};
        double t1 = bench_now_us();
        check(B, k, &cfg[i], &call, R, J, &Rref, &Jref, op_table_add_check(t));
        config_rows(B, o, k, &cfg[i], &call, t);
        fprintf(stderr, "femto-bench:   %s (%s): operator set up in %.1f s, timed in %.1f s\n",
                cfg[i].dev->description, op.implementation, (t1 - t0) * 1e-6, (bench_now_us() - t1) * 1e-6);
        vec_destroy(&u), vec_destroy(&x), vec_destroy(&y);
        op_destroy(&op);
    }
    free(R), free(J), free(Rref), free(Jref);
}

/* ------------------------------------------------------------------------------------------------ models */

typedef enum { PHYS_HEAT, PHYS_ELASTICITY, PHYS_NEO_HOOKEAN } BenchPhysics;

static const char *physics_label(BenchPhysics ph) {
    return ph == PHYS_HEAT         ? "heat (constant k)"
           : ph == PHYS_ELASTICITY ? "elasticity (linear)"
                                   : "neo-Hookean";
}

/* The model of one physics on sp: one material on every cell, no boundary terms (the Dirichlet dofs are the
 * case's). Problem and materials must outlive the model's creation only. */
static void make_model(BenchPhysics ph, const Space *sp, Model *md) {
    Problem *pb = calloc(1, sizeof *pb);
    if (!pb) bench_die("a problem");
    snprintf(pb->path, sizeof pb->path, "femto-bench");
    HeatMaterial hm = {.k_kind = CONDUCTIVITY_CONSTANT, .k = 1.0};
    double E = 1.0, nu = 0.3;
    ElasticMaterial em = {.young = E,
                          .poisson = nu,
                          .lambda = E * nu / ((1 + nu) * (1 - 2 * nu)),
                          .mu = E / (2 * (1 + nu)),
                          .reference_temperature = 293.15};
    int status;
    if (ph == PHYS_HEAT) {
        pb->physics = PHYSICS_HEAT;
        pb->heat = (HeatProblem){.present = 1, .nmaterials = 1, .materials = &hm};
        status = heat_model_create(pb, sp, md);
    } else {
        pb->physics = PHYSICS_ELASTICITY;
        pb->elasticity =
            (ElasticProblem){.present = 1,
                             .model = ph == PHYS_NEO_HOOKEAN ? ELASTIC_NEO_HOOKEAN : ELASTIC_LINEAR,
                             .nmaterials = 1,
                             .materials = &em};
        status = elasticity_model_create(pb, sp, md);
    }
    free(pb);
    if (status) bench_die("building the model");
}

/* The dofs of the nodes on the face x = 0 (every component): the benchmark meshes' Dirichlet boundary. */
static int64_t face_dofs(const Space *sp, int32_t **dir) {
    int64_t n = 0;
    *dir = bench_malloc(sizeof(int32_t) * (size_t)sp->ndofs);
    for (int64_t i = 0; i < sp->nnodes; i++)
        if (sp->node_x[3 * i] < 1e-9)
            for (int c = 0; c < sp->ncomp; c++) (*dir)[n++] = (int32_t)(i * sp->ncomp + c);
    return n;
}

/* A smooth state with a little noise (a strain of about 1% for elasticity), and a random direction. */
static void case_vectors(BenchPhysics ph, const Space *sp, double *u, double *x) {
    const int nc = sp->ncomp, d = sp->mesh->dim;
    for (int64_t i = 0; i < sp->nnodes; i++) {
        const double *p = &sp->node_x[3 * i];
        for (int c = 0; c < nc; c++) {
            u[i * nc + c] = ph == PHYS_HEAT ? 300.0 + 50.0 * p[0] * p[1] + bench_rnd()
                                            : 1e-2 * p[c] * p[(c + 1) % d] + 1e-6 * bench_rnd();
            x[i * nc + c] = bench_rnd();
        }
    }
}

static void physics_case(Bench *B, const Options *o, BenchPhysics ph, const char *shape, const Mesh *m, int p,
                         OpTable *t) {
    Space sp;
    Model md;
    double t0 = bench_now_us();
    if (space_create(m, p, ph == PHYS_HEAT ? 1 : m->dim, &sp)) bench_die("creating the space");
    make_model(ph, &sp, &md);
    OpCase k = {.sp = &sp, .md = &md, .elements = bench_cells(m, bench_shape(shape)), .linear = md.linear};
    snprintf(k.problem, sizeof k.problem, "%s", physics_label(ph));
    snprintf(k.cells, sizeof k.cells, "%s", bench_shape_title(shape));
    int32_t *dir = NULL;
    k.ndir = o->dirichlet ? face_dofs(&sp, &dir) : 0;
    k.dir = dir;
    double *u = bench_malloc(sizeof(double) * (size_t)sp.ndofs),
           *x = bench_malloc(sizeof(double) * (size_t)sp.ndofs);
    case_vectors(ph, &sp, u, x);
    k.u = u, k.x = x;
    fprintf(stderr, "femto-bench: operator rows: %s, %s p = %d, %lld dofs (space and model in %.1f s) ...\n",
            k.problem, k.cells, p, (long long)sp.ndofs, (bench_now_us() - t0) * 1e-6);
    bench_operator_case(B, o, &k, t);
    free(u), free(x), free(dir);
    model_destroy(&md);
    space_destroy(&sp);
}

/* The orders of the operator rows on a shape: --op-orders (those the shape has), else 1..3, hexahedra 1..6.
 */
static int shape_orders(const Options *o, const char *shape, int *orders) {
    int tensor = !strcmp(shape, "quad") || !strcmp(shape, "hex"), n = 0;
    if (o->nop_orders == 0) {
        int top = !strcmp(shape, "hex") ? 6 : 3;
        for (int p = 1; p <= top; p++) orders[n++] = p;
        return n;
    }
    for (int i = 0; i < o->nop_orders; i++)
        if (o->op_orders[i] <= (tensor ? 8 : 3)) orders[n++] = o->op_orders[i];
    return n;
}

void bench_operator_shape(Bench *B, const Options *o, const char *shape, const Mesh *m, OpTable *t) {
    int orders[BENCH_MAX_ORDERS], norders = shape_orders(o, shape, orders);
    for (int i = 0; i < norders; i++) {
        int p = orders[i];
        Mesh small;
        const Mesh *mesh = m;
        if (p > 3) { /* fewer elements, so that the dofs stay those of p = 3 */
            double s;
            int64_t ne = (int64_t)((double)o->elements * pow(3.0 / p, bench_shape_dim(shape)));
            fprintf(stderr, "femto-bench: meshing %s for p = %d ...\n", bench_shape_title(shape), p);
            bench_make_mesh(o, shape, ne > 100 ? ne : 100, &small, &s, NULL);
            mesh = &small;
        }
        for (int ph = PHYS_HEAT; ph <= PHYS_NEO_HOOKEAN; ph++)
            if (o->physics & (1u << ph)) physics_case(B, o, (BenchPhysics)ph, shape, mesh, p, t);
        if (mesh == &small) mesh_destroy(&small);
    }
}

/* ------------------------------------------------------------------------------------------------ table */

/* Three significant digits or more: 2031, 203.1, 20.31, 2.031, 0.203, 0.00203 (a slow row on a loaded host
 * is not a zero). */
static void fmt_3(char *buf, size_t len, double v) {
    snprintf(buf, len,
             v >= 1000  ? "%.0f"
             : v >= 100 ? "%.1f"
             : v >= 10  ? "%.2f"
             : v >= 1   ? "%.3f"
                        : "%.3g",
             v);
}

static void print_row(const Bench *B, const OpRow *r) {
    char us[32], eus[32], mb[32] = "-", gbs[32] = "-", pct[32] = "-";
    bench_fmt_us(us, sizeof us, r->us);
    bench_fmt_us(eus, sizeof eus, r->element_us);
    double s = r->us * 1e-6;
    if (r->bytes > 0 && s > 0) {
        fmt_3(mb, sizeof mb, r->bytes / 1e6);
        fmt_3(gbs, sizeof gbs, r->bytes / s / 1e9);
        if (r->copy_gbps > 0) snprintf(pct, sizeof pct, "%.0f%%", 100.0 * r->bytes / s / 1e9 / r->copy_gbps);
    }
    char gdofs[32];
    fmt_3(gdofs, sizeof gdofs, s > 0 ? (double)r->dofs / s / 1e9 : 0.0);
    bench_out(
        "| %s | %s | %d | %lld | %lld | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | "
        "%s |\n",
        r->problem, r->cells, r->p, (long long)r->elements, (long long)r->dofs, r->nq, r->operation,
        r->device, r->implementation, r->assembly, us, eus, gdofs, mb, gbs, pct, r->launch, B->commit,
        B->date);
}

/* A relative difference, or "-" where there is none (< 0). */
static void fmt_rel(char *buf, size_t len, double v) {
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1e", v);
}

static void print_checks(const OpTable *t) {
    bench_out("\n## operator checks\n\n");
    bench_out(
        "Each case on each configuration before its rows were timed: ||R(u) - R_first(u)|| / ||R_first(u)|| "
        "and the same for J x, against the first configuration of the case (\"-\" on the first); and for the "
        "linear physics (constant-k heat, linear elasticity) ||R(x0) - R(0) - J x0|| / ||J x0||, x0 the "
        "direction with its constrained dofs zeroed (\"-\": a nonlinear physics). Above 1e-12 is a MISMATCH "
        "(stderr, exit status 1).\n\n");
    bench_out("| problem | cells | p | device | implementation | assembly | R(u) vs first | J x vs first | "
              "R(x0) - R(0) vs J x0 |\n|---|---|---:|---|---|---|---:|---:|---:|\n");
    for (int i = 0; i < t->nchecks; i++) {
        const OpCheck *c = &t->checks[i];
        char r[32], j[32], l[32];
        fmt_rel(r, sizeof r, c->r_vs_first), fmt_rel(j, sizeof j, c->j_vs_first),
            fmt_rel(l, sizeof l, c->linear);
        bench_out("| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", c->problem, c->cells, c->p, c->device,
                  c->implementation, c->assembly, r, j, l);
    }
    bench_out("\n");
}

void op_table_print(const Bench *B, const Options *o, const OpTable *t) {
    bench_out("\n## operator\n\n");
    bench_out(
        "Operators of the physics models (fem/operator.h) on the meshes above (orders above 3 on meshes of "
        "(3/p)^dim as many elements), %s. J x: op_jacobian (the Jacobian action at the state of the last "
        "residual); R(u): op_residual. µs: the whole call, constraints included; element µs: the operator's "
        "element-level entry alone (ops.apply_add, ops.residual). GDOF/s: dofs (nodes x components) per "
        "second of the whole call. MB: the minimal bytes of one application (see the note below the "
        "table); GB/s and %% of copy: those bytes per second of the whole call, against the copy of the "
        "row's device (GPU: device-to-device; CPU: a host copy on the row's threads). Median of %d GPU "
        "runs (CUDA events) after 3 warm-ups, %d CPU runs (wall clock) after 1. Every configuration's R(u) "
        "and J x are checked against the first one's (relative 1e-12).\n\n",
        o->dirichlet ? "Dirichlet conditions on every node of the face x = 0 (cantilever: its clamp)"
                     : "no Dirichlet conditions on the benchmark meshes (cantilever: its clamp)",
        o->repeat, o->cpu_repeat);
    bench_out(
        "| problem | cells | p | elements | dofs | q/elem | operation | device | implementation | assembly | "
        "µs | element µs | GDOF/s | MB | GB/s | %% of copy | launch | commit | date |\n"
        "|---|---|---:|---:|---:|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    for (int i = 0; i < t->n; i++) print_row(B, &t->rows[i]);
    bench_out(
        "\nMinimal bytes of one application: the input vector read once and the output vector written once "
        "(16 dofs); the dof map (4 per element node); the material tag (4 per element); the geometry at "
        "the q-points as stored (GEO_STRIDE(dim) = 1 + dim^2 doubles per q-point: w det J and J^-1); the "
        "q-point state the physics keeps (doubles per q-point: heat 1 + dim, the neo-Hookean model 10, "
        "linear elasticity 0; the residual writes it, the Jacobian reads it); boundary facets with a "
        "natural condition likewise (11 doubles of geometry per q-point). A Jacobian action that runs from "
        "the "
        "compact q-point data (steady constant-k heat: D = k w det J J^-1 A J^-T, dim (dim + 1) / 2 doubles "
        "per q-point, once per element on affine simplices) counts those instead of geometry, state and tag. "
        "Not counted: shape tables, "
        "constraint handling, the output's read-modify-write under atomics, any E-vector. A CG iteration "
        "(Jacobi) adds %d vector passes of 8 bytes per dof to its operator's bytes. Copy references: GPU "
        "%.1f GB/s, host %.1f GB/s (1 thread) and %.1f GB/s (%d threads), read + write.\n\n",
        CG_VECTOR_PASSES, B->copy_gbps, B->cpu_copy_gbps[0], B->cpu_copy_gbps[1], B->threads);
    print_checks(t);
}
