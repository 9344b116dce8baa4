/* femto's table of the problem file's elements and attributes: the one place in C that describes the format.
 *
 * Each row says where an attribute may appear, its type, whether it is required, its unit and largest
 * plausible magnitude, the range of values allowed (with the reason given when a value is outside it), its
 * default, and where the reader stores it (an offset into the struct of its element). The readers walk the
 * table to check, default and store every number, integer, boolean and enumeration; messages take their lists
 * of valid names from it; tests/problem checks it against io/problem.xsd (names, order, types, enumerations
 * and ranges). Names appear in the order messages list them (and docs/problem-file.md describes them).
 *
 * A new parameter is its line in the XSD, one row here and its use in physics/. */
#include "problem_internal.h"

#include "fem/error.h"
#include "fem/quadrature.h"
#include "fem/solvers/newton.h"
#include "physics/reaction_diffusion.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const int elastic_models[] = {ELASTIC_LINEAR, ELASTIC_NEO_HOOKEAN};
static const int planes[] = {PLANE_STRAIN, PLANE_STRESS};
static const int temperature_fields[] = {1};
static const int time_schemes[] = {TIME_BACKWARD_EULER, TIME_BDF2, TIME_CRANK_NICOLSON};
static const int krylovs[] = {KRYLOV_AUTO, KRYLOV_CG, KRYLOV_GMRES, KRYLOV_BICGSTAB};
static const int coarse_solvers[] = {COARSE_SOLVER_AUTO, COARSE_SOLVER_BOOMERAMG, COARSE_SOLVER_CUDSS,
                                     COARSE_SOLVER_CHOLMOD, COARSE_SOLVER_MUMPS};
static const int coarse_precisions[] = {FACTOR_PRECISION_AUTO, FACTOR_PRECISION_DOUBLE,
                                        FACTOR_PRECISION_SINGLE};
static const int coarse_inverses[] = {EXPLICIT_INVERSE_AUTO, EXPLICIT_INVERSE_YES, EXPLICIT_INVERSE_NO};
static const int preconditioners[] = {PRECOND_MULTIGRID, PRECOND_JACOBI, PRECOND_CHEBYSHEV, PRECOND_NONE};
static const int devices[] = {DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA};
static const int assemblies[] = {ASSEMBLY_GATHER, ASSEMBLY_ATOMIC};

/* Enumerations are stored as int. */
_Static_assert(sizeof(ElasticModel) == sizeof(int) && sizeof(TimeScheme) == sizeof(int) &&
                   sizeof(KrylovKind) == sizeof(int) && sizeof(DeviceKind) == sizeof(int),
               "enumerations are stored through int");

/* ---- Physical quantities (see ProblemQuantity: bounds far above every real value, far below overflow) */
static const ProblemQuantity modulus = {1e15, "Pa", "diamond, the stiffest solid, has E = 1.2e12 Pa"};
static const ProblemQuantity stress = {1e15, "Pa", "the strongest solids fail below about 1e11 Pa"};
static const ProblemQuantity displacement = {1e6, "m", "femto models bodies, not planets"};
static const ProblemQuantity acceleration = {1e9, "m/s^2", "the fastest ultracentrifuges reach about 1e7 m/s^2"};
static const ProblemQuantity density = {1e5, "kg/m^3", "osmium, the densest solid, has 22590 kg/m^3"};
static const ProblemQuantity expansion = {1e-2, "1/K", "solids expand by at most about 3e-4 per kelvin"};
static const ProblemQuantity temperature = {1e5, "K", "every solid has melted and boiled long before 1e5 K"};
static const ProblemQuantity conductivity = {1e5, "W/(m K)", "diamond, the best conductor, has 2.2e3 W/(m K)"};
static const ProblemQuantity ratio = {1e6, "", "the most anisotropic conductors (graphite) reach a ratio of about 1e3"};
static const ProblemQuantity specific_heat = {1e6, "J/(kg K)", "hydrogen's, the largest, is 1.4e4 J/(kg K)"};
static const ProblemQuantity source = {1e15, "W/m^3", "the core of a nuclear reactor produces about 1e9 W/m^3"};
static const ProblemQuantity flux = {1e12, "W/m^2", "the surface of the Sun emits 6.3e7 W/m^2"};
static const ProblemQuantity htc = {1e7, "W/(m^2 K)", "boiling and condensation reach about 1e5 W/(m^2 K)"};
static const ProblemQuantity seconds = {1e18, "s", "the universe is 4.4e17 s old"};
static const ProblemQuantity length = {0, "m", NULL};
static const ProblemQuantity diffusivity = {0, "m^2/s", NULL};
static const ProblemQuantity rate = {0, "1/s", NULL};

