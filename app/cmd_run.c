/* `femto-app run` and `femto-app check`: read the problem and mesh, set up the physics, and (run) solve and
 * write results. Each physics of the problem runs through app/run_physics.c (physics/physics.h). */
#include "run.h"

#include "backends.h"
#include "fem/comm.h"
#include "fem/error.h"
#include "fem/partition.h"
#include "fem/probe.h"
#include "io/fileutil.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>

double app_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

void summary_add(Summary *s, const char *key, double value, const char *unit) {
    if (s->n >= SUMMARY_MAX) return;
    snprintf(s->key[s->n], sizeof s->key[0], "%s", key);
    for (char *c = s->key[s->n]; *c; c++)
        if (*c == ' ') *c = '_';
    s->value[s->n] = value;
    snprintf(s->unit[s->n], sizeof s->unit[0], "%s", unit);
    s->n++;
}

/* NAME_summary.txt, the last file of the run's result set. */
static int write_summary(const Run *r) {
    char name[PROBLEM_NAME_MAX + 32], path[FILEUTIL_PATH_MAX];
    snprintf(name, sizeof name, "%s_summary.txt", r->base);
    FEM_TRY(resultset_path(r->set, name, path, sizeof path));
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    fileout_printf(&fo, "# femto %s summary of %s\n", FEMTO_VERSION, r->pb.path);
    fileout_printf(&fo, "# device: %s\n", r->dev.description);
    for (int i = 0; i < r->summary.n; i++)
        fileout_printf(&fo, "%s %.12g %s\n", r->summary.key[i], r->summary.value[i], r->summary.unit[i]);
    return fileout_commit(&fo);
}

int run_check_probes(const Run *r, const Space *sp) {
    const OutputSettings *o = &r->pb.output;
    for (int i = 0; i < o->nprobes; i++)
        if (!probe_field(sp, NULL, o->probes[i].x, NULL, NULL))
            return fem_fail(FEM_ERR_INPUT, "%s:%d: probe '%s' at (%g, %g, %g) m lies outside the mesh '%s'",
                            r->pb.path, o->probes[i].at.line, o->probes[i].name, o->probes[i].x[0],
                            o->probes[i].x[1], o->probes[i].x[2], r->mesh.path);
    return FEM_OK;
}

void run_report_probes(Run *r, const Space *sp, const double *u, const char *field, const char *const *comp,
                       const char *unit) {
    const OutputSettings *o = &r->pb.output;
    for (int i = 0; i < o->nprobes; i++) {
        double v[3] = {0, 0, 0};
        int found = 0;
        if (probe_field_parts(sp, u, o->probes[i].x, v, NULL, &found) || !found) continue;
        char key[PROBLEM_NAME_MAX + 64];
        app_say(r->o, 1, "  %s at probe '%s' (%g, %g, %g):", field, o->probes[i].name, o->probes[i].x[0],
                o->probes[i].x[1], o->probes[i].x[2]);
        for (int c = 0; c < sp->ncomp; c++) {
            app_say(r->o, 1, " %s%s%.8g", comp ? comp[c] : "", comp ? " = " : "", v[c]);
            snprintf(key, sizeof key, "%s%s%s@%s", field, comp ? "_" : "", comp ? comp[c] : "",
                     o->probes[i].name);
            summary_add(&r->summary, key, v[c], unit);
        }
        app_say(r->o, 1, " %s\n", unit);
    }
}

int run_space(const Run *r, int ncomp, Space *sp) {
    for (int b = 0; b < r->mesh.ncell_blocks; b++) {
        Shape s = r->mesh.cells[b].shape;
        if (r->pb.order > element_max_order(s))
            return fem_fail(FEM_ERR_INPUT,
                            "%s: element order %d is not available on the mesh's %s cells (orders 1 to %d "
                            "there; quadrilaterals and hexahedra go up to 8)",
                            r->pb.path, r->pb.order, shape_name(s), element_max_order(s));
    }
    /* an MPI rank other than 0 holds the mesh's outline: the space's outline, its size rank 0's (the caller
     * shares it) */
    if (r->mesh.outline) return space_outline(&r->mesh, r->pb.order, ncomp, 0, sp);
    return space_create(&r->mesh, r->pb.order, ncomp, sp);
}

static DevKind dev_kind(DeviceKind k) {
    return k == DEVICE_CPU ? DEV_CPU : k == DEVICE_CUDA ? DEV_CUDA : DEV_AUTO;
}

/* A plausibility warning (FemWarnings' printer): one "warning:" line, as every warning of the app. */
static void print_warning(void *ctx, const char *message) {
    app_warn(ctx, "%s\n", message);
}

/* The device starts on a thread of its own while the mesh is read and the first space and model are built (a
 * CUDA context takes about 0.2 s). */
