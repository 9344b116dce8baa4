/* State shared by the steps of `femto-app run` and `check`. */
#ifndef FEMTO_RUN_H
#define FEMTO_RUN_H

#include "app.h"

#include "fem/device.h"
#include "fem/halo.h"
#include "fem/solvers/newton.h"
#include "io/mesh_read.h"
#include "io/plot.h"
#include "io/results.h"
#include "io/resultset.h"
#include "io/series.h"
#include "physics/physics.h"
#include "physics/sanity.h"
#include "fem/solvers/stepper.h"

/* Key numbers of a run, printed in the summary and written to OUTPUT/NAME_summary.txt ("key value unit"
 * per line), which the sample regression tests compare with inputs/<sample>/expected.txt. */
enum { SUMMARY_MAX = 128 };
typedef struct {
    int n;
    char key[SUMMARY_MAX][PROBLEM_NAME_MAX + 96];
    double value[SUMMARY_MAX];
    char unit[SUMMARY_MAX][16];
} Summary;

void summary_add(Summary *s, const char *key, double value, const char *unit);

/* A field a physics solved and a later physics of the run reads (the temperature of thermal strain). Over MPI
 * ranks the rank's part of it: its nodes' values (owned and ghost), numbered as node_global says. */
typedef struct {
    const char *name;     /* the physics' field name */
    Space *sp;            /* owned: the whole space (over MPI ranks, on ranks other than 0, its outline) */
    Vec u;                /* owned, device */
    double *host;         /* owned */
    int64_t nlocal;       /* over MPI ranks: the part's nodes */
    int64_t *node_global; /* owned: [nlocal] their whole numbers (the keeper's Dist.node_global); else NULL */
} RunField;
enum { RUN_MAX_FIELDS = 4 };

/* A physics' time series (app/run_series.c): the probes at every output time, Newton's history. */
typedef struct {
    int transient;            /* the x column is the time [s]; else the load factor */
    const char *field, *unit; /* the physics' unknown */
    Series probes;            /* x, then every probe's value (each component of a vector) */
    Series conv;     /* step, x, Newton iteration, residual norm, linear iterations, seconds, accepted */
    int64_t pending; /* the first row of conv whose solve has not been reported yet */
    int solves;
    int status;       /* the first failure while recording (out of memory) */
    int plotting;     /* run_series_plot has started the plots: run_series_write finishes them */
    PlotJob plots[2]; /* the probes' plot and the convergence plot, while their children draw */
} RunSeries;

/* Where a run's time goes, phase by phase (the -v "phases:" line and the *_seconds keys of the summary). */
typedef enum {
    PHASE_PROBLEM,  /* reading and checking the problem file */
    PHASE_DEVICE,   /* starting the device */
    PHASE_SPACE,    /* dof numbering of the space */
    PHASE_MODEL,    /* the physics' model (materials, tags, fixed dofs) and its checks */
    PHASE_RANKS,    /* over MPI ranks: the partition, the rank's part of the space and model, its halo */
    PHASE_OPERATOR, /* the operator: geometric factors, restrictions, uploads */
    PHASE_RESULTS,  /* the solution vector and the results' mesh (output points, regions) */
    PHASE_SUMMARY,  /* the physics' summary: extremes, balances, reactions, probes */
    PHASE_FIELDS,   /* derived fields for output (flux, stress) */
    PHASE_WRITE,    /* writing VTU and HDF5 */
    RUN_NPHASES
} RunPhase;

typedef struct {
    const AppOptions *o;
    Summary summary;
    ResultSet *set; /* the run's files, committed together when the whole run succeeded (io/resultset.h) */
    char base[PROBLEM_NAME_MAX]; /* the output base name as the problem gives it (for NAME_summary.txt) */
    Problem pb;
    Mesh mesh;
    Device dev;
    int have_dev;
    struct DeviceStart *device_start; /* run: the device starting on its thread, joined by run_device_ready */
    int thread_share; /* over MPI ranks, where the threads are OpenMP's default: this rank's share of its
                       * machine's cores (comm_thread_share), which its CPU device takes; 0 otherwise */
    double t0;
    double t_mesh, t_solve, t_output;              /* seconds spent per phase, for the closing line */
    double t_phase[RUN_NPHASES];                   /* finer: where setup and output go */
    int newton_its, linear_its, capped, pc_setups; /* over every solve of the run, for the summary */
    double pc_seconds;                             /* preconditioner setups, part of the solve time */
    int single_solve;        /* one solve in the whole step: Newton's lines are worth printing without -v */
    double ksp_t0, ksp_last; /* progress lines during a long linear solve (-v) */
    FemWarnings warnings;    /* implausible inputs and results: app_warn lines, counted in the summary */
    int nfields;
    RunField fields[RUN_MAX_FIELDS];
    RunSeries *series;      /* the series of the physics being solved: Newton's iterations go there */
    char order_cache[4096]; /* the folder of the mesh cache, where cuDSS's reordering is kept ("" none) */
    int plots;              /* PNG plots written */
    int plots_noted;        /* the summary said that none are drawn */
} Run;

