/* The specialised separate kernels (gpu/kernels_special.cuh) run on the host through the emulation of
 * tests/gpu/emulate/cuda_runtime.h (one thread per CUDA thread, real barriers), against fem/elem_ops.h's
 * element functions (the CPU device's mathematics): a check of the kernels' logic (indexing, staging and
 * copy-out, barriers, partial last blocks) on machines without a GPU. It proves nothing about the compiled
 * CUDA code, the launch planning or shared-memory limits: test_gpu_kernels does that on a GPU.
 *
 * Every instantiated (dimension, nodes or 1D size, components) on synthetic blocks (random tables, dof map,
 * inputs; more elements than one block, the last block partial), full tables with the q-point arrays staged
 * (32 elements a block; 3 a block in chunks of 5 q-points) and unstaged; interpolation of values and
 * gradients, values only, gradients only; integration of s and f, s only, f only, with atomics and into
 * element vectors. Outputs start as NaN. Errors are max |kernel - reference| / (1 + max |reference|) and must
 * be <= 1e-12.
 *
 * The sum-factorised fused operator (gpu/fused_tensor.cuh's k_fused_tensor) on synthetic quadrilateral and
 * hexahedral blocks of P = 2..5, for heat (a conductivity that depends on T, so that the residual writes the
 * state the Jacobian action reads) and linear and neo-Hookean elasticity, residual and Jacobian action, with
 * atomics and into element vectors: against the interpolation above, the point function run on the host at
 * every q-point (the CPU device's way) and the integration above; the state the residuals write too. The
 * hexahedral instances cover the z accumulators in registers and in shared memory (tensor_xshared).
 *
 * Deterministic patch assembly (elem_halves.cuh's patch_put and k_patch_partials on fem/element_patch.h's
 * patches and partials): random element sums left in shared memory as the one-thread and split kernels leave
 * them (1D blocks, slot i epb + le) and as the sum-factorised kernel does (2D blocks, each element's own
 * region), on a banded dof map with a node every seventh element shares: against element-by-element adds,
 * and bitwise the same twice. */