typedef struct DeviceStart {
    Run *r;
    pthread_t thread;
    int started, status;
    char message[1024];
} DeviceStart;

static void *device_start(void *arg) {
    DeviceStart *ds = arg;
    const Problem *pb = &ds->r->pb;
    ds->status = device_create(&ds->r->dev, dev_kind(pb->device.kind), pb->device.threads,
                               pb->device.assembly == ASSEMBLY_ATOMIC ? ASSEMBLE_ATOMIC : ASSEMBLE_GATHER);
    if (ds->status)
        snprintf(ds->message, sizeof ds->message, "%s", fem_last_error()); /* errors are per thread */
    return NULL;
}

/* Waits for the device; its failure becomes this thread's error. */
static int device_join(DeviceStart *ds) {
    if (!ds->r) return FEM_OK; /* setup failed before the device was started */
    if (ds->started) pthread_join(ds->thread, NULL);
    ds->started = 0;
    if (ds->status) return fem_fail(ds->status, "%s", ds->message);
    ds->r->have_dev = 1;
    if (ds->r->thread_share > 0 && ds->r->dev.kind == DEV_CPU)
        cpu_device_set_threads(&ds->r->dev, ds->r->thread_share);
    /* the device was made on another thread: a GPU becomes this thread's current one here */
    return ds->r->dev.ops.sync ? ds->r->dev.ops.sync(&ds->r->dev) : FEM_OK;
}

int run_device_ready(Run *r) {
    DeviceStart *ds = r->device_start;
    if (!ds || r->have_dev) return FEM_OK;
    double t = app_seconds();
    int status = device_join(ds);
    run_tick(r, PHASE_DEVICE, t); /* what the mesh read and the first space did not hide */
    if (!status)
        app_say(r->o, 1, "device: %s%s\n", r->dev.description,
                r->thread_share > 0 ? " (this rank's share of its machine's cores)" : "");
    return status;
}

/* The problem file with the command line's overrides. */
static int read_problem(const AppOptions *o, Run *r) {
    FEM_TRY(problem_read(o->file, &r->pb));
    run_tick(r, PHASE_PROBLEM, r->t0);
    Problem *pb = &r->pb;
    if (o->order) pb->order = o->order;
    if (o->device >= 0) pb->device.kind = (DeviceKind)o->device;
    if (o->threads >= 0) pb->device.threads = o->threads;
    if (o->output_dir) snprintf(pb->output.directory, sizeof pb->output.directory, "%s", o->output_dir);
    snprintf(r->base, sizeof r->base, "%s", pb->output.basename);
    r->warnings = (FemWarnings){print_warning, (void *)o, 0};
    problem_warnings(pb, &r->warnings);
    return FEM_OK;
}

/* The mesh. Over MPI ranks rank 0 reads it before MPI starts (the reader forks a child, which MPI does not
 * survive) and keeps it; every other rank receives its outline (mesh_share); status (the problem's, on this
 * rank) is then agreed by all ranks, so that a bad input on any rank ends every rank with one sentence and
 * one code. */
static int read_mesh(Run *r, int status, const MeshReadOptions *mo) {
    int split = comm_launch_size() > 1;
    if (!status && (!split || comm_launch_rank() == 0)) status = mesh_read(r->pb.mesh_file, mo, &r->mesh);
    if (!split) return status;
    int init = comm_ensure_init();
    if (init) return init;
    /* OpenMP's default is every core of the rank's mask, which the machine's other ranks may share: each
     * rank takes its share instead, unless the problem, --threads or OMP_NUM_THREADS chose */
    int share = comm_thread_share();
    if (share > 0 && r->pb.device.threads == 0 && !getenv("OMP_NUM_THREADS")) {
        r->thread_share = share;
        omp_set_num_threads(share);
    }
    return mesh_share(&r->mesh, status);
}

/* The mesh cache's folder, when it exists, also keeps the coarse solver's reordering of the order-1 matrix
 * (fem/solvers/order_cache.h), so that a run on a cached mesh skips that too. */
static void order_cache_folder(Run *r, const MeshReadOptions *mo) {
    const char *mesh = r->pb.mesh_file, *slash = strrchr(mesh, '/');
    size_t len = strlen(mesh);
    r->order_cache[0] = 0;
    if (!mo->cache_dir || len < 4 || strcmp(mesh + len - 4, ".geo") != 0) return;
    if (mo->cache_dir[0])
        snprintf(r->order_cache, sizeof r->order_cache, "%s", mo->cache_dir);
    else
        snprintf(r->order_cache, sizeof r->order_cache, "%.*s.femto-cache",
                 slash ? (int)(slash - mesh + 1) : 0, mesh);
    struct stat st;
    if (stat(r->order_cache, &st) != 0 || !S_ISDIR(st.st_mode)) r->order_cache[0] = 0;
}

