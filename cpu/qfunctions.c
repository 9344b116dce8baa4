/* The CPU instances of every q-function in physics/qfunctions.h: a loop over the q-points of a block, on the
 * device's OpenMP threads (FEM_QF_CPU in fem/qfunction.h). */
#include "cpu/cpu.h"

#include "physics/qfunctions.h"

#define CPU_QF_DEFINE_(fn) static FEM_QF_CPU(fn##_cpu, fn)
FEMTO_QFUNCTIONS(CPU_QF_DEFINE_)

#define CPU_QF_ENTRY_(fn) [QF_##fn] = fn##_cpu,
const QfFn cpu_qfunctions[QF_COUNT] = {FEMTO_QFUNCTIONS(CPU_QF_ENTRY_)};
const int cpu_nqfunctions = QF_COUNT;
