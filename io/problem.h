/* The problem file: an XML document, validated against io/problem.xsd (embedded in the binary), read into a
 * Problem that the rest of femto consumes. All quantities are SI: metres, kilograms, seconds, kelvin, pascals,
 * watts. See docs/problem-file.md for the format with a complete example per physics.
 *
 * problem_read() accepts nothing it does not understand: an unknown element or attribute, a bad number, a
 * missing required value or a value out of range is one error naming the file and line and what was expected.
 * Parsing is safe: no network, no external entities, no DTD, no XInclude; a DOCTYPE is rejected. */
#ifndef FEMTO_PROBLEM_H
#define FEMTO_PROBLEM_H

#include "fem/error.h"

#include <stddef.h>

enum {
    PROBLEM_NAME_MAX = 128,
    PROBLEM_PATH_MAX = 4096,
    PROBLEM_TABLE_MAX = 64, /* points of a piecewise-linear table, coefficients of a polynomial */
    PROBLEM_PROBES_MAX = 32,
};

/* Bits of Problem.physics, one per physics section in the format table's order: any may be present. */
typedef enum { PHYSICS_HEAT = 1, PHYSICS_ELASTICITY = 2 } PhysicsKind;

typedef enum { DEVICE_AUTO = 0, DEVICE_CPU, DEVICE_CUDA } DeviceKind;
typedef enum { ASSEMBLY_GATHER = 0, ASSEMBLY_ATOMIC } AssemblyKind;
typedef enum { KRYLOV_AUTO = 0, KRYLOV_CG, KRYLOV_GMRES, KRYLOV_BICGSTAB } KrylovKind;
typedef enum { PRECOND_MULTIGRID = 0, PRECOND_JACOBI, PRECOND_CHEBYSHEV, PRECOND_NONE } PrecondKind;
/* the values of fem/solvers/coarse.h's CoarseType (the app passes them on as they are) */
typedef enum {
    COARSE_SOLVER_AUTO = 0,
    COARSE_SOLVER_BOOMERAMG,
    COARSE_SOLVER_CUDSS,
    COARSE_SOLVER_CHOLMOD,
    COARSE_SOLVER_MUMPS
} CoarseKind;
/* the values of fem/solvers/coarse.h's CoarsePrecision */
typedef enum { FACTOR_PRECISION_AUTO = 0, FACTOR_PRECISION_DOUBLE, FACTOR_PRECISION_SINGLE } FactorPrecision;
/* the values of fem/solvers/coarse.h's CoarseInverse */
typedef enum { EXPLICIT_INVERSE_AUTO = 0, EXPLICIT_INVERSE_YES, EXPLICIT_INVERSE_NO } ExplicitInverse;
typedef enum { TIME_STEADY = 0, TIME_BACKWARD_EULER, TIME_BDF2, TIME_CRANK_NICOLSON } TimeScheme;

/* Where a value came from, for messages after parsing ("cantilever.xml:12: ..."). */
typedef struct {
    int line;
} SourceLine;

/* ---- Heat transfer */
typedef enum { CONDUCTIVITY_CONSTANT = 0, CONDUCTIVITY_POLYNOMIAL, CONDUCTIVITY_TABLE } ConductivityKind;

typedef struct {
    char region[PROBLEM_NAME_MAX]; /* physical group name of dimension = mesh dimension */
    SourceLine at;
    ConductivityKind k_kind;
    double k;                          /* constant conductivity [W/(m K)] (scale of the tensor when anisotropic);
                                        * 0 for a polynomial or table law */
    int k_ncoef;                       /* polynomial: k(T) = sum c_i T^i, T in K */
    double k_coef[PROBLEM_TABLE_MAX];
    int k_npoints;                     /* table: piecewise linear in T, constant beyond the ends */
    double k_T[PROBLEM_TABLE_MAX], k_val[PROBLEM_TABLE_MAX];
    int anisotropic;                   /* 1: k_tensor multiplies k(T) */
    double k_tensor[6];                /* xx yy zz xy yz xz (dimensionless multipliers; 2D uses xx yy xy) */
    double density;                    /* rho [kg/m^3], needed for transient runs */
    double specific_heat;              /* c [J/(kg K)], needed for transient runs */
    double source;                     /* volumetric heat source Q [W/m^3] */
} HeatMaterial;

typedef enum { HEAT_BC_TEMPERATURE = 1, HEAT_BC_FLUX, HEAT_BC_CONVECTION, HEAT_BC_RADIATION } HeatBcKind;

typedef struct {
    HeatBcKind kind;
    char boundary[PROBLEM_NAME_MAX]; /* physical group name of dimension = mesh dimension - 1 */
    SourceLine at;
    double value;      /* temperature [K] or inward heat flux [W/m^2] */
    double h;          /* convection coefficient [W/(m^2 K)] */
    double emissivity; /* radiation, in (0, 1] */
    double ambient;    /* T_inf [K] for convection and radiation */
} HeatBc;