/* ---- Ranges, with the reason each refuses what it does */
#define GE(x) .lo = PF_INCLUSIVE, .min = (x)
#define GT(x) .lo = PF_EXCLUSIVE, .min = (x)
#define LE(x) .hi = PF_INCLUSIVE, .max = (x)
#define LT(x) .hi = PF_EXCLUSIVE, .max = (x)

static const ProblemRange cell_size = {GE(0), .why = "a cell size is a length",
                                       .hint = "0 keeps the .geo's own sizes"};
static const ProblemRange geometry_order = {GE(1), LE(2), .why = "Gmsh meshes a .geo with straight or quadratic cells",
                                            .expect = "order 1 or 2"};
static const ProblemRange refinements = {GE(0), .why = "a number of refinements cannot be negative"};
static const ProblemRange element_order = {GE(1), LE(8), .why = "femto's elements have orders 1 to 8"};
_Static_assert(QUADRATURE_MAX_DEGREE == 31, "the words of quadrature_degree name femto's highest degree");
static const ProblemRange quadrature_degree = {GE(0), LE(QUADRATURE_MAX_DEGREE),
                                               .why = "femto's quadrature rules go up to degree 31",
                                               .expect = "0 (femto's default) to 31"};
static const ProblemRange positive_conductivity = {
    GT(0), .why = "heat cannot flow through a material whose conductivity is not positive"};
static const ProblemRange mass_density = {GE(0), .why = "a mass density cannot be negative"};
static const ProblemRange heat_capacity = {GE(0), .why = "a heat capacity cannot be negative"};
static const ProblemRange absolute_temperature = {GE(0), .why = "an absolute temperature cannot be negative"};
static const ProblemRange heat_transfer_coefficient = {
    GE(0), .why = "a negative heat transfer coefficient would pump heat against the temperature difference"};
static const ProblemRange emissivity = {
    GT(0), LE(1), .why = "a surface emits a positive fraction of what a black body emits, and at most all of it"};
static const ProblemRange stiffness = {GT(0), .why = "a material needs a positive stiffness"};
static const ProblemRange poisson_ratio = {
    GT(-1), LT(0.5), .why = "at -1 the shear modulus is infinite and below it negative",
    .why_above = "at 0.5 a material is incompressible (lambda is infinite) and above it unstable"};
static const ProblemRange shear_modulus = {GT(0), .why = "a solid resists shear with a positive shear modulus"};
static const ProblemRange time_step = {GT(0), .why = "time only moves forward"};
static const ProblemRange output_every = {GE(1), .why = "results are written every N steps"};
static const ProblemRange newton_rtol = {
    GE(0), LT(1), .why = "Newton stops when the residual falls to this fraction of its scale"};
static const ProblemRange newton_stol = {GE(0), LT(1),
                                         .why = "Newton stops when a correction is this fraction of the solution"};
static const ProblemRange residual_norm = {GE(0), .why = "a residual norm is never negative"};
static const ProblemRange newton_iterations = {GE(1), .why = "Newton needs at least one iteration"};
static const ProblemRange load_steps = {GE(1), .why = "the load is applied in this many increments"};
static const ProblemRange smoothing_degree = {GE(1), LE(10), .why = "the degree of multigrid's Chebyshev smoother",
                                              .expect = "1 to 10"};
static const ProblemRange mg_levels = {
    GE(0), LE(8), .why = "multigrid uses at most this many levels (0: down to order 1)", .expect = "0 to 8"};
static const ProblemRange coarse_cycles = {GE(1), LE(20), .why = "BoomerAMG V-cycles per coarse solve",
                                           .expect = "1 to 20"};
static const ProblemRange krylov_rtol = {
    GT(0), LT(1), .why = "the Krylov solver stops when the residual falls to this fraction of the first"};
static const ProblemRange krylov_iterations = {GE(1)};
static const ProblemRange gmres_restart = {GE(1), .why = "GMRES keeps this many basis vectors"};
static const ProblemRange plot_width = {GE(200), LE(4000), .why = "the plots' width in pixels"};
static const ProblemRange plot_height = {GE(150), LE(4000), .why = "the plots' height in pixels"};
static const ProblemRange thread_count = {GE(0), .why = "a thread count cannot be negative",
                                          .hint = "0 lets OpenMP choose"};

static const ProblemRange positive_diffusivity = {GT(0), .why = "u spreads down its gradient only with a positive diffusivity"};
static const ProblemRange reaction_rate = {GE(0), .why = "a negative reaction would feed u instead of consuming it"};

