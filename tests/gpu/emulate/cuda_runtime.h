/* Host emulation of the CUDA features that the device code of gpu/kernels_special.cuh and gpu/elem_halves.cuh
 * uses (its element patches' assembly too), for tests/gpu/test_special_emulated.cpp: a kernel launch runs its
 * blocks one after the other, each with one std::thread per CUDA thread (threadIdx thread-local),
 * __syncthreads() a barrier of the block's threads (a thread that returns leaves it, as an exited CUDA thread
 * does), dynamic shared memory one static array filled with NaN before each block, atomicAdd under a mutex.
 * Found before the CUDA headers on the include path of that test only. */
#ifndef FEMTO_TEST_EMULATED_CUDA_RUNTIME_H
#define FEMTO_TEST_EMULATED_CUDA_RUNTIME_H

#include <barrier>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct double2 {
    double x, y;
};

inline thread_local dim3 threadIdx(0, 0, 0);
inline dim3 blockIdx(0, 0, 0), blockDim, gridDim;
inline std::barrier<> *emu_barrier;
inline std::mutex emu_atomic;
alignas(16) inline double smem[1 << 15];

inline void __syncthreads() {
    emu_barrier->arrive_and_wait();
}
template <typename T> inline T __ldg(const T *p) {
    return *p;
}
inline double atomicAdd(double *p, double v) {
    std::lock_guard<std::mutex> lock(emu_atomic);
    const double old = *p;
    *p = old + v;
    return old;
}

/* k<<<blocks, block>>>(args...) */
template <typename K, typename... A> void emu_launch(unsigned blocks, dim3 block, K k, A... args) {
    blockDim = block, gridDim = dim3(blocks);
    const unsigned n = block.x * block.y;
    for (unsigned b = 0; b < blocks; b++) {
        blockIdx = dim3(b);
        for (double &x : smem) x = NAN;
        std::barrier<> bar(n);
        emu_barrier = &bar;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < n; t++)
            threads.emplace_back([&, t] {
                threadIdx = dim3(t % block.x, t / block.x);
                k(args...);
                bar.arrive_and_drop();
            });
        for (std::thread &th : threads) th.join();
    }
}

#endif
