/* femto-app: the command line. Parses arguments (getopt_long: --order=2, --order 2, -qv, options before or
 * after the file), runs one subcommand, maps its status to the exit code. This is the only place that decides
 * exit codes (see `femto-app --help`). */
#include "app.h"
#include "backends.h"

#include "fem/comm.h"
#include "fem/device.h"
#include "fem/error.h"
#include "io/interrupt.h"
#include "io/output.h"
#include "io/plot.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage_text =
    "femto-app: finite elements for heat transfer and elasticity, on the CPU or an NVIDIA GPU\n"
    "\n"
    "usage: femto-app run PROBLEM.xml [options]   solve and write results (VTU/PVD, HDF5/XDMF)\n"
    "       femto-app check PROBLEM.xml [options] validate the problem, read the mesh, check every "
    "reference\n"
    "       femto-app info FILE                   describe a problem file (.xml) or a mesh (.msh, .geo)\n"
    "       femto-app schema [FILE]               print the problem-file schema (XSD), or write it to FILE\n"
    "       femto-app --version | --help | COMMAND --help\n"
    "\n"
    "options (override the problem file; `femto-app COMMAND --help` says which a command takes):\n"
    "  --device cpu|cuda|auto   where to compute (auto: cuda when a GPU is present)\n"
    "  --order P                element order (1..3 on all cells, up to 8 on quads and hexes)\n"
    "  --output-dir DIR         where results go (created when missing)\n"
    "  --threads N              CPU threads (0: all cores, the default; over MPI ranks each rank's share)\n"
    "  --force                  mesh a .geo even when the estimated element count is very large\n"
    "  -q, --quiet              print only errors\n"
    "  -v, --verbose            print solver details\n"
    "Options may come before or after the file, as --order 2 or --order=2; short ones combine (-qv).\n"
    "\n"
    "exit codes: 0 ok, 1 usage error, 2 bad input (problem file, mesh, output path),\n"
    "            3 solver did not converge, 4 device error (no GPU, out of GPU memory), 5 internal error\n"
    "\n"
    "The problem file format is documented in docs/problem-file.md (installed under share/femto).\n"
    "All quantities are SI: m, kg, s, K, Pa, W; temperatures in kelvin.\n";

enum { OPT_DEVICE = 256, OPT_ORDER, OPT_OUTPUT_DIR, OPT_THREADS, OPT_FORCE };

