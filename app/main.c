/* femto-app: the command line. Parses arguments, runs one subcommand, maps its status to the exit code.
 * This is the only place that decides exit codes (see `femto-app --help`). */
#include "app.h"

#include "cpu/cpu.h"
#include "fem/device.h"
#include "fem/error.h"
#include "io/interrupt.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

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
    "       femto-app info FILE                   describe a mesh (.msh, .geo) or a problem file (.xml)\n"
    "       femto-app --version | --help | COMMAND --help\n"
    "\n"
    "options (override the problem file):\n"
    "  --device cpu|cuda|auto   where to compute (auto: cuda when a GPU is present)\n"
    "  --order P                element order (1..3 on all cells, up to 8 on quads and hexes)\n"
    "  --output-dir DIR         where results go (created when missing)\n"
    "  --threads N              CPU threads (default: all cores)\n"
    "  -q, --quiet              print only errors\n"
    "  -v, --verbose            print solver details\n"
    "\n"
    "exit codes: 0 ok, 1 usage error, 2 bad input (problem file, mesh, output path),\n"
    "            3 solver did not converge, 4 device error (no GPU, out of GPU memory), 5 internal error\n"
    "\n"
    "The problem file format is documented in docs/problem-file.md (installed under share/femto).\n"
    "All quantities are SI: m, kg, s, K, Pa, W.\n";

static const char *command_help(const char *cmd) {
    if (strcmp(cmd, "run") == 0)
        return "usage: femto-app run PROBLEM.xml [--device cpu|cuda|auto] [--order P] [--output-dir DIR]\n"
               "                    [--threads N] [-q] [-v]\n"
               "Reads the problem and its mesh, solves (Newton with matrix-free Krylov), prints one line "
               "per\n"
               "Newton iteration and a summary, and writes results into the output directory: NAME.pvd with\n"
               "one NAME_NNNN.vtu per output time, and NAME.h5 with NAME.xdmf. Open the .pvd or the .xdmf "
               "in\n"
               "ParaView. These files are one set: a run that fails (exit code 3 when the solver does not\n"
               "converge) or is interrupted leaves the previous results in the directory as they were.\n";
    if (strcmp(cmd, "check") == 0)
        return "usage: femto-app check PROBLEM.xml [--order P]\n"
               "Validates the problem file against femto's schema, reads the mesh and checks that every "
               "region\n"
               "and boundary the problem names exists in it, without solving. Exit code 0 when all is well,\n"
               "2 with one message naming the file and line (or mesh entity) otherwise.\n";
    if (strcmp(cmd, "info") == 0)
        return "usage: femto-app info FILE\n"
               "For a mesh (.msh or .geo): element counts per type, physical groups (name, dimension, "
               "size),\n"
               "topology counts, bounding box and the range of Jacobian determinants. For a problem file "
               "(.xml):\n"
               "the problem's settings and then the same for its mesh.\n";
    return NULL;
}

void app_say(const AppOptions *o, int level, const char *fmt, ...) {
    if (o->verbosity < level) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void app_warn(const AppOptions *o, const char *fmt, ...) {
    if (o->verbosity < 1) return;
    fflush(stdout);
    fputs("warning: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "femto-app: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'femto-app --help'.\n");
    return FEM_ERR_USAGE;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return FEM_ERR_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("femto %s (commit %s, CUDA backend: %s)\n", FEMTO_VERSION, FEMTO_CONFIGURED_COMMIT,
#ifdef FEMTO_HAVE_CUDA
               "built in"
#else
               "not built"
#endif
        );
        return 0;
    }
    int (*run)(const AppOptions *) = NULL;
    if (strcmp(cmd, "run") == 0)
        run = app_run;
    else if (strcmp(cmd, "check") == 0)
        run = app_check;
    else if (strcmp(cmd, "info") == 0)
        run = app_info;
    else
        return usage_error("unknown command '%s' (expected run, check or info)", cmd);

    AppOptions o = {.device = -1, .verbosity = 1};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(command_help(cmd), stdout);
            return 0;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o.verbosity = 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o.verbosity = 2;
        } else if (strcmp(a, "--device") == 0) {
            if (!val) return usage_error("%s needs a value: cpu, cuda or auto", a);
            if (strcmp(val, "cpu") == 0)
                o.device = DEVICE_CPU;
            else if (strcmp(val, "cuda") == 0)
                o.device = DEVICE_CUDA;
            else if (strcmp(val, "auto") == 0)
                o.device = DEVICE_AUTO;
            else
                return usage_error("--device must be cpu, cuda or auto, not '%s'", val);
            i++;
        } else if (strcmp(a, "--order") == 0) {
            if (!val || !parse_int(val, 1, 8, &o.order))
                return usage_error("--order needs an element order from 1 to 8%s", "");
            i++;
        } else if (strcmp(a, "--threads") == 0) {
            if (!val || !parse_int(val, 1, 4096, &o.threads))
                return usage_error("--threads needs a positive number%s", "");
            i++;
        } else if (strcmp(a, "--output-dir") == 0) {
            if (!val) return usage_error("%s needs a directory", a);
            o.output_dir = val;
            i++;
        } else if (a[0] == '-') {
            return usage_error("unknown option '%s'", a);
        } else if (!o.file) {
            o.file = a;
        } else {
            return usage_error("one file at a time: unexpected '%s'", a);
        }
    }
    if (!o.file) return usage_error("'%s' needs a file", cmd);
    fem_clear_error();
    device_register(DEV_CPU, cpu_device_create);
#ifdef FEMTO_HAVE_CUDA
    device_register(DEV_CUDA, gpu_device_create);
#endif
    interrupt_install("femto-app"); /* Ctrl-C and kill remove a run's half-written results (io/interrupt.h) */
    int status = run(&o);
    if (status != FEM_OK) {
        fprintf(stderr, "femto-app: %s\n", fem_last_error()[0] ? fem_last_error() : "failed");
        return status;
    }
    return 0;
}