/* ---- Rows */

/* not stored: read by hand (see problem_format_structural) */
#define REQ(n, t) {.name = n, .type = t, .required = 1}
#define OPT(n, t) {.name = n, .type = t}
#define REQN(n, q, ...) {.name = n, .type = PF_NUMBER, .required = 1, .quantity = &q, __VA_ARGS__}
/* stored at member m of struct T; the rest are designated initializers (.required, .range, .dflt, ...) */
#define AT(T, m) .stored = 1, .offset = offsetof(T, m)
#define NAMED(n, T, m) {.name = n, .type = PF_NAME, .required = 1, AT(T, m)}
#define NUM(n, T, m, ...) {.name = n, .type = PF_NUMBER, AT(T, m), __VA_ARGS__}
#define INT(n, T, m, ...) {.name = n, .type = PF_INTEGER, AT(T, m), __VA_ARGS__}
#define BOOL(n, T, m, d) {.name = n, .type = PF_BOOLEAN, AT(T, m), .dflt = (d)}
#define ENUM(n, words, values, T, m, d)                                                                       \
    {.name = n, .type = PF_ENUM, .choices = words, .choice_values = values, AT(T, m), .dflt = (d)}
#define XYZ(T, m, q)                                                                                         \
    NUM("x", T, m[0], .quantity = &q), NUM("y", T, m[1], .quantity = &q), NUM("z", T, m[2], .quantity = &q)
/* element destinations */
#define IN_PROBLEM(m) .dest = PF_DEST_PROBLEM, .offset = offsetof(Problem, m)
#define RECORD(T) .dest = PF_DEST_RECORD, .size = sizeof(T)
#define PARENT .dest = PF_DEST_PARENT
#define OF_PROBLEM .dest = PF_DEST_PROBLEM, .offset = 0
#define PHYSICS .physics = 1
#define BY_HAND .dest = PF_DEST_NONE /* nothing stored: the section reader reads it */