#include "fem/elem_ops.h"
#include "fem/element_patch.h"
#include "fem/error.h"
#include "gpu/fused_tensor.cuh"
#include "gpu/kernels_special.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static uint64_t rng = 12345;
static double rnd() {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static std::vector<double> random_vec(size_t n) {
    std::vector<double> v(n);
    for (double &x : v) x = rnd();
    return v;
}

static int nchecks, nfailed;
static void check(const char *what, const std::vector<double> &got, const std::vector<double> &want) {
    double err = 0.0, scale = 0.0;
    for (size_t i = 0; i < got.size(); i++) {
        err = std::isfinite(got[i]) ? std::max(err, std::fabs(got[i] - want[i])) : INFINITY;
        scale = std::max(scale, std::fabs(want[i]));
    }
    err /= 1.0 + scale;
    nchecks++;
    if (!(err <= 1e-12)) nfailed++;
    printf("%-58s %9.2e %s\n", what, err, err <= 1e-12 ? "ok" : "FAIL");
}

/* One synthetic block and its references, computed element by element with fem/elem_ops.h. */
struct Block {
    int D, P, nd, nq, nc, tensor;
    int64_t nelem;
    int nnodes = 97;
    std::vector<int32_t> dofs;
    std::vector<double> B, G, B1, G1, u, sq, fq;
    ElemView v{};

    Block(int D_, int n, int nc_, bool tensor_, int64_t nelem_, int nq_simplex)
        : D(D_), P(n), nd(tensor_ ? (D_ == 3 ? n * n * n : n * n) : n), nq(tensor_ ? nd : nq_simplex),
          nc(nc_), tensor(tensor_), nelem(nelem_) {
        dofs.resize(nelem * nd);
        for (int32_t &d : dofs) d = (int32_t)((rnd() + 1.0) * 0.5 * nnodes) % nnodes;
        B = random_vec(nq * nd), G = random_vec(nq * nd * D), B1 = random_vec(P * P), G1 = random_vec(P * P);
        u = random_vec(nnodes * nc), sq = random_vec(nelem * nq * nc), fq = random_vec(nelem * nq * nc * D);
        v.nelem = nelem, v.ndof = nd, v.nq = nq, v.dim = D, v.ncomp = nc, v.dofs = dofs.data();
        v.B = B.data(), v.G = G.data(), v.tensor = tensor, v.nd1 = P, v.nq1 = P, v.B1 = B1.data();
        v.G1 = G1.data(), v.nnodes = nnodes;
    }

    void interp_ref(std::vector<double> &uq, std::vector<double> &duq) const {
        std::vector<double> ue(nd), w(6 * nd * P + 8);
        const double *b1 = B1.data(), *g1 = G1.data();
        for (int64_t e = 0; e < nelem; e++)
            for (int c = 0; c < nc; c++) {
                for (int i = 0; i < nd; i++) ue[i] = u[dofs[e * nd + i] * nc + c];
                double *qu = &uq[e * nq * nc + c], *qd = &duq[(e * nq * nc + c) * D];
                double *A = w.data(), *A2 = A + nd * P, *C1 = A2 + nd * P, *C2 = C1 + nd * P,
                       *C3 = C2 + nd * P;
                if (!tensor) {
                    eo_interp(0, 1, nq, nd, D, B.data(), G.data(), ue.data(), qu, nc, qd, nc * D);
                } else if (D == 2) {
                    eo_q2_interp1(0, 1, P, P, b1, g1, ue.data(), A, A2);
                    eo_q2_interp2(0, 1, P, P, b1, g1, A, A2, qu, nc, qd, nc * 2);
                } else {
                    eo_h3_interp1(0, 1, P, P, b1, g1, ue.data(), A, A2);
                    eo_h3_interp2(0, 1, P, P, b1, g1, A, A2, C1, C2, C3);
                    eo_h3_interp3(0, 1, P, P, b1, g1, C1, C2, C3, qu, nc, qd, nc * 3);
                }
            }
    }

    /* r (atomics) and evec[e][c][i] of B^T s + G^T f (either input NULL) */
    void integ_ref(const double *s, const double *f, std::vector<double> &r, std::vector<double> &ev) const {
        std::vector<double> re(nd), w(6 * nd * P + 8);
        const double *b1 = B1.data(), *g1 = G1.data();
        std::fill(r.begin(), r.end(), 0.0);
        for (int64_t e = 0; e < nelem; e++)
            for (int c = 0; c < nc; c++) {
                const double *sc = s ? s + e * nq * nc + c : nullptr,
                             *fc = f ? f + (e * nq * nc + c) * D : nullptr;
                double *A = w.data(), *A2 = A + nd * P, *C1 = A2 + nd * P, *C2 = C1 + nd * P,
                       *C3 = C2 + nd * P;
                if (!tensor) {
                    eo_integ(0, 1, nq, nd, D, B.data(), G.data(), sc, nc, fc, nc * D, re.data());
                } else if (D == 2) {
                    eo_q2_integ1(0, 1, P, P, b1, g1, sc, nc, fc, nc * 2, A, A2);
                    eo_q2_integ2(0, 1, P, P, b1, g1, A, A2, re.data());
                } else {
                    eo_h3_integ1(0, 1, P, P, b1, g1, sc, nc, fc, nc * 3, C1, C2, C3);
                    eo_h3_integ2(0, 1, P, P, b1, g1, C1, C2, C3, A, A2);
                    eo_h3_integ3(0, 1, P, P, b1, g1, A, A2, re.data());
                }
                for (int i = 0; i < nd; i++) {
                    r[dofs[e * nd + i] * nc + c] += re[i];
                    ev[(e * nc + c) * nd + i] = re[i];
                }
            }
    }
};

/* The staging of a full-table launch as the host plans it (gpu/kernels_special.cu): rows of qc q-points of
 * perq doubles each, at least min_row doubles, odd; none where not staged. */
static SpecialStage staging(bool staged, int qc, int perq, int min_row) {
    if (!staged || perq == 0) return SpecialStage{0, 0};
    return SpecialStage{std::max(qc * perq, min_row) | 1, qc};
}

template <int D, int N, int NC, bool TENSOR> static void run(int64_t nelem, int nq_simplex) {
    Block b(D, N, NC, TENSOR, nelem, nq_simplex);
    const int nq = b.nq, nd = b.nd;
    std::vector<double> uq_r(nelem * nq * NC), duq_r(nelem * nq * NC * D);
    std::vector<double> r_r(b.nnodes * NC), ev_r(nelem * NC * nd);
    b.interp_ref(uq_r, duq_r);
    static const char *layouts[3] = {"staged, 32/blk", "unstaged", "staged in chunks of 5, 3/blk"};
    for (int layout = 0; layout < (TENSOR ? 1 : 3); layout++) {
        const int epb = TENSOR || layout == 2 ? 3 : 32;
        const unsigned blocks = (unsigned)((nelem + epb - 1) / epb);
        const dim3 block = TENSOR ? dim3(N * N, epb) : dim3(epb);
        const bool staged = layout != 1;
        const int qc = layout == 2 ? std::min(5, nq) : nq;
        char what[160];
        for (int which = 0; which < 3; which++) { /* values + gradients, values, gradients */
            std::vector<double> uq(uq_r.size(), NAN), duq(duq_r.size(), NAN);
            double *pu = which != 2 ? uq.data() : nullptr, *pd = which != 1 ? duq.data() : nullptr;
            const double *in = b.u.data();
            if (TENSOR)
                emu_launch(blocks, block, k_tensor_interp<D, N, NC>, b.v, SpecialStage{0, 0}, in, pu, pd);
            else
                emu_launch(blocks, block, k_full_interp<D, N, NC>, b.v,
                           staging(staged, qc, (pu ? NC : 0) + (pd ? NC * D : 0), 0), in, pu, pd);
            static const char *wn[3] = {"values+grads", "values", "grads"};
            snprintf(what, sizeof what, "%s D=%d n=%d nc=%d interp %s [%s]", TENSOR ? "tensor" : "full", D, N,
                     NC, wn[which], TENSOR ? "-" : layouts[layout]);
            if (pu) check(what, uq, uq_r);
            if (pd) check(what, duq, duq_r);
        }
        for (int which = 0; which < 3; which++) { /* s + f, s, f */
            const double *ps = which != 2 ? b.sq.data() : nullptr, *pf = which != 1 ? b.fq.data() : nullptr;
            b.integ_ref(ps, pf, r_r, ev_r);
            std::vector<double> r(r_r.size(), 0.0), ev(ev_r.size(), NAN);
            const int perq = (ps ? NC : 0) + (pf ? NC * D : 0);
            const SpecialStage none{0, 0};
            if (TENSOR) {
                emu_launch(blocks, block, k_tensor_integ<D, N, NC>, b.v, none, ps, pf, r.data(),
                           (double *)nullptr);
                emu_launch(blocks, block, k_tensor_integ<D, N, NC>, b.v, none, ps, pf, (double *)nullptr,
                           ev.data());
            } else {
                emu_launch(blocks, block, k_full_integ<D, N, NC>, b.v, staging(staged, qc, perq, 0), ps, pf,
                           r.data(), (double *)nullptr);
                emu_launch(blocks, block, k_full_integ<D, N, NC>, b.v, staging(staged, qc, perq, NC * nd), ps,
                           pf, (double *)nullptr, ev.data());
            }
            static const char *wn[3] = {"s+f", "s", "f"};
            snprintf(what, sizeof what, "%s D=%d n=%d nc=%d integ %s atomic [%s]", TENSOR ? "tensor" : "full",
                     D, N, NC, wn[which], TENSOR ? "-" : layouts[layout]);
            check(what, r, r_r);
            snprintf(what, sizeof what, "%s D=%d n=%d nc=%d integ %s evec [%s]", TENSOR ? "tensor" : "full",
                     D, N, NC, wn[which], TENSOR ? "-" : layouts[layout]);
            check(what, ev, ev_r);
        }
    }
}

/* Physics constants of the fused operator's checks: heat with k(T) = 2.5 + 0.4 T (a state the residual writes
 * and the Jacobian action reads), a capacity and a source; elasticity with gravity. */
static HeatCtx heat_ctx(int D) {
    HeatCtx c;
    memset(&c, 0, sizeof c);
    c.dim = D, c.nmat = 1, c.transient = 1, c.a = 0.7, c.theta = 1.0;
    HeatMaterial_ &m = c.mat[0];
    m.kind = HEAT_K_POLYNOMIAL, m.n = 2, m.c[0] = 2.5, m.c[1] = 0.4, m.rhoc = 3.0, m.Q = 1.5;
    for (int i = 0; i < 3; i++) m.A[i * 4] = 1.0;
    return c;
}
static ElasCtx elas_ctx(int D) {
    ElasCtx c;
    memset(&c, 0, sizeof c);
    c.dim = D, c.nmat = 1, c.load = 1.0, c.gravity[0] = 0.3, c.gravity[1] = -9.81, c.gravity[2] = 0.5;
    ElasMaterial_ &m = c.mat[0];
    m.lambda = m.lambda_eff = 1.2, m.mu = 0.8, m.beta3 = m.beta_eff = 3 * 1.2 + 2 * 0.8, m.rho = 2.0;
    return c;
}

/* k_fused_tensor<D, P, P, NC, 0, POINT> on 8 elements, 3 a block (the last block partial). residual: the
 * point function writes nstate doubles a point, compared and left in state; else it reads state (the
 * residual's). The element values are scaled to 1e-3 so that the neo-Hookean points stay uninverted. */
template <int D, int P, int NC, PointFn POINT>
static void fused(const char *name, const void *ctx, int nstate, bool residual, std::vector<double> &state) {
    const int64_t nelem = 8, epb = 3;
    Block b(D, P, NC, true, nelem, 0);
    for (double &x : b.u) x *= 1e-3;
    const int nq = b.nq, gs = GEO_STRIDE(D);
    const int64_t n = nelem * nq;
    std::vector<double> geo((size_t)(n * gs)), uq((size_t)(n * NC)), duq((size_t)(n * NC * D));
    std::vector<double> sq(uq.size()), fq(duq.size());
    std::vector<int32_t> tag((size_t)nelem, 0);
    for (int64_t i = 0; i < n; i++) { /* w det J > 0, J^-1 near the identity */
        geo[(size_t)(i * gs)] = 0.75 + 0.25 * rnd();
        for (int k = 0; k < D * D; k++) geo[(size_t)(i * gs + 1 + k)] = (k % (D + 1) == 0) + 0.2 * rnd();
    }
    b.interp_ref(uq, duq);
    QfArgs a;
    memset(&a, 0, sizeof a);
    a.n = n, a.nq = nq, a.dim = a.rdim = D, a.ncomp = NC, a.nstate = nstate, a.threads = 1;
    a.residual = residual, a.geo = geo.data(), a.tag = tag.data(), a.ctx = ctx;
    state.resize((size_t)(n * nstate), NAN);
    std::vector<double> st_ref = state;
    QfArgs h = a;
    h.u = uq.data(), h.du = duq.data(), h.s = sq.data(), h.f = fq.data();
    h.state = nstate ? st_ref.data() : nullptr;
    for (int64_t i = 0; i < n; i++) POINT(&h, i);
    std::vector<double> r_r((size_t)(b.nnodes * NC)), ev_r((size_t)(nelem * NC * b.nd));
    b.integ_ref(sq.data(), fq.data(), r_r, ev_r);
    PatchView none;
    memset(&none, 0, sizeof none);
    const bool xs = tensor_xshared(D, P, NC);
    char what[160];
    for (int ev_mode = 0; ev_mode < 2; ev_mode++) {
        std::vector<double> r(r_r.size(), 0.0), ev(ev_r.size(), NAN), st = state;
        QfArgs k = a;
        k.state = nstate ? st.data() : nullptr;
        emu_launch((unsigned)((nelem + epb - 1) / epb), dim3(P * P, (unsigned)epb),
                   k_fused_tensor<D, P, P, NC, 0, POINT>, b.v, k, (const double *)b.u.data(),
                   ev_mode ? (double *)nullptr : r.data(), ev_mode ? ev.data() : (double *)nullptr, none);
        snprintf(what, sizeof what, "fused D=%d P=%d %s%s %s", D, P, name, xs ? " (X shared)" : "",
                 ev_mode ? "evec" : "atomic");
        if (ev_mode)
            check(what, ev, ev_r);
        else
            check(what, r, r_r);
        if (residual && nstate) {
            snprintf(what, sizeof what, "fused D=%d P=%d %s state %s", D, P, name,
                     ev_mode ? "evec" : "atomic");
            check(what, st, st_ref);
        }
    }
    if (residual) state = st_ref;
}

/* The residual (which writes the state), then the Jacobian action at it, of heat and of both elasticities. */
template <int D, int P> static void fused_all() {
    const HeatCtx hc = heat_ctx(D);
    const ElasCtx ec = elas_ctx(D);
    std::vector<double> st;
    fused<D, P, 1, heat_cell_residual>("heat R(u)", &hc, 1 + D, true, st);
    fused<D, P, 1, heat_cell_jacobian>("heat J x", &hc, 1 + D, false, st);
    st.clear();
    fused<D, P, D, elas_linear_residual>("linear elasticity R(u)", &ec, 0, true, st);
    fused<D, P, D, elas_linear_jacobian>("linear elasticity J x", &ec, 0, false, st);
    fused<D, P, D, elas_nh_residual>("neo-Hookean R(u)", &ec, ELAS_NH_STATE, true, st);
    fused<D, P, D, elas_nh_jacobian>("neo-Hookean J x", &ec, ELAS_NH_STATE, false, st);
}

/* Deterministic patch assembly of NC components on ne elements of ND nodes, epb to a patch; tensor: 2D blocks
 * (4 threads an element, element le's sums at smem[le * per + c * ND + i]), else 1D (smem[c * epb ND + i epb
 * + le]). */
template <int NC, int ND> static void patches(int64_t ne, int epb, bool tensor) {
    const int64_t nn = 4 * ne + ND + 1, hub = nn - 1;
    std::vector<fem_idx> dofs((size_t)(ne * ND));
    for (int64_t e = 0; e < ne; e++)
        for (int i = 0; i < ND; i++)
            dofs[(size_t)(e * ND + i)] = (fem_idx)(e % 7 == 3 && i == ND - 1 ? hub : 4 * e + i);
    ElementPatches pt;
    if (element_patches(dofs.data(), ne, ND, nn, epb, &pt) || element_patches_partials(&pt, nn)) {
        printf("patches: %s\n", fem_last_error());
        nchecks++, nfailed++;
        return;
    }
    const std::vector<double> r = random_vec((size_t)(ne * ND * NC)), init = random_vec((size_t)(nn * NC));
    std::vector<double> want = init, part((size_t)(pt.part_off[pt.npatch] + 1) * NC), out[2];
    for (int64_t e = 0; e < ne; e++)
        for (int i = 0; i < ND; i++)
            for (int c = 0; c < NC; c++)
                want[(size_t)(dofs[(size_t)(e * ND + i)] * NC + c)] += r[(size_t)((e * NC + c) * ND + i)];
    PatchView pv;
    memset(&pv, 0, sizeof pv);
    pv.node_off = pt.node_off, pv.npriv = pt.npriv, pv.inc_beg = pt.inc_beg, pv.nodes = pt.nodes;
    pv.inc_slot = pt.inc_slot, pv.part_off = pt.part_off, pv.part = part.data();
    const int per = NC * ND + 3, nslot = epb * ND;
    auto kernel = [&](int64_t ne_, double *o) {
        const int le = tensor ? (int)threadIdx.y : (int)threadIdx.x, t = tensor ? (int)threadIdx.x : 0;
        const int64_t e = (int64_t)blockIdx.x * epb + le;
        if (e < ne_)
            for (int i = t; i < ND; i += tensor ? 4 : 1)
                for (int c = 0; c < NC; c++)
                    smem[tensor ? le * per + c * ND + i : c * nslot + i * epb + le] =
                        r[(size_t)((e * NC + c) * ND + i)];
        __syncthreads();
        if (tensor)
            patch_put<NC>(
                pv, [&](int c, int slot) { return smem[(slot % epb) * per + c * ND + slot / epb]; }, o);
        else
            patch_put<NC>(
                pv, [&](int c, int slot) { return smem[c * nslot + slot]; }, o);
    };
    for (int run = 0; run < 2; run++) {
        out[run] = init;
        std::fill(part.begin(), part.end(), NAN); /* every partial must be written */
        emu_launch((unsigned)pt.npatch, tensor ? dim3(4, epb) : dim3(epb), kernel, ne, out[run].data());
        emu_launch(3, dim3(8), k_patch_partials<NC>, (int64_t)pt.nshared, (const fem_idx *)pt.sh_node,
                   (const int32_t *)pt.sh_beg, (const int32_t *)pt.sh_part, (const double *)part.data(),
                   out[run].data());
    }
    char what[96];
    snprintf(what, sizeof what, "patch assembly NC %d ND %d epb %d %s", NC, ND, epb, tensor ? "2D" : "1D");
    check(what, out[0], want);
    nchecks++;
    if (memcmp(out[0].data(), out[1].data(), sizeof(double) * out[0].size()) != 0)
        nfailed++, printf("%-44s not bitwise the same twice\n", what);
    element_patches_destroy(&pt);
}

int main() {
    /* deterministic patch assembly: one patch, several, the last partial; a hub node in many patches */
    patches<1, 10>(128, 128, false), patches<1, 10>(300, 32, false), patches<3, 10>(95, 10, false);
    patches<2, 6>(100, 16, false), patches<3, 27>(61, 7, true), patches<1, 8>(50, 5, true);
    /* simplices: nodes of p = 1..3 with a few rule sizes (femto's defaults and longer ones) */
    run<2, 3, 1, false>(40, 3), run<2, 3, 2, false>(40, 6), run<2, 6, 1, false>(40, 6);
    run<2, 6, 2, false>(40, 12), run<2, 10, 1, false>(40, 12), run<2, 10, 2, false>(40, 16);
    run<3, 4, 1, false>(40, 4), run<3, 4, 3, false>(40, 14), run<3, 10, 1, false>(40, 14);
    run<3, 10, 3, false>(40, 24), run<3, 20, 1, false>(40, 24), run<3, 20, 3, false>(40, 35);
    /* quads p = 1..3 and hexes p = 1 on full tables (random ones: the kernels do not care) */
    run<2, 4, 1, false>(40, 4), run<2, 9, 2, false>(40, 9), run<2, 16, 1, false>(40, 16);
    run<2, 16, 2, false>(40, 16), run<3, 8, 1, false>(40, 8), run<3, 8, 3, false>(40, 27);
    /* quads and hexes, P = Q = 2..4 */
    run<2, 2, 1, true>(8, 0), run<2, 2, 2, true>(8, 0), run<2, 3, 1, true>(8, 0), run<2, 3, 2, true>(8, 0);
    run<2, 4, 1, true>(8, 0), run<2, 4, 2, true>(8, 0), run<3, 2, 1, true>(8, 0), run<3, 2, 3, true>(8, 0);
    run<3, 3, 1, true>(8, 0), run<3, 3, 3, true>(8, 0), run<3, 4, 1, true>(8, 0), run<3, 4, 3, true>(8, 0);
    /* the fused operator: P = 2..5 (hexahedral elasticity's z accumulators in registers at P = 2, in shared
     * memory from P = 3) */
    fused_all<2, 2>(), fused_all<2, 3>(), fused_all<2, 4>(), fused_all<3, 2>(), fused_all<3, 3>();
    fused_all<3, 4>(), fused_all<3, 5>();
    printf("%d checks, %d failed\n", nchecks, nfailed);
    return nfailed ? 1 : 0;
}
