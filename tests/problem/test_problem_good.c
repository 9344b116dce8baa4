/* Good problem files (tests/problem/good/): each must parse, and the values read, the defaults filled and the
 * conversions made (Young/Poisson <-> Lame) must be exactly what the file and docs/problem-file.md say. */
#include "test_problem.h"

#include "fem/error.h"
#include "io/problem.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_NUM(a, b) CHECK((a) == (b))
#define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0)

static char good_dir[PATH_MAX];

static void path_in_good(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", good_dir, name);
}

static double lame_lambda(double E, double nu) {
    return E * nu / ((1 + nu) * (1 - 2 * nu));
}
static double lame_mu(double E, double nu) {
    return E / (2 * (1 + nu));
}

/* Everything a file that does not mention a setting must get. */
static void check_default_settings(const Problem *pb) {
    CHECK_NUM(pb->solver.rtol, 1e-8);
    CHECK_NUM(pb->solver.atol, 0.0);
    CHECK_NUM(pb->solver.stol, 1e-10);
    CHECK_NUM(pb->solver.max_iterations, 25);
    CHECK_NUM(pb->solver.line_search, 1);
    CHECK_NUM(pb->solver.load_steps, 1);
    CHECK_NUM(pb->solver.krylov, KRYLOV_AUTO);
    CHECK_NUM(pb->solver.precond, PRECOND_MULTIGRID);
    CHECK_NUM(pb->solver.linear_rtol, 1e-8);
    CHECK_NUM(pb->solver.linear_max_iterations, 2000);
    CHECK_NUM(pb->solver.restart, 50);
    CHECK_NUM(pb->solver.coarse_precision, FACTOR_PRECISION_AUTO);
    CHECK_NUM(pb->solver.coarse_inverse, EXPLICIT_INVERSE_AUTO);
    CHECK_NUM(pb->device.kind, DEVICE_AUTO);
    CHECK_NUM(pb->device.assembly, ASSEMBLY_GATHER);
    CHECK_NUM(pb->device.threads, 0);
}

static void check_default_output(const Problem *pb, const char *basename) {
    char dir[PATH_MAX + 16];
    path_in_good(dir, sizeof dir, "results");
    CHECK_STR(pb->output.directory, dir);
    CHECK_STR(pb->output.basename, basename);
    CHECK_NUM(pb->output.vtu, 1);
    CHECK_NUM(pb->output.vtu_compress, 1);
    CHECK_NUM(pb->output.vtu_subdivide, 0);
    CHECK_NUM(pb->output.hdf5, 1);
    CHECK_NUM(pb->output.flux, 1);
    CHECK_NUM(pb->output.stress, 1);
    CHECK_NUM(pb->output.strain_energy, 1);
}

static void check_heat_steady(const Problem *pb) {
    char mesh[PATH_MAX + 16];
    path_in_good(mesh, sizeof mesh, "beam.msh");
    CHECK_STR(pb->mesh_file, mesh);
    CHECK_NUM(pb->mesh_at.line, 4);
    CHECK_NUM(pb->mesh_size, 0.0);
    CHECK_NUM(pb->mesh_order, 1);
    CHECK_NUM(pb->mesh_refine, 0);
    CHECK_NUM(pb->order, 1);
    CHECK_NUM(pb->quadrature_degree, 0);
    CHECK_NUM(pb->physics, PHYSICS_HEAT);
    CHECK(!pb->elasticity.present);
    CHECK_NUM(pb->time.scheme, TIME_STEADY);
    check_default_settings(pb);
    check_default_output(pb, "heat-steady");

    const HeatProblem *h = &pb->heat;
    CHECK(h->present);
    CHECK_NUM(h->at.line, 5);
    CHECK_NUM(h->initial_temperature, 293.15);
    CHECK_NUM(h->nmaterials, 1);
    const HeatMaterial *m = &h->materials[0];
    CHECK_STR(m->region, "copper");
    CHECK_NUM(m->at.line, 6);
    CHECK_NUM(m->k_kind, CONDUCTIVITY_CONSTANT);
    CHECK_NUM(m->k, 401.0);
    CHECK_NUM(m->anisotropic, 0);
    CHECK(m->k_tensor[0] == 1 && m->k_tensor[1] == 1 && m->k_tensor[2] == 1);
    CHECK(m->k_tensor[3] == 0 && m->k_tensor[4] == 0 && m->k_tensor[5] == 0);
    CHECK_NUM(m->density, 0.0);
    CHECK_NUM(m->specific_heat, 0.0);
    CHECK_NUM(m->source, 0.0);
    CHECK_NUM(h->nbcs, 2);
    CHECK_NUM(h->bcs[0].kind, HEAT_BC_TEMPERATURE);
    CHECK_STR(h->bcs[0].boundary, "base");
    CHECK_NUM(h->bcs[0].value, 373.15);
    CHECK_NUM(h->bcs[0].at.line, 7);
    CHECK_NUM(h->bcs[1].kind, HEAT_BC_CONVECTION);
    CHECK_STR(h->bcs[1].boundary, "fins");
    CHECK_NUM(h->bcs[1].h, 25.0);
    CHECK_NUM(h->bcs[1].ambient, 293.15);
}