const ProblemElementSpec problem_format[] = {
    {"femto", "mesh! discretization? heat? elasticity? reaction-diffusion? time? solver? output? device?", {{0}}, BY_HAND},
    {"femto/mesh",
     "",
     {REQ("file", PF_STRING), NUM("size", Problem, mesh_size, .quantity = &length, .range = &cell_size),
      INT("order", Problem, mesh_order, .range = &geometry_order, .dflt = 1),
      INT("refine", Problem, mesh_refine, .range = &refinements)},
     OF_PROBLEM},
    {"femto/discretization",
     "",
     {INT("order", Problem, order, .range = &element_order, .dflt = 1),
      INT("quadrature-degree", Problem, quadrature_degree, .range = &quadrature_degree)},
     OF_PROBLEM},

    {"femto/heat", "material+ temperature* flux* convection* radiation* initial?", {{0}}, PHYSICS},
    {"femto/heat/material",
     "conductivity?",
     {REQ("region", PF_NAME),
      NUM("conductivity", HeatMaterial, k, .quantity = &conductivity, .range = &positive_conductivity),
      NUM("density", HeatMaterial, density, .quantity = &density, .range = &mass_density),
      NUM("specific-heat", HeatMaterial, specific_heat, .quantity = &specific_heat, .range = &heat_capacity),
      NUM("source", HeatMaterial, source, .quantity = &source)},
     RECORD(HeatMaterial)},
    {"femto/heat/material/conductivity", "polynomial? table? constant? anisotropy?", {{0}}, PARENT},
    {"femto/heat/material/conductivity/polynomial", "", {REQ("coefficients", PF_NUMBERS)}, BY_HAND},
    {"femto/heat/material/conductivity/table", "point+", {{0}}, BY_HAND},
    {"femto/heat/material/conductivity/table/point",
     "",
     {REQN("temperature", temperature, .range = &absolute_temperature),
      REQN("value", conductivity, .range = &positive_conductivity)},
     BY_HAND},
    {"femto/heat/material/conductivity/constant",
     "",
     {NUM("value", HeatMaterial, k, .required = 1, .quantity = &conductivity, .range = &positive_conductivity)},
     PARENT},
    {"femto/heat/material/conductivity/anisotropy",
     "",
     {NUM("xx", HeatMaterial, k_tensor[0], .quantity = &ratio, .dflt = 1),
      NUM("yy", HeatMaterial, k_tensor[1], .quantity = &ratio, .dflt = 1),
      NUM("zz", HeatMaterial, k_tensor[2], .quantity = &ratio, .dflt = 1),
      NUM("xy", HeatMaterial, k_tensor[3], .quantity = &ratio), NUM("yz", HeatMaterial, k_tensor[4], .quantity = &ratio),
      NUM("xz", HeatMaterial, k_tensor[5], .quantity = &ratio)},
     PARENT},
    {"femto/heat/temperature",
     "",
     {REQ("boundary", PF_NAME),
      NUM("value", HeatBc, value, .required = 1, .quantity = &temperature, .range = &absolute_temperature)},
     RECORD(HeatBc)},
    {"femto/heat/flux", "", {REQ("boundary", PF_NAME), NUM("value", HeatBc, value, .required = 1, .quantity = &flux)},
     RECORD(HeatBc)},
    {"femto/heat/convection",
     "",
     {REQ("boundary", PF_NAME),
      NUM("h", HeatBc, h, .required = 1, .quantity = &htc, .range = &heat_transfer_coefficient),
      NUM("ambient", HeatBc, ambient, .required = 1, .quantity = &temperature, .range = &absolute_temperature)},
     RECORD(HeatBc)},
    {"femto/heat/radiation",
     "",
     {REQ("boundary", PF_NAME), NUM("emissivity", HeatBc, emissivity, .required = 1, .range = &emissivity),
      NUM("ambient", HeatBc, ambient, .required = 1, .quantity = &temperature, .range = &absolute_temperature)},
     RECORD(HeatBc)},
    {"femto/heat/initial",
     "",
     {NUM("temperature", HeatProblem, initial_temperature, .required = 1, .quantity = &temperature,
          .range = &absolute_temperature, .dflt = 293.15)},
     IN_PROBLEM(heat)},

    {"femto/elasticity",
     "material+ fixed* displacement* traction* pressure* gravity? temperature?",
     {ENUM("model", "linear neo-hookean", elastic_models, ElasticProblem, model, ELASTIC_LINEAR),
      ENUM("plane", "strain stress", planes, ElasticProblem, plane, PLANE_STRAIN)},
     IN_PROBLEM(elasticity),
     PHYSICS},
    {"femto/elasticity/material",
     "",
     {REQ("region", PF_NAME), NUM("young", ElasticMaterial, young, .quantity = &modulus, .range = &stiffness),
      NUM("poisson", ElasticMaterial, poisson, .range = &poisson_ratio),
      NUM("lambda", ElasticMaterial, lambda, .quantity = &modulus),
      NUM("mu", ElasticMaterial, mu, .quantity = &modulus, .range = &shear_modulus),
      NUM("density", ElasticMaterial, density, .quantity = &density, .range = &mass_density),
      NUM("expansion", ElasticMaterial, expansion, .quantity = &expansion),
      NUM("reference-temperature", ElasticMaterial, reference_temperature, .quantity = &temperature,
          .range = &absolute_temperature, .dflt = 293.15)},
     RECORD(ElasticMaterial)},
    {"femto/elasticity/fixed",
     "",
     {REQ("boundary", PF_NAME),
      {.name = "components", .type = PF_COMPONENTS, AT(ElasticBc, components), .dflt = 7}},
     RECORD(ElasticBc)},
    {"femto/elasticity/displacement", "", {REQ("boundary", PF_NAME), XYZ(ElasticBc, value, displacement)},
     RECORD(ElasticBc)},
    {"femto/elasticity/traction", "", {REQ("boundary", PF_NAME), XYZ(ElasticBc, value, stress)}, RECORD(ElasticBc)},
    {"femto/elasticity/pressure",
     "",
     {REQ("boundary", PF_NAME), NUM("value", ElasticBc, pressure, .required = 1, .quantity = &stress)},
     RECORD(ElasticBc)},
    {"femto/elasticity/gravity", "", {XYZ(ElasticProblem, gravity, acceleration)}, IN_PROBLEM(elasticity)},
    {"femto/elasticity/temperature",
     "",
     {NUM("value", ElasticProblem, temperature, .quantity = &temperature, .range = &absolute_temperature),
      ENUM("field", "heat", temperature_fields, ElasticProblem, coupled_temperature, 0)},
     IN_PROBLEM(elasticity)},

    {"femto/reaction-diffusion", "material+ value*", {{0}}, .dest = PF_DEST_SECTION, PHYSICS},
    {"femto/reaction-diffusion/material",
     "",
     {NAMED("region", ReactionMaterial, region),
      NUM("diffusivity", ReactionMaterial, diffusivity, .required = 1, .quantity = &diffusivity,
          .range = &positive_diffusivity),
      NUM("reaction", ReactionMaterial, reaction, .quantity = &rate, .range = &reaction_rate),
      NUM("source", ReactionMaterial, source, .quantity = &rate)},
     RECORD(ReactionMaterial)},
    {"femto/reaction-diffusion/value",
     "",
     {NAMED("boundary", ReactionValue, boundary), NUM("value", ReactionValue, value, .required = 1)},
     RECORD(ReactionValue)},

    {"femto/time",
     "",
     {ENUM("scheme", "backward-euler bdf2 crank-nicolson", time_schemes, TimeSettings, scheme, TIME_BACKWARD_EULER),
      NUM("start", TimeSettings, start, .quantity = &seconds),
      NUM("end", TimeSettings, end, .required = 1, .quantity = &seconds),
      NUM("step", TimeSettings, step, .required = 1, .quantity = &seconds, .range = &time_step),
      INT("output-every", TimeSettings, output_every, .range = &output_every, .dflt = 1)},
     RECORD(TimeSettings)},
    {"femto/solver", "newton? linear?", {{0}}, BY_HAND},
    {"femto/solver/newton",
     "",
     {NUM("rtol", SolverSettings, rtol, .range = &newton_rtol, .dflt = NEWTON_DEFAULT_RTOL),
      NUM("atol", SolverSettings, atol, .range = &residual_norm),
      NUM("stol", SolverSettings, stol, .range = &newton_stol, .dflt = NEWTON_DEFAULT_STOL),
      INT("max-iterations", SolverSettings, max_iterations, .range = &newton_iterations,
          .dflt = NEWTON_DEFAULT_MAX_ITERATIONS),
      BOOL("line-search", SolverSettings, line_search, 1),
      BOOL("reuse-preconditioner", SolverSettings, reuse_pc, 1),
      INT("load-steps", SolverSettings, load_steps, .range = &load_steps, .dflt = 1)},
     IN_PROBLEM(solver)},
    {"femto/solver/linear",
     "",
     {ENUM("type", "auto cg gmres bicgstab", krylovs, SolverSettings, krylov, KRYLOV_AUTO),
      ENUM("preconditioner", "multigrid jacobi chebyshev none", preconditioners, SolverSettings, precond,
           PRECOND_MULTIGRID),
      NUM("rtol", SolverSettings, linear_rtol, .range = &krylov_rtol, .dflt = 1e-8),
      INT("max-iterations", SolverSettings, linear_max_iterations, .range = &krylov_iterations, .dflt = 2000),
      INT("restart", SolverSettings, restart, .range = &gmres_restart, .dflt = 50),
      INT("smoothing-degree", SolverSettings, smoothing_degree, .range = &smoothing_degree, .dflt = 3),
      INT("levels", SolverSettings, mg_levels, .range = &mg_levels),
      ENUM("coarse-solver", "auto boomeramg cudss cholmod mumps", coarse_solvers, SolverSettings, coarse, COARSE_SOLVER_AUTO),
      INT("coarse-cycles", SolverSettings, coarse_cycles, .range = &coarse_cycles, .dflt = 3),
      ENUM("coarse-precision", "auto double single", coarse_precisions, SolverSettings, coarse_precision,
           FACTOR_PRECISION_AUTO),
      ENUM("coarse-inverse", "auto yes no", coarse_inverses, SolverSettings, coarse_inverse, EXPLICIT_INVERSE_AUTO)},
     IN_PROBLEM(solver)},
    {"femto/output", "vtu? hdf5? fields? plots? probe*", {OPT("directory", PF_STRING), OPT("basename", PF_NAME)},
     BY_HAND},
    {"femto/output/vtu",
     "",
     {BOOL("enabled", OutputSettings, vtu, 1), BOOL("compress", OutputSettings, vtu_compress, 1),
      BOOL("subdivide", OutputSettings, vtu_subdivide, 0)},
     IN_PROBLEM(output)},
    {"femto/output/hdf5",
     "",
     {BOOL("enabled", OutputSettings, hdf5, 1), BOOL("compress", OutputSettings, hdf5_compress, 1)},
     IN_PROBLEM(output)},
    {"femto/output/plots",
     "",
     {BOOL("enabled", OutputSettings, plots, 1),
      INT("width", OutputSettings, plot_width, .range = &plot_width, .dflt = 800),
      INT("height", OutputSettings, plot_height, .range = &plot_height, .dflt = 600)},
     IN_PROBLEM(output)},
    {"femto/output/probe",
     "",
     {REQ("name", PF_NAME), NUM("x", OutputProbe, x[0], .required = 1), NUM("y", OutputProbe, x[1]),
      NUM("z", OutputProbe, x[2])},
     RECORD(OutputProbe)},
    {"femto/output/fields",
     "",
     {BOOL("flux", OutputSettings, flux, 1), BOOL("stress", OutputSettings, stress, 1),
      BOOL("strain-energy", OutputSettings, strain_energy, 1)},
     IN_PROBLEM(output)},
    {"femto/device",
     "",
     {ENUM("type", "auto cpu cuda", devices, DeviceSettings, kind, DEVICE_AUTO),
      ENUM("assembly", "gather atomic", assemblies, DeviceSettings, assembly, ASSEMBLY_GATHER),
      INT("threads", DeviceSettings, threads, .range = &thread_count)},
     IN_PROBLEM(device)},
};