/* Problem, overrides, mesh: the part `check` and `run` share; ds (run only) starts the device meanwhile. */
static int setup(const AppOptions *o, Run *r, DeviceStart *ds) {
    memset(r, 0, sizeof *r);
    r->o = o;
    r->t0 = app_seconds();
    int status = read_problem(o, r);
    if (status && comm_launch_size() <= 1) return status;
    MeshReadResult got = {0};
    MeshReadOptions mo = {0};
    if (!status) {
        mo = app_mesh_options(o, &r->pb, &got);
        app_say(o, 1, "femto %s: %s\n", FEMTO_VERSION, o->file);
    }
    if (ds && !status) {
        ds->r = r;
        ds->started = pthread_create(&ds->thread, NULL, device_start, ds) == 0;
        if (!ds->started) device_start(ds); /* no thread: in line */
    }
    double t = app_seconds();
    FEM_TRY(read_mesh(r, status, &mo));
    order_cache_folder(r, &mo);
    Problem *pb = &r->pb;
    r->t_mesh = app_seconds() - t;
    const Mesh *m = &r->mesh;
    int64_t ncells = 0;
    for (int b = 0; b < m->ncell_blocks; b++) ncells += m->cells[b].count;
    app_say(o, 1, "mesh %s: %dD, %lld nodes, %lld cells", pb->mesh_file, m->dim, (long long)m->nnodes,
            (long long)ncells);
    for (int b = 0; b < m->ncell_blocks; b++)
        app_say(o, 1, "%s %lld %s", b ? "," : " (", (long long)m->cells[b].count, m->cells[b].type->name);
    if (got.origin == MESH_FROM_CACHE)
        app_say(o, 1, "); mesh: cached");
    else if (got.origin == MESH_FROM_GMSH)
        app_say(o, 1, "); mesh: meshed by Gmsh in %.2f s%s%s%s", got.seconds_read,
                got.cache_note[0] ? " (" : "", got.cache_note, got.cache_note[0] ? ")" : "");
    else
        app_say(o, 1, ")");
    int nparents = mesh_parent_count(m);
    if (nparents) {
        const Mesh *top = m;
        while (top->parent) top = top->parent;
        app_say(o, 1, "; multigrid's coarser meshes: the %d before its refinements (%lld cells the coarsest)",
                nparents, (long long)partition_ncells(top));
    } else if (got.parent_note[0]) {
        app_say(o, 1, "; %s", got.parent_note);
    }
    app_say(o, 1, "\n");
    return FEM_OK;
}

static void teardown(Run *r) {
    mesh_destroy(&r->mesh);
    problem_destroy(&r->pb);
}

/* Every physics of the problem in registry order; the first writes the series NAME, later ones NAME_<name>.
 */
static int run_all(Run *r, int check_only) {
    int first = 1;
    for (int i = 0; i < physics_ntypes; i++) {
        const PhysicsType *t = physics_types[i];
        if (!problem_has_physics(&r->pb, t->name)) continue;
        FEM_TRY(run_physics(r, t, !first, check_only));
        first = 0;
    }
    return FEM_OK;
}

void run_release_fields(Run *r) {
    for (int i = 0; i < r->nfields; i++) {
        RunField *f = &r->fields[i];
        vec_destroy(&f->u);
        free(f->host);
        free(f->node_global);
        space_destroy(f->sp);
        free(f->sp);
    }
    r->nfields = 0;
}

double run_tick(Run *r, RunPhase phase, double t0) {
    double t = app_seconds();
    r->t_phase[phase] += t - t0;
    return t;
}

/* -v: where setup and output went, phase by phase. */
static void say_phases(const Run *r) {
    static const char *const names[RUN_NPHASES] = {"problem",  "device",  "space",   "model",  "ranks",
                                                   "operator", "results", "summary", "fields", "write"};
    app_say(r->o, 2, "phases:");
    for (int i = 0; i < RUN_NPHASES; i++)
        app_say(r->o, 2, "%s %s %.3f s", i ? "," : "", names[i], r->t_phase[i]);
    app_say(r->o, 2, "\n");
}

int app_check(const AppOptions *o) {
    Run r;
    int status = setup(o, &r, NULL);
    if (!status) status = run_all(&r, 1);
    if (!status) app_say(o, 1, "%s: the problem and its mesh are consistent\n", o->file);
    teardown(&r);
    return status;
}

/* Over MPI ranks, the peaks of every rank's memory: the largest rank's and the sum over ranks (collective).
 */
typedef struct {
    double host_max, host_sum, device_max;
} RankMemory;

static int rank_memory(double host, double device, RankMemory *m) {
    double most[2] = {host, device};
    *m = (RankMemory){host, host, device};
    FEM_TRY(comm_max(most, 2));
    FEM_TRY(comm_sum(&m->host_sum, 1));
    m->host_max = most[0];
    m->device_max = most[1];
    return FEM_OK;
}

