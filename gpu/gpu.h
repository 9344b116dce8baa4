/* The CUDA backend's entry points: a Device (fem/device.h) whose memory is GPU memory and whose kernels run
 * on the GPU, plus what the kernel tests and the benchmark need beyond the Device table (launch tuning, the
 * element half of gather assembly, CUDA-event timers, a copy-bandwidth reference). app/ and the tests
 * register the backend through app/backends.h (device_register). The kernel design is in
 * docs/gpu-backend.md. */
#ifndef FEMTO_GPU_H
#define FEMTO_GPU_H

#include "fem/device.h"
#include "fem/solvers/coarse.h"

FEM_EXTERN_C_BEGIN

/* The first CUDA device; FEM_ERR_DEVICE with one readable sentence when there is none or it cannot be used.
 */
int gpu_device_create(Device *d, int threads, AssembleKind assembly);

/* The cuDSS coarse solver (fem/solvers/coarse.h): a CoarseFactory that app/ and the tests register with
 * coarse_register_cudss() in builds with cuDSS (FEMTO_HAVE_CUDSS). Cholesky factorisation of A's upper
 * triangle on the GPU of d, at setup; two triangular solves per application, on d's vectors. */
int gpu_cudss_create(Device *d, const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out);
/* Loads cuDSS (gpu/cudss_load.cu: femto is not linked against it) if not yet loaded, or waits for the load
 * under way. A library that cannot be loaded is FEM_ERR_DEVICE with one sentence, and gpu_cudss_create fails
 * with it (multigrid's automatic choice then takes the next coarse solver). gpu_cudss_preload starts the load
 * on a thread of its own and returns: gpu_device_create calls it once it has seen a GPU, so that a GPU run
 * loads cuDSS while the CUDA context starts and the mesh is read. */
int gpu_cudss_load(void);
void gpu_cudss_preload(void);

/* ---- Launch tuning of the element kernels (interpolate, integrate, diag_add). The defaults pick everything;
 * tests force each fallback so that every code path is checked against the CPU, and the benchmark can compare
 * choices. */
typedef enum { GPU_PLACE_AUTO = 0, GPU_PLACE_SHARED = 1, GPU_PLACE_GLOBAL = 2 } GpuPlace;
/* How quadrilaterals and hexahedra are computed: full shape tables (one table row per q-point, like
 * simplices) or sum factorisation (1D tables, stage by stage); AUTO picks per element type and order. */
typedef enum { GPU_PATH_AUTO = 0, GPU_PATH_FULL = 1, GPU_PATH_TENSOR = 2 } GpuPath;
typedef struct {
    size_t shared_limit;  /* bytes of dynamic shared memory one block may use; 0: the GPU's maximum */
    int elems_per_block;  /* 0: automatic (about 256 threads per block) */
    int threads_per_elem; /* 0: automatic (the largest stage of the element's work) */
    GpuPlace tables;      /* shape tables staged in shared memory, or read from global memory */
    GpuPlace qdata;       /* q-point arrays staged in shared memory, or read/written in global memory */
    GpuPath path;         /* quads and hexes: full tables or sum factorisation */
    int unfused;          /* operators use the separate kernels, not the fused ones (gpu/fused.cu) */
    int fused_shared; /* simplices of order <= 2 take the shared-memory fused kernel (gpu/fused.cu), not the
                       * register kernel (gpu/fused_simplex.cu): for comparing the two */
    int generic;      /* the separate kernels are always the run-time-size ones of gpu/kernels.cu, never the
                       * specialised ones (gpu/kernels_special.cu; FEMTO_GPU_SPECIAL=0 does the same) */
} GpuTuning;

/* Sets the tuning of a CUDA device (NULL: the defaults). FEM_ERR_USAGE when d is not a CUDA device. */
int gpu_device_tune(Device *d, const GpuTuning *t);

/* The launch configuration of the last element kernel, as one line ("64 threads/elem x 4 elems/block, 12.5 KB
 * shared, tables shared, q-data shared"). */
const char *gpu_last_launch(const Device *d);

/* Registers per thread and resident blocks per SM of the fused kernel (gpu/fused.cu) of cell block `block`'s
 * residual or Jacobian action, for femto-bench's launch lines; 0 and 0 where that block is not fused. */
int gpu_fused_occupancy(const struct Operator *op, int block, int residual, int *regs, int *blocks_per_sm);

/* The element half of gather assembly: evec[e][c][i] = (B^T sq + G^T fq) of element e, component c
 * (overwritten). ops.assemble is the other half (r += P^T evec). Their sum is ops.integrate of a
 * gather-assembly device. */
int gpu_integrate_evec(Device *d, const ElemView *v, const double *sq, const double *fq, double *evec);

/* ---- Timing (CUDA events on the default stream, where every kernel of the backend runs). */
typedef struct GpuTimer GpuTimer;
int gpu_timer_create(GpuTimer **t);
int gpu_timer_start(GpuTimer *t);
/* Records the stop event, waits for it and returns the time since start in microseconds. */
int gpu_timer_stop(GpuTimer *t, double *us);
void gpu_timer_destroy(GpuTimer *t);

/* Device-to-device cudaMemcpy of `bytes`, repeated `reps` times after one warm-up copy: the median time
 * (microseconds) and the bandwidth counting bytes read plus bytes written (2 bytes / time, in GB/s = 1e9
 * B/s). The reference that the benchmark compares its kernels with. */
int gpu_copy_bandwidth(Device *d, size_t bytes, int reps, double *us, double *gbps);

FEM_EXTERN_C_END

#endif