/* Read by hand, each for a reason: names are looked up in the mesh later, paths are resolved against the
 * problem file's directory, coefficients and table points go into arrays whose length the file decides. */
const char *const problem_format_structural[] = {
    "femto/mesh@file",
    "femto/heat/material@region",
    "femto/heat/material/conductivity/polynomial@coefficients",
    "femto/heat/material/conductivity/table/point@temperature",
    "femto/heat/material/conductivity/table/point@value",
    "femto/heat/temperature@boundary",
    "femto/heat/flux@boundary",
    "femto/heat/convection@boundary",
    "femto/heat/radiation@boundary",
    "femto/elasticity/material@region",
    "femto/elasticity/fixed@boundary",
    "femto/elasticity/displacement@boundary",
    "femto/elasticity/traction@boundary",
    "femto/elasticity/pressure@boundary",
    "femto/output@directory",
    "femto/output@basename",
    "femto/output/probe@name",
    NULL,
};

const int problem_format_count = (int)(sizeof problem_format / sizeof problem_format[0]);

/* ---- Defaults */

static void store_own_defaults(const ProblemElementSpec *spec, void *base) {
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++) {
        if (!a->stored) continue;
        char *p = (char *)base + a->offset;
        if (a->type == PF_NUMBER)
            *(double *)(void *)p = a->dflt;
        else if (a->type == PF_NAME || a->type == PF_STRING)
            p[0] = '\0';
        else
            *(int *)(void *)p = (int)a->dflt;
    }
}