/* A physics solved over MPI ranks: the rank's part of the space, on which the physics' model is made and
 * the solve, the summary and the output work (the operator with the halo). */
typedef struct {
    int on; /* the run is split over ranks */
    int32_t *part;
    Dist d;
    Halo halo;
    OutPart out;        /* the rank's piece of the output (its cells and nodes; io/output.h) */
    int64_t *out_cells; /* out.cell_global */
    int have_dist, have_halo;
} RunDist;

/* The partition (rank 0 computes and keeps it) and the rank's part of the space gsp (rank 0's whole space,
 * made and sent by rank 0; the others pass their outline). Collective. */
int run_dist_setup(RunDist *rd, const Space *gsp);
/* The part's halo on the device (once the device is ready). Collective. */
int run_dist_halo(RunDist *rd, Device *dev);
void run_dist_destroy(RunDist *rd);

double app_seconds(void);
/* Adds the seconds since t0 to phase and returns the time now (the next phase's t0). */
double run_tick(Run *r, RunPhase phase, double t0);
/* The device, once it has started (its thread joined, the "device:" line printed, the wait counted as the
 * device phase): the first physics asks after its space and model, which the host builds meanwhile. FEM_OK
 * at once when it is ready or when there is none to wait for (check). */
int run_device_ready(Run *r);

/* One physics of the run (physics/physics.h); with check_only, set up and validate everything, solve nothing.
 * series: the physics writes the series NAME_<physics> (a coupled run's later physics), else NAME. */
int run_physics(Run *r, const PhysicsType *t, int series, int check_only);
void run_release_fields(Run *r);

/* Newton settings from the problem file; symmetric picks CG for the automatic choice, else GMRES. The
 * Krylov solver reports its progress to r (a line every few seconds with -v). */
NewtonSettings run_newton_settings(Run *r, int symmetric, int linear);
/* The time series of physics t on space sp: columns for the problem's probes and Newton's history. */
int run_series_open(RunSeries *rs, const Run *r, const PhysicsType *t, const Space *sp);
void run_series_destroy(RunSeries *rs);
/* A Newton iteration of the solve under way. */
void run_series_iteration(RunSeries *rs, const NewtonStep *st);
/* The solve whose iterations were recorded is over (s: the stepper's report; x: its time or load factor). */
void run_series_solve(RunSeries *rs, const StepReport *s, double x);
/* The probes' values in the solution u (host) at time or load factor x: one row into rs (NULL: none). Over
 * MPI ranks sp and u are the rank's part (its owned and ghost values), and every rank calls it (collective:
 * the lowest rank whose cells hold a probe answers, fem/probe.h); rank 0's rs takes the row. */
int run_series_probes(RunSeries *rs, const Run *r, const Space *sp, const double *u, double x);
/* The plots of the finished series start drawing (each in a child process) while the run goes on to its
 * summary; run_series_write waits for them. Nothing when the problem turns plots off or PLplot is absent.
 * series: as for run_series_write. */
void run_series_plot(RunSeries *rs, Run *r, const char *series);
/* The CSV files into the result set, and their plots unless the problem turns them off (a plot that cannot
 * be drawn is a line of the summary, not a failure). series: NULL for the run's first physics, else the name
 * its files carry after NAME_. */
int run_series_write(RunSeries *rs, Run *r, const char *series);

/* Prints Newton's per-iteration line (a NewtonReport; ctx is the Run). */
void run_report(void *ctx, const NewtonStep *st);
/* After a solve: adds its counts to the run's, warns about linear solves stopped at their cap, and with -v
 * says how Newton converged when that deserves a note. */
void run_account(Run *r, const NewtonResult *res, const NewtonSettings *ns);
/* The problem's space (element order from the problem or --order) with ncomp components on the mesh; an order
 * the mesh's cells do not support is an error naming the problem file. */
int run_space(const Run *r, int ncomp, Space *sp);
/* Every probe of the problem lies inside the mesh (else an error naming the problem file's line). */
int run_check_probes(const Run *r, const Space *sp);
/* Reports the field u (ncomp components named comp[c], unit) at every probe: a summary line and keys
 * "FIELD@PROBE" (component names appended for vectors). Over MPI ranks sp and u are the rank's part, and
 * every rank calls it (collective, as run_series_probes). */
void run_report_probes(Run *r, const Space *sp, const double *u, const char *field, const char *const *comp,
                       const char *unit);

/* The physical tag of each cell's region for output (from a model's material tags and region names). */
int run_region_tags(const Mesh *m, const Model *md, int32_t **out);
void run_free_tags(int32_t **tags);

#endif