static void check_heat_transient(const Problem *pb) {
    char mesh[PATH_MAX + 16];
    path_in_good(mesh, sizeof mesh, "beam.geo");
    CHECK_STR(pb->mesh_file, mesh);
    CHECK_NUM(pb->mesh_size, 0.005);
    CHECK_NUM(pb->mesh_order, 2);
    CHECK_NUM(pb->mesh_refine, 1);
    CHECK_NUM(pb->order, 3);
    const HeatProblem *h = &pb->heat;
    CHECK_NUM(h->initial_temperature, 300.0);
    CHECK_NUM(h->nmaterials, 3);
    const HeatMaterial *foam = &h->materials[0], *steel = &h->materials[1], *copper = &h->materials[2];
    CHECK_STR(foam->region, "foam");
    CHECK_NUM(foam->k_kind, CONDUCTIVITY_POLYNOMIAL);
    CHECK_NUM(foam->k_ncoef, 3);
    CHECK(foam->k_coef[0] == 0.02 && foam->k_coef[1] == 1e-4 && foam->k_coef[2] == -2.5e-8);
    CHECK_NUM(foam->anisotropic, 1);
    CHECK(foam->k_tensor[0] == 2 && foam->k_tensor[1] == 1 && foam->k_tensor[2] == 0.5);
    CHECK(foam->k_tensor[3] == 0.1 && foam->k_tensor[4] == 0 && foam->k_tensor[5] == 0);
    CHECK_NUM(foam->density, 30.0);
    CHECK_NUM(foam->specific_heat, 1400.0);
    CHECK_NUM(steel->k_kind, CONDUCTIVITY_TABLE);
    CHECK_NUM(steel->k_npoints, 3);
    CHECK(steel->k_T[0] == 300 && steel->k_T[1] == 600 && steel->k_T[2] == 900);
    CHECK(steel->k_val[0] == 45 && steel->k_val[1] == 38.5 && steel->k_val[2] == 30);
    CHECK_NUM(steel->source, 1e5);
    CHECK_NUM(steel->anisotropic, 0);
    CHECK_NUM(copper->k_kind, CONDUCTIVITY_CONSTANT);
    CHECK_NUM(copper->k, 401.0);
    CHECK_NUM(h->nbcs, 3);
    CHECK(h->bcs[0].kind == HEAT_BC_FLUX && h->bcs[0].value == 1000);
    CHECK(h->bcs[1].kind == HEAT_BC_RADIATION && h->bcs[1].emissivity == 0.8 && h->bcs[1].ambient == 293.15);
    CHECK(h->bcs[2].kind == HEAT_BC_CONVECTION && h->bcs[2].h == 10);
    CHECK_NUM(pb->time.scheme, TIME_CRANK_NICOLSON);
    CHECK_NUM(pb->time.start, 0.0);
    CHECK_NUM(pb->time.end, 3600.0);
    CHECK_NUM(pb->time.step, 10.0);
    CHECK_NUM(pb->time.output_every, 6);
    CHECK_NUM(pb->time.at.line, 30);
}