/* Whether `spec` and each of its ancestors below the first `root_len` bytes of its path store into their
 * parent's struct. */
static int stores_into(const ProblemElementSpec *spec, size_t root_len) {
    char path[256];
    snprintf(path, sizeof path, "%s", spec->path);
    for (size_t n = strlen(path); n > root_len; n = strlen(path)) {
        const ProblemElementSpec *s = problem_format_find(path);
        if (!s || s->dest != PF_DEST_PARENT) return 0;
        *strrchr(path, '/') = '\0';
    }
    return 1;
}

void problem_format_store_defaults(const ProblemElementSpec *spec, void *base) {
    store_own_defaults(spec, base);
    size_t n = strlen(spec->path);
    for (int i = 0; i < problem_format_count; i++) {
        const ProblemElementSpec *s = &problem_format[i];
        if (strncmp(s->path, spec->path, n) == 0 && s->path[n] == '/' && stores_into(s, n))
            store_own_defaults(s, base);
    }
}

void problem_format_defaults(Problem *pb) {
    for (int i = 0; i < problem_format_count; i++)
        if (problem_format[i].dest == PF_DEST_PROBLEM)
            problem_format_store_defaults(&problem_format[i], (char *)pb + problem_format[i].offset);
}

/* ---- Physics sections */

unsigned problem_format_physics_bit(const ProblemElementSpec *spec) {
    unsigned bit = 1;
    for (int i = 0; i < problem_format_count && &problem_format[i] != spec; i++)
        if (problem_format[i].physics) bit <<= 1;
    return spec->physics ? bit : 0u;
}

void problem_format_physics_names(char *out, size_t cap) {
    const char *names[32];
    int n = 0;
    for (int i = 0; i < problem_format_count && n < 32; i++)
        if (problem_format[i].physics) names[n++] = strrchr(problem_format[i].path, '/') + 1;
    size_t k = (size_t)snprintf(out, cap, n == 2 ? "neither" : n == 1 ? "no" : "none of");
    for (int i = 0; i < n; i++) {
        const char *sep = i == 0 ? " " : n == 2 ? " nor " : i == n - 1 ? " or " : ", ";
        k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, "%s<%s>", sep, names[i]);
    }
}

