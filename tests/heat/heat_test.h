/* Shared pieces of the tests that build heat models directly (tests/fem/test_cpu_fused.c,
 * tests/gpu/test_gpu_fused.c). */
#ifndef FEMTO_TEST_HEAT_TEST_H
#define FEMTO_TEST_HEAT_TEST_H

#include "physics/heat.h"

/* A constant anisotropic conductivity, k = 5 times a full symmetric tensor (xx yy zz xy yz xz), with a source:
 * the case in which steady heat's Jacobian runs from the compact q-point data (physics/heat_qf.h), whose D then
 * has every entry non-zero. */
static inline HeatMaterial heat_test_constant_anisotropic(void) {
    return (HeatMaterial){.k_kind = CONDUCTIVITY_CONSTANT,
                          .k = 5,
                          .anisotropic = 1,
                          .k_tensor = {2.0, 1.0, 0.5, 0.3, -0.2, 0.1},
                          .source = 100};
}

#endif
