/* The CPU backend: a Device (fem/device.h) whose memory is host memory and whose kernels run on OpenMP
 * threads (serial with one thread), with atomic or deterministic gather assembly. Always built; programs
 * register it with device_register(DEV_CPU, cpu_device_create). */
#ifndef FEMTO_CPU_H
#define FEMTO_CPU_H

#include "fem/device.h"

FEM_EXTERN_C_BEGIN

/* threads 0: OpenMP's default (all cores). */
int cpu_device_create(Device *d, int threads, AssembleKind assembly);
/* The threads a CPU device runs its kernels on from now on (at least 1), and its description to match. */
void cpu_device_set_threads(Device *d, int threads);

/* kernels.c: the element kernels of the Device table */
int cpu_interpolate(Device *d, const ElemView *v, const double *u, double *uq, double *duq);
int cpu_integrate(Device *d, const ElemView *v, const double *sq, const double *fq, double *r, double *evec);
int cpu_diag_add(Device *d, const ElemView *v, int c, int b, const double *sq, const double *fq, double *evec);
int cpu_assemble(Device *d, const ElemView *v, const double *evec, double *r);

/* fused.c: the fused operator override (Device.ops.operator_setup): cell blocks in one pass, SIMD across
 * elements; FEMTO_CPU_FUSED=0 in the environment leaves the default implementation. */
struct Operator;
int cpu_operator_setup(struct Operator *op);

/* qfunctions.c: the instances of physics/qfunctions.h's list, indexed by q-function id */
extern const QfFn cpu_qfunctions[];
extern const int cpu_nqfunctions;

FEM_EXTERN_C_END

#endif