int problem_has_physics(const Problem *pb, const char *name) {
    char path[PROBLEM_NAME_MAX + 8];
    snprintf(path, sizeof path, "femto/%s", name);
    const ProblemElementSpec *spec = problem_format_find(path);
    return spec && (pb->physics & problem_format_physics_bit(spec)) != 0;
}

const ProblemElementSpec *problem_format_find(const char *path) {
    for (int i = 0; i < problem_format_count; i++)
        if (strcmp(problem_format[i].path, path) == 0) return &problem_format[i];
    return NULL;
}

const ProblemAttrSpec *problem_format_attr(const ProblemElementSpec *spec, const char *name) {
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

/* Looks `name` up in a children rule; *min and *max (-1: unbounded) receive how often it may occur. */
int problem_format_child(const ProblemElementSpec *spec, const char *name, int *min, int *max) {
    size_t n = strlen(name);
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        size_t wn = (size_t)(p - w) - 1;
        if (wn == n && memcmp(w, name, n) == 0) {
            char mult = w[wn];
            *min = mult == '!' || mult == '+';
            *max = mult == '!' || mult == '?' ? 1 : -1;
            return 1;
        }
    }
    return 0;
}

/* "material, temperature, flux": the children's names, separated by ", ". */
static void list_children(const ProblemElementSpec *spec, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%.*s", n ? ", " : "", (int)(p - w - 1), w);
    }
}

static void list_attrs(const ProblemElementSpec *spec, int required_only, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++)
        if (!required_only || a->required)
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", a->name);
}

/* "prefix:name" as written. */
static void element_name(const xmlNode *node, char *out, size_t cap) {
    if (node->ns && node->ns->prefix)
        snprintf(out, cap, "%s:%s", (const char *)node->ns->prefix, (const char *)node->name);
    else
        snprintf(out, cap, "%s", (const char *)node->name);
}

static int is_blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

/* The first line of stray text, and the line it is on. libxml2 dates a text node by the line where it ends;
 * counting the newlines after its first visible character gives the line where that character is. */
static int stray_text(const ProblemDoc *d, xmlNode *parent, xmlNode *text) {
    const char *s = (const char *)text->content;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    long line = xmlGetLineNo(text);
    for (const char *p = s; *p; p++) line -= *p == '\n';
    char excerpt[40];
    size_t n = 0;
    for (; s[n] && n + 4 < sizeof excerpt && s[n] != '\n' && s[n] != '\r'; n++) excerpt[n] = s[n];
    while (n > 0 && (excerpt[n - 1] == ' ' || excerpt[n - 1] == '\t')) n--;
    if (!is_blank(s + n)) {
        while (n > 0 && (excerpt[n - 1] & 0xC0) == 0x80) n--; /* do not cut a UTF-8 sequence */
        if (n > 0 && (unsigned char)excerpt[n - 1] >= 0xC0) n--;
        memcpy(excerpt + n, "...", 4);
    } else {
        excerpt[n] = '\0';
    }
    return fem_fail(FEM_ERR_INPUT,
                    "%s:%ld: unexpected text '%s' in <%s>; values are given in attributes, not "
                    "between tags",
                    d->path, line > 0 ? line : (long)problem_line(d, parent), excerpt,
                    (const char *)parent->name);
}

static int check_children(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec, char *path,
                          size_t path_len, size_t path_cap);

/* xsi:noNamespaceSchemaLocation on the root tells an XML editor where the schema is, for completion and
 * checking while typing. femto always validates against its embedded schema, so the hint changes nothing. */
static int is_schema_hint(const xmlNode *node, const xmlAttr *a) {
    return node->parent && node->parent->type == XML_DOCUMENT_NODE && a->ns &&
           strcmp((const char *)a->ns->href, "http://www.w3.org/2001/XMLSchema-instance") == 0 &&
           strcmp((const char *)a->name, "noNamespaceSchemaLocation") == 0;
}