typedef struct {
    int present;
    SourceLine at;
    int nmaterials;
    HeatMaterial *materials;
    int nbcs;
    HeatBc *bcs;
    double initial_temperature; /* [K], transient runs and Newton's first guess; default 293.15 */
    SourceLine initial_at;      /* the <initial> element, when there is one */
} HeatProblem;

/* ---- Elasticity */
typedef enum { ELASTIC_LINEAR = 0, ELASTIC_NEO_HOOKEAN } ElasticModel;
typedef enum { PLANE_STRAIN = 0, PLANE_STRESS } PlaneKind;

typedef struct {
    char region[PROBLEM_NAME_MAX];
    SourceLine at;
    double young, poisson;  /* E [Pa] > 0, -1 < nu < 0.5 (always filled: converted from lambda/mu if given) */
    double lambda, mu;      /* Lame parameters [Pa] (always filled) */
    double density;         /* [kg/m^3], for gravity */
    double expansion;       /* thermal expansion coefficient alpha [1/K] */
    double reference_temperature; /* T_ref [K], default 293.15 */
} ElasticMaterial;

typedef enum {
    ELASTIC_BC_FIXED = 1,  /* u_c = 0 for the chosen components */
    ELASTIC_BC_DISPLACEMENT, /* u_c = value_c for the chosen components */
    ELASTIC_BC_TRACTION,   /* traction vector [Pa] */
    ELASTIC_BC_PRESSURE,   /* pressure [Pa] on the normal (follower load for neo-Hookean) */
} ElasticBcKind;

typedef struct {
    ElasticBcKind kind;
    char boundary[PROBLEM_NAME_MAX];
    SourceLine at;
    int components;   /* bit mask: 1 = x, 2 = y, 4 = z (fixed and displacement) */
    double value[3];  /* displacement [m] or traction [Pa] per component */
    double pressure;  /* [Pa], positive pushes into the body */
} ElasticBc;

typedef struct {
    int present;
    SourceLine at;
    ElasticModel model;
    PlaneKind plane;  /* 2D meshes only */
    SourceLine plane_at; /* the plane attribute; line 0 when the file does not give it */
    int nmaterials;
    ElasticMaterial *materials;
    int nbcs;
    ElasticBc *bcs;
    double gravity[3];       /* body force per unit mass [m/s^2] (times density) */
    SourceLine gravity_at;   /* the <gravity> element, when there is one */
    int has_temperature;     /* uniform temperature for thermal strain */
    double temperature;      /* [K] */
    int coupled_temperature; /* 1: thermal strain from the temperature field solved in the same run */
    SourceLine temperature_at; /* the <temperature> element, when there is one */
} ElasticProblem;

/* ---- Run settings */
typedef struct {
    TimeScheme scheme; /* TIME_STEADY when the file has no <time> */
    double start, end, step; /* [s] */
    int output_every;        /* write every N steps (the last step is always written) */
    SourceLine at;
} TimeSettings;

typedef struct {
    double rtol, atol;  /* Newton: stop when ||R|| <= rtol S (S: the residual's scale, fem/newton.h) or
                         * ||R|| <= atol; defaults 1e-8, 0 (off) */
    double stol;        /* ...or when a converged linear solve corrects u by at most stol ||u||; 1e-10 */
    int max_iterations; /* default 25 */
    int line_search;    /* 1 (default): a line search (on the energy's slope, or backtracking on ||R||) */
    int reuse_pc;       /* 1 (default): a nonlinear problem's Newton iterations keep the preconditioner while it
                         * serves (fem/solvers/newton.h); 0: a new one every iteration */
    int load_steps;     /* >= 1 (default 1): load increments for nonlinear problems, cut back on failure */
    KrylovKind krylov;  /* default auto: CG when the Jacobian is symmetric, else GMRES */
    PrecondKind precond; /* default Jacobi */
    double linear_rtol; /* default 1e-8 (relative; Newton adapts it downward near convergence) */
    int linear_max_iterations; /* default 2000 */
    int restart;        /* GMRES restart, default 50 */
    int smoothing_degree; /* multigrid: Chebyshev degree of the smoother, default 3 */
    int mg_levels;        /* multigrid: at most this many levels, 0 (default): down to order 1 */
    CoarseKind coarse;    /* multigrid: the order-1 level's solver, default auto */
    int coarse_cycles;    /* multigrid: BoomerAMG V-cycles per coarse solve, default 3 */
    FactorPrecision coarse_precision; /* multigrid: cuDSS's factor, default auto */
    ExplicitInverse coarse_inverse;   /* multigrid: cuDSS's factor as its explicit inverse, default auto */
} SolverSettings;

typedef struct {
    char name[PROBLEM_NAME_MAX];
    double x[3]; /* [m] */
    SourceLine at;
} OutputProbe;