static void check_cantilever(const Problem *pb) {
    CHECK_NUM(pb->physics, PHYSICS_ELASTICITY);
    CHECK_NUM(pb->order, 2);
    check_default_settings(pb);
    check_default_output(pb, "cantilever");
    const ElasticProblem *e = &pb->elasticity;
    CHECK_NUM(e->model, ELASTIC_LINEAR);
    CHECK_NUM(e->plane, PLANE_STRAIN);
    CHECK_NUM(e->nmaterials, 1);
    const ElasticMaterial *m = &e->materials[0];
    CHECK_STR(m->region, "steel");
    CHECK_NUM(m->young, 210e9);
    CHECK_NUM(m->poisson, 0.3);
    CHECK_NUM(m->lambda, lame_lambda(210e9, 0.3));
    CHECK_NUM(m->mu, lame_mu(210e9, 0.3));
    CHECK_NUM(m->density, 7850.0);
    CHECK_NUM(m->expansion, 0.0);
    CHECK_NUM(m->reference_temperature, 293.15);
    CHECK_NUM(e->nbcs, 2);
    CHECK(e->bcs[0].kind == ELASTIC_BC_FIXED && e->bcs[0].components == 7);
    CHECK_STR(e->bcs[0].boundary, "clamp");
    CHECK(e->bcs[1].kind == ELASTIC_BC_TRACTION && e->bcs[1].components == 4);
    CHECK(e->bcs[1].value[0] == 0 && e->bcs[1].value[1] == 0 && e->bcs[1].value[2] == -1e6);
    CHECK(e->gravity[0] == 0 && e->gravity[1] == 0 && e->gravity[2] == -9.81);
    CHECK_NUM(e->gravity_at.line, 10);
    CHECK_NUM(e->plane_at.line, 0); /* no plane attribute: a 3D mesh is fine */
    CHECK_NUM(pb->heat.initial_at.line, 0);
    CHECK(!e->has_temperature && !e->coupled_temperature);
}

static void check_neo_hookean(const Problem *pb) {
    const ElasticProblem *e = &pb->elasticity;
    CHECK_NUM(e->model, ELASTIC_NEO_HOOKEAN);
    CHECK_NUM(e->plane, PLANE_STRESS);
    const ElasticMaterial *m = &e->materials[0];
    double l = 4e8, mu = 1e6;
    CHECK_NUM(m->lambda, l);
    CHECK_NUM(m->mu, mu);
    CHECK_NUM(m->young, mu * (3 * l + 2 * mu) / (l + mu));
    CHECK_NUM(m->poisson, l / (2 * (l + mu)));
    CHECK_NUM(e->nbcs, 4);
    CHECK(e->bcs[0].kind == ELASTIC_BC_FIXED && e->bcs[0].components == 1);
    CHECK(e->bcs[1].kind == ELASTIC_BC_FIXED && e->bcs[1].components == 2);
    CHECK(e->bcs[2].kind == ELASTIC_BC_DISPLACEMENT && e->bcs[2].components == 1 &&
          e->bcs[2].value[0] == 0.05);
    CHECK(e->bcs[3].kind == ELASTIC_BC_PRESSURE && e->bcs[3].pressure == 2e5);
    CHECK_NUM(pb->solver.rtol, 1e-9);
    CHECK_NUM(pb->solver.atol, 0.0);
    CHECK_NUM(pb->solver.max_iterations, 40);
    CHECK_NUM(pb->solver.load_steps, 10);
    CHECK_NUM(pb->solver.line_search, 1);
    CHECK_NUM(pb->solver.krylov, KRYLOV_GMRES);
    CHECK_NUM(pb->solver.restart, 100);
    CHECK_NUM(pb->solver.precond, PRECOND_MULTIGRID);
}

