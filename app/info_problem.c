/* `femto-app info PROBLEM.xml`, the problem part: every setting as femto understood it — defaults filled in,
 * paths resolved, both pairs of elastic constants — so that a user sees what a run will do before it runs. */
#include "app.h"

#include <math.h>
#include <stdio.h>

static const char *on_off(int b) {
    return b ? "on" : "off";
}

static void print_conductivity(const HeatMaterial *m) {
    if (m->k_kind == CONDUCTIVITY_CONSTANT) {
        printf("conductivity %g W/(m K)", m->k);
    } else if (m->k_kind == CONDUCTIVITY_POLYNOMIAL) {
        printf("conductivity k(T) = ");
        for (int i = 0; i < m->k_ncoef; i++) {
            printf("%s%g", i ? " + " : "", m->k_coef[i]);
            if (i == 1) printf(" T");
            if (i > 1) printf(" T^%d", i);
        }
        printf(" W/(m K), T in K");
    } else {
        printf("conductivity from a table (linear between points, constant beyond):");
        for (int i = 0; i < m->k_npoints; i++)
            printf("%s %g W/(m K) at %g K", i ? "," : "", m->k_val[i], m->k_T[i]);
    }
    if (m->anisotropic)
        printf(", times the tensor xx %g, yy %g, zz %g, xy %g, yz %g, xz %g", m->k_tensor[0], m->k_tensor[1],
               m->k_tensor[2], m->k_tensor[3], m->k_tensor[4], m->k_tensor[5]);
}

static void print_heat(const HeatProblem *h, int transient) {
    printf("  heat: %s\n", transient ? "transient" : "steady");
    printf("    initial temperature (%s): %g K\n", transient ? "at the start" : "Newton's first guess",
           h->initial_temperature);
    for (int i = 0; i < h->nmaterials; i++) {
        const HeatMaterial *m = &h->materials[i];
        printf("    material '%s' (line %d): ", m->region, m->at.line);
        print_conductivity(m);
        printf("; density %g kg/m^3, specific heat %g J/(kg K), source %g W/m^3\n", m->density,
               m->specific_heat, m->source);
    }
    for (int i = 0; i < h->nbcs; i++) {
        const HeatBc *b = &h->bcs[i];
        printf("    boundary '%s' (line %d): ", b->boundary, b->at.line);
        if (b->kind == HEAT_BC_TEMPERATURE)
            printf("temperature %g K\n", b->value);
        else if (b->kind == HEAT_BC_FLUX)
            printf("heat flux %g W/m^2 into the body\n", b->value);
        else if (b->kind == HEAT_BC_CONVECTION)
            printf("convection, h = %g W/(m^2 K), ambient %g K\n", b->h, b->ambient);
        else
            printf("radiation, emissivity %g, ambient %g K\n", b->emissivity, b->ambient);
    }
    printf("    every other boundary: insulated\n");
}

static void print_elastic_bc(const ElasticBc *b) {
    static const char axis[] = "xyz";
    printf("    boundary '%s' (line %d): ", b->boundary, b->at.line);
    if (b->kind == ELASTIC_BC_FIXED) {
        printf("fixed");
        for (int c = 0; c < 3; c++)
            if (b->components >> c & 1) printf(" %c", axis[c]);
        printf("\n");
    } else if (b->kind == ELASTIC_BC_DISPLACEMENT) {
        printf("displacement");
        for (int c = 0, n = 0; c < 3; c++)
            if (b->components >> c & 1) printf("%s %c = %g m", n++ ? "," : "", axis[c], b->value[c]);
        printf("\n");
    } else if (b->kind == ELASTIC_BC_TRACTION) {
        printf("traction (%g, %g, %g) Pa\n", b->value[0], b->value[1], b->value[2]);
    } else {
        printf("pressure %g Pa (positive pushes into the body)\n", b->pressure);
    }
}

static void print_elasticity(const ElasticProblem *e) {
    printf("  elasticity: %s; plane %s if the mesh is 2D\n",
           e->model == ELASTIC_NEO_HOOKEAN ? "neo-Hookean (large deformation)" : "linear (small strain)",
           e->plane == PLANE_STRESS ? "stress" : "strain");
    for (int i = 0; i < e->nmaterials; i++) {
        const ElasticMaterial *m = &e->materials[i];
        printf("    material '%s' (line %d): E = %g Pa, nu = %g (lambda = %g Pa, mu = %g Pa); density %g "
               "kg/m^3; "
               "expansion %g 1/K from %g K\n",
               m->region, m->at.line, m->young, m->poisson, m->lambda, m->mu, m->density, m->expansion,
               m->reference_temperature);
    }
    for (int i = 0; i < e->nbcs; i++) print_elastic_bc(&e->bcs[i]);
    printf("    every other boundary: traction-free\n");
    printf("    gravity: (%g, %g, %g) m/s^2\n", e->gravity[0], e->gravity[1], e->gravity[2]);
    if (e->coupled_temperature)
        printf("    temperature for thermal strain: the heat solution of this run\n");
    else if (e->has_temperature)
        printf("    temperature for thermal strain: uniform %g K\n", e->temperature);
    else
        printf("    temperature for thermal strain: none\n");
}