typedef struct {
    char directory[PROBLEM_PATH_MAX]; /* as given if absolute, else joined to the problem file's directory;
                                       * default "results" (so "<dir>/results") */
    char basename[PROBLEM_NAME_MAX];  /* default: the problem file's name without .xml */
    int vtu;          /* default 1 */
    int vtu_compress; /* default 1 (zlib) */
    int vtu_subdivide;/* default 0: Lagrange cells; 1: linear sub-cells */
    int hdf5;         /* default 1 */
    int hdf5_compress; /* default 1: shuffle + deflate level 1, chunks compressed on all threads */
    int flux;         /* heat flux -k grad T at nodes, default 1 */
    int stress;       /* Cauchy stress (6 components) and von Mises, default 1 */
    int strain_energy;/* strain-energy density, default 1 */
    int plots;        /* PNG plots of the probes and of the convergence history, default 1 */
    int plot_width, plot_height; /* their size in pixels, default 800 x 600 */
    int nprobes;      /* points where the summary reports the solution */
    OutputProbe probes[PROBLEM_PROBES_MAX];
} OutputSettings;

typedef struct {
    DeviceKind kind;       /* default auto: cuda when a device is present, else cpu */
    AssemblyKind assembly; /* default gather (deterministic) */
    int threads;           /* CPU threads, 0 = OpenMP's default */
} DeviceSettings;

/* ---- Physics sections read by the format table alone
 *
 * A physics whose section needs no reader of its own declares it in io/problem.xsd and as rows of the format
 * table (io/problem_format.c), with its record structs in its physics/ header: the reader then stores the
 * section's attributes in `data` and each kind of child element in an array of records, and the physics
 * reads them through problem_section() and problem_records(). */
enum { PROBLEM_MAX_SECTIONS = 4, PROBLEM_MAX_RECORD_KINDS = 8 };

typedef struct {
    const char *element; /* "material": the child element's name */
    int count;
    void *items;         /* count records of the struct the table names */
    SourceLine *at;      /* where each record is */
} ProblemRecords;

typedef struct {
    const char *name; /* "reaction-diffusion": the section's element */
    SourceLine at;
    void *data;       /* the section's own attributes (NULL when it has none) */
    int nkinds;
    ProblemRecords kinds[PROBLEM_MAX_RECORD_KINDS]; /* in the order of the table's children rule */
} ProblemSection;

typedef struct {
    char path[PROBLEM_PATH_MAX]; /* the problem file as given */
    char dir[PROBLEM_PATH_MAX];  /* its directory, absolute: relative paths inside it resolve from here */
    char *text;                  /* the file's whole text (stored into the HDF5 output) */

    char mesh_file[PROBLEM_PATH_MAX]; /* resolved path of the .msh or .geo */
    SourceLine mesh_at;
    double mesh_size;       /* characteristic length for meshing a .geo [m]; 0 = the .geo's own sizes */
    int mesh_order;         /* geometric order when meshing a .geo (1 or 2), default 1 */
    int mesh_refine;        /* uniform refinements after meshing a .geo (default 0) */

    int order;              /* element order p, default 1 */
    int quadrature_degree;  /* 0 = default (2p + g - 1) */

    unsigned physics;       /* PHYSICS_HEAT | PHYSICS_ELASTICITY */
    HeatProblem heat;
    ElasticProblem elasticity;
    TimeSettings time;
    SolverSettings solver;
    OutputSettings output;
    DeviceSettings device;
    int nsections;
    ProblemSection sections[PROBLEM_MAX_SECTIONS];
} Problem;

/* Reads and validates `path`. On failure returns FEM_ERR_INPUT with a message "path:line: what was wrong;
 * what was expected" (FEM_ERR_INTERNAL when out of memory), and leaves *pb empty: problem_destroy is harmless.
 * The mesh file must exist and be readable; it is not read. Cross-references to the mesh (region and boundary names) are checked later by
 * problem_check_mesh (app/), since reading the problem does not read the mesh. */
int problem_read(const char *path, Problem *pb);
void problem_destroy(Problem *pb);

/* Whether the problem has the physics section <name> ("heat"). */
int problem_has_physics(const Problem *pb, const char *name);

/* The table-read section <name>, or NULL when the file has none. */
const ProblemSection *problem_section(const Problem *pb, const char *name);

/* The records of child element `element` of a table-read section (NULL and *count 0 when there are none);
 * *at receives their source lines when `at` is not NULL. */
const void *problem_records(const ProblemSection *s, const char *element, int *count, const SourceLine **at);

/* Values that are valid but probably a slip, as warnings naming the file and line: temperatures below 100 K
 * (degrees Celsius written where kelvin are meant: ambient="20"). Cryogenic problems are legitimate, so this
 * only warns. */
void problem_warnings(const Problem *pb, FemWarnings *w);

/* The embedded schema (for `femto-app schema`, and for tests). */
const char *problem_schema_text(void);

#endif