static const struct option long_options[] = {
    {"device", required_argument, NULL, OPT_DEVICE},
    {"order", required_argument, NULL, OPT_ORDER},
    {"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"force", no_argument, NULL, OPT_FORCE},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A subcommand: what it runs, which options it takes (the `val`s of long_options), whether it needs a file.
 */
typedef struct {
    const char *name;
    int (*run)(const AppOptions *);
    int options[8];
    int needs_file;
    const char *help;
} Command;

static const Command commands[] = {
    {"run",
     app_run,
     {OPT_DEVICE, OPT_ORDER, OPT_OUTPUT_DIR, OPT_THREADS, OPT_FORCE, 'q', 'v'},
     1,
     "usage: femto-app run PROBLEM.xml [--device cpu|cuda|auto] [--order P] [--output-dir DIR]\n"
     "                    [--threads N] [--force] [-q] [-v]\n"
     "Reads the problem and its mesh, solves (Newton with matrix-free Krylov), prints one line per\n"
     "time or load step (per Newton iteration with -v) and a summary, and writes results into the output\n"
     "directory: NAME.pvd with one NAME_NNNN.vtu per output time, NAME.h5 with NAME.xdmf, and\n"
     "NAME_summary.txt. Open the .pvd or the .xdmf in ParaView. These files are one set: a run that fails\n"
     "(exit code 3 when the solver does not converge) or is interrupted\n"
     "leaves the previous results in the directory as they were.\n"
     "Results that look absurd for the geometry (a displacement larger than the body, a strain above 1 in\n"
     "a linear model, temperatures below 0 K) give a line starting with 'warning:' on stderr (not with -q)\n"
     "and are counted in the summary either way.\n"
     "  --device cpu|cuda|auto   where to compute (default: the problem file's <device>, else auto)\n"
     "  --order P                element order, overriding <discretization order>\n"
     "  --output-dir DIR         where results go, overriding <output directory>\n"
     "  --threads N              CPU threads; 0: all cores, over MPI ranks each rank's share of its\n"
     "                           machine's (default: the problem file's, else 0)\n"
     "  --force                  mesh a .geo even when the estimated element count is very large\n"
     "  -q, --quiet              print only errors\n"
     "  -v, --verbose            print every Newton iteration\n"},
    {"check",
     app_check,
     {OPT_DEVICE, OPT_ORDER, OPT_OUTPUT_DIR, OPT_THREADS, OPT_FORCE, 'q', 'v'},
     1,
     "usage: femto-app check PROBLEM.xml [--order P] [--force] [-q] [run's other options, ignored]\n"
     "Validates the problem file against femto's schema, reads the mesh and checks that every region\n"
     "and boundary the problem names exists in it, without solving. It takes every option of `run`, so\n"
     "that a run's command line can be checked as it is; only --order and --force change what is checked.\n"
     "Exit code 0 when all is well,\n"
     "2 with one message naming the file and line (or mesh entity) otherwise. Values that are valid but\n"
     "probably a slip (a temperature below 100 K: Celsius instead of kelvin?) give a 'warning:' line on\n"
     "stderr (not with -q).\n"
     "  --order P    check with this element order instead of the problem file's\n"
     "  --force      mesh a .geo even when the estimated element count is very large\n"
     "  -q, --quiet  print only errors\n"},
    {"info",
     app_info,
     {OPT_FORCE},
     1,
     "usage: femto-app info FILE [--force]\n"
     "For a problem file (.xml): every setting of the problem (physics, materials per region, boundary\n"
     "conditions, time stepping, solver, output, device) with its unit and the defaults filled in, then\n"
     "its mesh as below. For a mesh (.msh or .geo): element counts per type, physical groups (name,\n"
     "dimension, size), topology counts, bounding box and the range of Jacobian determinants.\n"
     "  --force  mesh a .geo even when the estimated element count is very large\n"},
    {"schema",
     app_schema,
     {0},
     0,
     "usage: femto-app schema [FILE]\n"
     "Prints the XML Schema (XSD) of femto's problem file, the one femto validates against, or writes it\n"
     "to FILE. Point an XML editor at it for completion and checking while typing, e.g.\n"
     "  femto-app schema problem.xsd\n"
     "and in the problem file: <femto xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
     "                              xsi:noNamespaceSchemaLocation=\"problem.xsd\">\n"},
};

/* Over MPI ranks only rank 0 prints (the launcher's rank: also before MPI starts). */
void app_say(const AppOptions *o, int level, const char *fmt, ...) {
    if (o->verbosity < level || comm_launch_rank() != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void app_warn(const AppOptions *o, const char *fmt, ...) {
    if (o->verbosity < 1 || comm_launch_rank() != 0) return;
    fflush(stdout);
    fputs("warning: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

static int usage_error(const Command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const Command *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "femto-app: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'femto-app %s --help'.\n", cmd->name);
    else
        fprintf(stderr, "\nTry 'femto-app --help'.\n");
    return FEM_ERR_USAGE;
}

static const Command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static int takes(const Command *cmd, int val) {
    for (int i = 0; i < 8 && cmd->options[i]; i++)
        if (cmd->options[i] == val) return 1;
    return 0;
}

/* "--order" or "-q/--quiet", as the user would type it. */
static void option_name(int val, char *out, size_t cap) {
    for (const struct option *o = long_options; o->name; o++)
        if (o->val == val) {
            if (val < 256)
                snprintf(out, cap, "-%c/--%s", val, o->name);
            else
                snprintf(out, cap, "--%s", o->name);
            return;
        }
    snprintf(out, cap, "-%c", val);
}

static int is_long_option(int val) {
    for (const struct option *o = long_options; o->name; o++)
        if (o->val == val) return 1;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

/* An option getopt_long did not accept: unknown, ambiguous, missing its value or given one it does not take.
 * getopt_long reports a short option by its character in optopt, a long one by its val (0 when unknown);
 * then `arg`, the argument it stopped at, spells the long option as typed. */
static int bad_option(const Command *cmd, int c, const char *arg) {
    char name[64];
    if (c == ':') {
        option_name(optopt, name, sizeof name);
        return usage_error(cmd, "%s needs a value", name);
    }
    if (optopt && !is_long_option(optopt)) return usage_error(cmd, "unknown option '-%c'", optopt);
    int n = (int)strcspn(arg, "=");
    if (optopt) return usage_error(cmd, "option '%.*s' takes no value", n, arg);
    int matches = 0;
    for (const struct option *o = long_options; o->name; o++)
        matches += n > 2 && strncmp(o->name, arg + 2, (size_t)n - 2) == 0;
    if (matches > 1) return usage_error(cmd, "option '%.*s' is ambiguous; spell it out", n, arg);
    return usage_error(cmd, "unknown option '%.*s'", n, arg);
}

/* Applies one parsed option to o; a value out of range is a usage error. */
static int apply_option(const Command *cmd, int c, const char *arg, AppOptions *o) {
    switch (c) {
    case 'q':
        o->verbosity = 0;
        return FEM_OK;
    case 'v':
        o->verbosity = 2;
        return FEM_OK;
    case OPT_FORCE:
        o->force = 1;
        return FEM_OK;
    case OPT_DEVICE:
        if (strcmp(arg, "cpu") == 0)
            o->device = DEVICE_CPU;
        else if (strcmp(arg, "cuda") == 0)
            o->device = DEVICE_CUDA;
        else if (strcmp(arg, "auto") == 0)
            o->device = DEVICE_AUTO;
        else
            return usage_error(cmd, "--device must be cpu, cuda or auto, not '%s'", arg);
        return FEM_OK;
    case OPT_ORDER:
        if (!parse_int(arg, 1, 8, &o->order))
            return usage_error(cmd, "--order needs an element order from 1 to 8, not '%s'", arg);
        return FEM_OK;
    case OPT_THREADS:
        if (!parse_int(arg, 0, 4096, &o->threads))
            return usage_error(cmd, "--threads needs a thread count from 0 (all cores) to 4096, not '%s'",
                               arg);
        return FEM_OK;
    case OPT_OUTPUT_DIR:
        if (!arg[0]) return usage_error(cmd, "--output-dir needs a directory, not an empty string");
        o->output_dir = arg;
        return FEM_OK;
    }
    return usage_error(cmd, "femto bug: option %d has no handler", c);
}

/* Parses the arguments after the command name into o; prints the command's help (*help = 1) for --help. */
static int parse_options(const Command *cmd, int argc, char **argv, AppOptions *o, int *help) {
    opterr = 0; /* femto words its own messages */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":hqv", long_options, NULL)) != -1) {
        if (c == 'h') return *help = 1, FEM_OK;
        if (c == '?' || c == ':') return bad_option(cmd, c, argv[optind - 1]);
        if (!takes(cmd, c)) {
            char name[64];
            option_name(c, name, sizeof name);
            return usage_error(cmd, "'%s' does not take %s", cmd->name, name);
        }
        FEM_TRY(apply_option(cmd, c, optarg, o));
    }
    if (optind < argc) o->file = argv[optind++];
    if (optind < argc) return usage_error(cmd, "one file at a time: unexpected '%s'", argv[optind]);
    if (!o->file && cmd->needs_file) return usage_error(cmd, "'%s' needs a file", cmd->name);
    return FEM_OK;
}

static int version(void) {
    printf("femto %s (commit %s, CUDA backend: %s)\n", FEMTO_VERSION, FEMTO_CONFIGURED_COMMIT,
#ifdef FEMTO_HAVE_CUDA
           "built in"
#else
           "not built"
#endif
    );
    /* the optional libraries (CMakeLists.txt finds each; the README says what each is for) */
    const char *with[] = {
#ifdef FEMTO_HAVE_MPI
        "MPI",
#endif
#ifdef FEMTO_HAVE_METIS
        "METIS",
#endif
#ifdef FEMTO_HAVE_HYPRE
        "hypre BoomerAMG",
#endif
#ifdef FEMTO_HAVE_MUMPS
        "MUMPS",
#endif
#ifdef FEMTO_HAVE_CHOLMOD
        "CHOLMOD",
#endif
#ifdef FEMTO_HAVE_CUDSS
        "cuDSS",
#endif
        NULL,
        NULL};
    int n = 0;
    while (with[n]) n++;
    if (h5out_parallel()) with[n++] = "parallel HDF5"; /* one HDF5 file written by every MPI rank */
    printf("built with:");
    for (int i = 0; i < n; i++) printf("%s %s", i ? "," : "", with[i]);
    printf("%s\n", n ? "" : " none of the optional libraries");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return FEM_ERR_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, PLOT_HELPER_COMMAND) == 0) return plot_helper_main(argc, argv); /* not for people */
    plot_use_helper("/proc/self/exe"); /* the plots of a large run: io/plot.h */
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        const Command *about = argc > 2 ? find_command(argv[2]) : NULL;
        fputs(about ? about->help : usage_text, stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) return version();
    const Command *cmd = find_command(name);
    if (!cmd && name[0] == '-')
        return usage_error(NULL, "expected a command (run, check, info or schema) before '%s'", name);
    if (!cmd) return usage_error(NULL, "unknown command '%s' (expected run, check, info or schema)", name);

    AppOptions o = {.device = -1, .verbosity = 1, .threads = -1};
    int help = 0;
    int status = parse_options(cmd, argc - 1, argv + 1, &o, &help);
    if (status) return status;
    if (help) {
        fputs(cmd->help, stdout);
        return 0;
    }
    fem_clear_error();
    backends_register();
    interrupt_install("femto-app"); /* Ctrl-C and kill remove a run's half-written results (io/interrupt.h) */
    status = cmd->run(&o);
    if (status != FEM_OK) {
        if (comm_launch_rank() == 0) /* over MPI ranks every rank has the same sentence: rank 0 says it */
            fprintf(stderr, "femto-app: %s\n", fem_last_error()[0] ? fem_last_error() : "failed");
        return status;
    }
    return 0;
}