static void print_time(const TimeSettings *t) {
    static const char *schemes[] = {"steady", "backward Euler", "BDF2", "Crank-Nicolson"};
    if (t->scheme == TIME_STEADY) {
        printf("  time: steady (no <time>)\n");
        return;
    }
    double n = ceil((t->end - t->start) / t->step - 1e-9); /* as the run counts them */
    printf("  time: %s from %g s to %g s, step %g s (%.0f steps), results every %d step%s and at the end\n",
           schemes[t->scheme], t->start, t->end, t->step, n, t->output_every,
           t->output_every == 1 ? "" : "s");
}

static void print_solver(const SolverSettings *s) {
    static const char *krylov[] = {"auto (CG when the Jacobian is symmetric, else GMRES)", "CG", "GMRES",
                                   "BiCGStab"};
    const char *precond = s->precond == PRECOND_MULTIGRID   ? "p-multigrid"
                          : s->precond == PRECOND_JACOBI    ? "Jacobi"
                          : s->precond == PRECOND_CHEBYSHEV ? "Chebyshev-Jacobi"
                                                            : "none";
    printf("  solver: Newton rtol %g (of the residual's scale), atol %g, stol %g, at most %d iterations, "
           "line search %s, %d load step%s, preconditioner %s\n",
           s->rtol, s->atol, s->stol, s->max_iterations, on_off(s->line_search), s->load_steps,
           s->load_steps == 1 ? "" : "s", s->reuse_pc ? "reused while it serves" : "set up every iteration");
    printf("          linear: %s, preconditioner %s, rtol %g, at most %d iterations, GMRES restart %d\n",
           krylov[s->krylov], precond, s->linear_rtol, s->linear_max_iterations, s->restart);
    if (s->precond != PRECOND_MULTIGRID) return;
    static const char *coarse[] = {
        "auto (cuDSS on a GPU when built in, else CHOLMOD when small, over MPI ranks MUMPS, else BoomerAMG)",
        "BoomerAMG", "cuDSS", "CHOLMOD", "MUMPS"};
    char levels[32] = "down to order 1";
    if (s->mg_levels) snprintf(levels, sizeof levels, "at most %d", s->mg_levels);
    static const char *precision[] = {"double precision (single where double would not fit in GPU memory)",
                                      "double precision", "single precision"};
    printf("          multigrid: levels %s, Chebyshev smoothing of degree %d, coarse solver %s, %d AMG cycle%s per "
           "coarse solve\n",
           levels, s->smoothing_degree, coarse[s->coarse], s->coarse_cycles, s->coarse_cycles == 1 ? "" : "s");
    static const char *inverse[] = {"applied as its explicit inverse on time-dependent linear problems (up to 2 GB of a GPU)",
                                    "applied as its explicit inverse where that fits in GPU memory",
                                    "triangular solves"};
    printf("          cuDSS's factor: %s, %s\n", precision[s->coarse_precision], inverse[s->coarse_inverse]);
}

static void print_output(const Problem *pb) {
    const OutputSettings *o = &pb->output;
    printf("  output: %s/%s.*\n", o->directory, o->basename);
    printf("          VTU/PVD %s (%s, %s), HDF5/XDMF %s\n", on_off(o->vtu),
           o->vtu_compress ? "compressed" : "uncompressed",
           o->vtu_subdivide ? "linear sub-cells" : "Lagrange cells of the element order", on_off(o->hdf5));
    printf("          fields: heat flux %s, stress %s, strain energy %s\n", on_off(o->flux),
           on_off(o->stress), on_off(o->strain_energy));
    for (int i = 0; i < o->nprobes; i++)
        printf("          probe '%s' (line %d) at (%g, %g, %g) m\n", o->probes[i].name, o->probes[i].at.line,
               o->probes[i].x[0], o->probes[i].x[1], o->probes[i].x[2]);
}

void app_print_problem(const Problem *pb) {
    static const char *devices[] = {"auto (CUDA when a GPU is present, else CPU)", "cpu", "cuda"};
    printf("problem %s\n", pb->path);
    printf("  mesh: %s", pb->mesh_file);
    if (pb->mesh_size > 0) printf(", meshed with cells of %g m", pb->mesh_size);
    if (pb->mesh_order > 1) printf(", geometric order %d", pb->mesh_order);
    if (pb->mesh_refine) printf(", refined %d time%s", pb->mesh_refine, pb->mesh_refine == 1 ? "" : "s");
    printf("\n  discretization: element order %d, ", pb->order);
    if (pb->quadrature_degree)
        printf("quadrature degree %d\n", pb->quadrature_degree);
    else
        printf("femto's quadrature degree 2p + g - 1 (g: the cells' geometric order)\n");
    if (pb->physics & PHYSICS_HEAT) print_heat(&pb->heat, pb->time.scheme != TIME_STEADY);
    if (pb->physics & PHYSICS_ELASTICITY) print_elasticity(&pb->elasticity);
    print_time(&pb->time);
    print_solver(&pb->solver);
    print_output(pb);
    printf("  device: %s, %s assembly, ", devices[pb->device.kind],
           pb->device.assembly == ASSEMBLY_ATOMIC ? "atomic" : "gather (deterministic)");
    if (pb->device.threads)
        printf("%d CPU thread%s\n", pb->device.threads, pb->device.threads == 1 ? "" : "s");
    else
        printf("all CPU cores\n");
}