int app_run(const AppOptions *o) {
    Run r;
    DeviceStart ds = {0};
    int status = setup(o, &r, &ds);
    r.device_start = &ds; /* joined by the first physics once its space and model are built */
    /* the series a run may write: NAME, and NAME_<physics> for every physics but the first */
    char names[PHYSICS_MAX_FIELDS][PROBLEM_NAME_MAX];
    const char *series[PHYSICS_MAX_FIELDS + 1] = {""};
    for (int i = 1; i < physics_ntypes && i < PHYSICS_MAX_FIELDS; i++) {
        snprintf(names[i], sizeof names[i], "_%s", physics_types[i]->name);
        series[i] = names[i];
    }
    int writes = comm_rank() == 0; /* over MPI ranks rank 0 writes the results (and prints) */
    if (!status && writes) status = resultset_begin(&r.set, r.pb.output.directory, r.base, series);
    if (!status) status = run_all(&r, 0);
    int joined = device_join(&ds); /* also after a failed setup: the thread must end */
    if (!status) status = joined;
    double total = app_seconds() - r.t0, setup = total - r.t_mesh - r.t_solve - r.t_output;
    struct rusage ru; /* ru_maxrss: the largest resident set so far, in kB on Linux */
    double host_peak = getrusage(RUSAGE_SELF, &ru) ? 0.0 : 1024.0 * (double)ru.ru_maxrss;
    RankMemory mem;
    int gathered =
        rank_memory(host_peak, (double)r.dev.bytes_peak, &mem); /* every rank, whatever its status */
    if (!status) status = gathered;
    if (!status) {
        summary_add(&r.summary, "newton_iterations", r.newton_its, "");
        summary_add(&r.summary, "linear_iterations", r.linear_its, "");
        summary_add(&r.summary, "preconditioner_setups", r.pc_setups, "");
        summary_add(&r.summary, "linear_solves_capped", r.capped, "");
        summary_add(&r.summary, "warnings", r.warnings.count, "");
        summary_add(&r.summary, "plots", r.plots, "");
        summary_add(&r.summary, "mesh_seconds", r.t_mesh, "s");
        summary_add(&r.summary, "setup_seconds", setup, "s");
        summary_add(&r.summary, "solve_seconds", r.t_solve, "s");
        summary_add(&r.summary, "preconditioner_setup_seconds", r.pc_seconds, "s");
        summary_add(&r.summary, "summary_seconds", r.t_phase[PHASE_SUMMARY], "s");
        summary_add(&r.summary, "output_seconds", r.t_output, "s");
        summary_add(&r.summary, "total_seconds", total, "s");
        summary_add(&r.summary, "device_peak_bytes", (double)r.dev.bytes_peak, "B");
        summary_add(&r.summary, "host_peak_bytes", host_peak, "B");
        summary_add(&r.summary, "host_peak_largest_rank_bytes", mem.host_max, "B"); /* one process: its own */
        summary_add(&r.summary, "host_peak_all_ranks_bytes", mem.host_sum, "B");
        summary_add(&r.summary, "device_peak_largest_rank_bytes", mem.device_max, "B");
        if (writes) status = write_summary(&r);
    }
    /* the run's files replace the previous run's all at once; a failed run leaves the previous ones */
    if (!status && writes) status = resultset_commit(&r.set);
    resultset_abort(&r.set);
    status = comm_agree(status); /* every rank ends with rank 0's outcome, or with the failure of any */
    if (!status)
        app_say(o, 1,
                "time: mesh %.2f s, setup and summary %.2f s (preconditioner %.2f s), solve %.2f s, output "
                "%.2f s\n",
                r.t_mesh, setup, r.pc_seconds, r.t_solve, r.t_output);
    if (!status) say_phases(&r);
    if (!status)
        app_say(o, 1, "memory: peak %.1f MB in device buffers, peak %.1f MB resident on the host",
                1e-6 * (double)r.dev.bytes_peak, 1e-6 * host_peak);
    if (!status && comm_size() > 1)
        app_say(
            o, 1,
            " (rank 0; the largest rank's %.1f MB in device buffers and %.1f MB on the host, %.1f MB on the "
            "host over the %d ranks)",
            1e-6 * mem.device_max, 1e-6 * mem.host_max, 1e-6 * mem.host_sum, comm_size());
    if (!status) app_say(o, 1, "\n");
    if (!status)
        app_say(o, 1, "done in %.2f s; results in %s/%s.pvd%s\n", app_seconds() - r.t0, r.pb.output.directory,
                r.pb.output.basename, r.pb.output.hdf5 ? " and .xdmf" : "");
    run_release_fields(&r);
    if (r.have_dev) device_destroy(&r.dev);
    teardown(&r);
    return status;
}