static void check_thermoelastic(const Problem *pb) {
    CHECK_NUM(pb->physics, PHYSICS_HEAT | PHYSICS_ELASTICITY);
    const ElasticProblem *e = &pb->elasticity;
    CHECK(e->coupled_temperature && !e->has_temperature);
    CHECK_NUM(e->temperature_at.line, 13);
    CHECK_NUM(e->materials[0].expansion, 1.7e-5);
    CHECK_NUM(e->materials[0].lambda, lame_lambda(193e9, 0.29));
    CHECK(e->bcs[0].kind == ELASTIC_BC_FIXED && e->bcs[0].components == 4);
    CHECK_NUM(pb->heat.bcs[0].value, 573.15);
}

static void check_full(const Problem *pb) {
    CHECK_NUM(pb->mesh_size, 0.02);
    CHECK_NUM(pb->mesh_order, 2);
    CHECK_NUM(pb->mesh_refine, 2);
    CHECK_NUM(pb->order, 4);
    CHECK_NUM(pb->quadrature_degree, 9);
    const HeatProblem *h = &pb->heat;
    CHECK_NUM(h->initial_temperature, 310.0);
    const HeatMaterial *cu = &h->materials[0], *foam = &h->materials[1];
    CHECK_NUM(cu->at.line, 8); /* the line of "<material", not of the start tag's end */
    CHECK(cu->k == 401 && cu->density == 8960 && cu->specific_heat == 385 && cu->source == 250);
    CHECK_NUM(foam->k_kind, CONDUCTIVITY_TABLE);
    CHECK(foam->k_npoints == 2 && foam->k_T[1] == 350 && foam->k_val[1] == 0.035);
    CHECK(foam->anisotropic == 1 && foam->k_tensor[0] == 1.5 && foam->k_tensor[1] == 1.25);
    CHECK(foam->k_tensor[2] == 1.125 && foam->k_tensor[3] == 0.25 && foam->k_tensor[4] == 0.125);
    CHECK_NUM(foam->k_tensor[5], 0.0625);
    CHECK_NUM(h->nbcs, 4);
    CHECK(h->bcs[0].kind == HEAT_BC_TEMPERATURE && h->bcs[0].value == 373.15);
    CHECK(h->bcs[1].kind == HEAT_BC_FLUX && h->bcs[1].value == 1000);
    CHECK(h->bcs[2].kind == HEAT_BC_CONVECTION && h->bcs[2].h == 25 && h->bcs[2].ambient == 290);
    CHECK(h->bcs[3].kind == HEAT_BC_RADIATION && h->bcs[3].emissivity == 0.8 && h->bcs[3].ambient == 280);

    const ElasticProblem *e = &pb->elasticity;
    CHECK(e->model == ELASTIC_NEO_HOOKEAN && e->plane == PLANE_STRESS);
    const ElasticMaterial *m0 = &e->materials[0], *m1 = &e->materials[1];
    CHECK(m0->young == 110e9 && m0->poisson == 0.34 && m0->lambda == lame_lambda(110e9, 0.34));
    CHECK(m0->density == 8960 && m0->expansion == 1.7e-5 && m0->reference_temperature == 300);
    CHECK(m1->lambda == 2e6 && m1->mu == 1e6 && m1->reference_temperature == 295 && m1->expansion == 5e-5);
    CHECK_NUM(m1->poisson, 2e6 / (2 * (2e6 + 1e6)));
    CHECK_NUM(e->nbcs, 4);
    CHECK(e->bcs[0].kind == ELASTIC_BC_FIXED && e->bcs[0].components == 5);
    CHECK(e->bcs[1].kind == ELASTIC_BC_DISPLACEMENT && e->bcs[1].components == 5);
    CHECK(e->bcs[1].value[0] == 0.001 && e->bcs[1].value[1] == 0 && e->bcs[1].value[2] == -0.002);
    CHECK(e->bcs[2].kind == ELASTIC_BC_TRACTION && e->bcs[2].components == 7);
    CHECK(e->bcs[2].value[0] == 1 && e->bcs[2].value[1] == 2 && e->bcs[2].value[2] == -1e6);
    CHECK(e->bcs[3].kind == ELASTIC_BC_PRESSURE && e->bcs[3].pressure == 1e6);
    CHECK(e->gravity[0] == 0.5 && e->gravity[1] == -1 && e->gravity[2] == -9.81);
    CHECK(e->plane_at.line == 27 && e->gravity_at.line == 35 && h->initial_at.line == 7);
    CHECK(e->has_temperature && e->temperature == 350 && !e->coupled_temperature);

    CHECK(pb->time.scheme == TIME_BDF2 && pb->time.start == 5 && pb->time.end == 100);
    CHECK(pb->time.step == 0.5 && pb->time.output_every == 10);
    const SolverSettings *s = &pb->solver;
    CHECK(s->rtol == 1e-8 && s->atol == 1e-12 && s->max_iterations == 30 && s->line_search == 0);
    CHECK(s->load_steps == 4 && s->krylov == KRYLOV_BICGSTAB && s->precond == PRECOND_CHEBYSHEV);
    CHECK(s->linear_rtol == 1e-6 && s->linear_max_iterations == 500 && s->restart == 30);
    CHECK(s->coarse_precision == FACTOR_PRECISION_SINGLE);
    CHECK(s->coarse_inverse == EXPLICIT_INVERSE_NO);
    const OutputSettings *o = &pb->output;
    CHECK_STR(o->directory, "/tmp/femto-results");
    CHECK_STR(o->basename, "run1");
    CHECK(o->vtu == 0 && o->vtu_compress == 0 && o->vtu_subdivide == 1 && o->hdf5 == 0);
    CHECK(o->flux == 0 && o->stress == 0 && o->strain_energy == 0);
    CHECK(pb->device.kind == DEVICE_CUDA && pb->device.assembly == ASSEMBLY_ATOMIC &&
          pb->device.threads == 8);
}