static int check_attributes(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec) {
    const char *elem = (const char *)node->name;
    for (xmlAttr *a = node->properties; a; a = a->next) {
        char name[256];
        if (a->ns && a->ns->prefix)
            snprintf(name, sizeof name, "%s:%s", (const char *)a->ns->prefix, (const char *)a->name);
        else
            snprintf(name, sizeof name, "%s", (const char *)a->name);
        if (is_schema_hint(node, a)) continue;
        const ProblemAttrSpec *as = a->ns ? NULL : problem_format_attr(spec, name);
        if (!as) {
            int line = problem_attr_line(d, node, name);
            if (!spec->attrs[0].name)
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: unknown attribute '%s' on <%s>; <%s> takes no attributes", d->path,
                                line, name, elem, elem);
            char valid[512];
            list_attrs(spec, 0, valid, sizeof valid);
            return fem_fail(FEM_ERR_INPUT, "%s:%d: unknown attribute '%s' on <%s>; valid attributes are: %s",
                            d->path, line, name, elem, valid);
        }
        FEM_TRY(problem_check_value(d, node, as));
    }
    for (const ProblemAttrSpec *as = spec->attrs; as->name; as++) {
        if (!as->required || xmlHasNsProp(node, (const xmlChar *)as->name, NULL)) continue;
        char required[256];
        list_attrs(spec, 1, required, sizeof required);
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: missing required attribute '%s' on <%s>; required attributes are: %s",
                        d->path, problem_line(d, node), as->name, elem, required);
    }
    return FEM_OK;
}

/* Checks `node` (already known to be allowed where it is) and everything inside it. */
static int check_element(const ProblemDoc *d, xmlNode *node, char *path, size_t path_len, size_t path_cap) {
    const ProblemElementSpec *spec = problem_format_find(path);
    if (!spec) return fem_fail(FEM_ERR_INTERNAL, "femto bug: no format entry for %s", path);
    FEM_TRY(check_attributes(d, node, spec));
    return check_children(d, node, spec, path, path_len, path_cap);
}

static int check_children(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec, char *path,
                          size_t path_len, size_t path_cap) {
    const char *elem = (const char *)node->name;
    for (xmlNode *c = node->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (is_blank((const char *)c->content)) continue;
            return stray_text(d, node, c);
        }
        if (c->type != XML_ELEMENT_NODE) continue; /* comments and processing instructions */
        char name[256];
        element_name(c, name, sizeof name);
        int min, max;
        if (c->ns || !problem_format_child(spec, name, &min, &max)) {
            if (!spec->children[0])
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: unknown element <%s> in <%s>; <%s> takes no child elements", d->path,
                                problem_line(d, c), name, elem, elem);
            char valid[512];
            list_children(spec, valid, sizeof valid);
            return fem_fail(FEM_ERR_INPUT, "%s:%d: unknown element <%s> in <%s>; expected one of: %s",
                            d->path, problem_line(d, c), name, elem, valid);
        }
        if (max == 1) {
            for (xmlNode *prev = node->children; prev != c; prev = prev->next) {
                if (prev->type != XML_ELEMENT_NODE || prev->ns || strcmp((const char *)prev->name, name) != 0)
                    continue;
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: duplicate element <%s> in <%s> (the first is on line %d); "
                                "expected at most one <%s>",
                                d->path, problem_line(d, c), name, elem, problem_line(d, prev), name);
            }
        }
        size_t n = strlen(name);
        if (path_len + 1 + n + 1 > path_cap)
            return fem_fail(FEM_ERR_INTERNAL, "femto bug: element path too long");
        path[path_len] = '/';
        memcpy(path + path_len + 1, name, n + 1);
        FEM_TRY(check_element(d, c, path, path_len + 1 + n, path_cap));
        path[path_len] = '\0';
    }
    /* required children, in the table's order */
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        if (p[-1] != '!' && p[-1] != '+') continue;
        int wn = (int)(p - w - 1), found = 0;
        for (xmlNode *c = node->children; c && !found; c = c->next)
            found = c->type == XML_ELEMENT_NODE && !c->ns && strlen((const char *)c->name) == (size_t)wn &&
                    memcmp(c->name, w, (size_t)wn) == 0;
        if (found) continue;
        return fem_fail(FEM_ERR_INPUT, "%s:%d: missing required element <%.*s> in <%s>; expected %s <%.*s>",
                        d->path, problem_line(d, node), wn, w, elem,
                        p[-1] == '!' ? "exactly one" : "at least one", wn, w);
    }
    return FEM_OK;
}

int problem_check_structure(const ProblemDoc *d) {
    xmlNode *root = xmlDocGetRootElement(d->doc);
    char name[256];
    element_name(root, name, sizeof name);
    if (strcmp((const char *)root->name, "femto") != 0 || (root->ns && root->ns->prefix))
        return fem_fail(FEM_ERR_INPUT, "%s:%d: the root element is <%s>; expected <femto>", d->path,
                        problem_line(d, root), name);
    if (root->ns)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: <femto> is in the namespace '%s'; expected <femto> without xmlns "
                        "(femto problem files use no namespace)",
                        d->path, problem_line(d, root), (const char *)root->ns->href);
    char path[256] = "femto";
    return check_element(d, root, path, strlen(path), sizeof path);
}