static void check_variety(const Problem *pb) {
    char mesh[PATH_MAX + 16];
    path_in_good(mesh, sizeof mesh, "beam.msh");
    CHECK_STR(pb->mesh_file, mesh);
    CHECK_NUM(pb->mesh_at.line, 15); /* "<mesh" starts a three-line start tag */
    CHECK_NUM(pb->device.kind, DEVICE_CPU);
    CHECK_NUM(pb->output.vtu_compress, 1);
    const ElasticMaterial *m = &pb->elasticity.materials[0];
    CHECK_STR(m->region, "Stahl & \xce\xa9");
    CHECK_NUM(m->young, 2.1e11);
    CHECK_NUM(m->poisson, 0.3);
    CHECK_STR(pb->elasticity.bcs[0].boundary, "Einspannung links");
    CHECK_NUM(pb->elasticity.bcs[0].components, 7);
}

int test_good(const char *file) {
    if (!realpath("good", good_dir)) {
        fprintf(stderr, "run from tests/problem: no folder 'good'\n");
        return 1;
    }
    Problem pb;
    fem_clear_error();
    int rc = problem_read(file, &pb);
    if (rc != FEM_OK) {
        fprintf(stderr, "%s: problem_read returned %d: %s\n", file, rc, fem_last_error());
        return 1;
    }
    CHECK(pb.text && strstr(pb.text, "<femto") && strstr(pb.text, "</femto>"));
    CHECK_STR(pb.path, file);
    CHECK_STR(pb.dir, good_dir);
    const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    static const struct {
        const char *name;
        void (*check)(const Problem *);
    } cases[] = {{"heat-steady.xml", check_heat_steady},
                 {"heat-transient.xml", check_heat_transient},
                 {"cantilever.xml", check_cantilever},
                 {"neo-hookean.xml", check_neo_hookean},
                 {"thermoelastic.xml", check_thermoelastic},
                 {"full.xml", check_full},
                 {"variety.xml", check_variety}};
    int found = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, name) == 0) cases[i].check(&pb), found = 1;
    if (!found) {
        fprintf(stderr, "%s: no checks written for this good file\n", file);
        test_failures++;
    }
    problem_destroy(&pb);
    return test_failures;
}
