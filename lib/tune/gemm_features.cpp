#include <isaac/ir/features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/occupancy.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace isaac::tune {

namespace {

double lg(double v) { return std::log2(std::max(v, 1.0)); }

// The parameters are powers of two: no call to log2 for them (the search computes millions).
double lg(int v) { return v > 0 && (v & (v - 1)) == 0 ? std::countr_zero(unsigned(v)) : lg(double(v)); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

const std::vector<std::string>& gemm_feature_names() {
  static const std::vector<std::string> names = {
      "log2_m", "log2_n", "log2_k", "log2_batch", "a_trans", "b_trans", "f16", "bf16", "f32", "f64",
      "log2_vector_a", "log2_vector_b", "log2_vector_c",
      "log2_ml", "log2_nl", "log2_ms", "log2_ns", "log2_u", "log2_ks", "log2_kl", "log2_kg", "log2_va", "log2_vb",
      "log2_la", "log2_lb", "log2_sw", "db", "acc32", "tc", "wgmma", "tma",
      "log2_threads", "log2_blocks", "log2_k_iterations", "log2_resident_blocks", "wave_fill", "sm_balance"};
  return names;
}

// The problem's own features: the first gemm_problem_features of a row, the same for every set.
static void write_problem_features(const ir::Gemm& g, const ir::InputFeatures& in, double* o) {
  // input_features: m, n, k, batch, dtype_bytes, a_trans, b_trans, vector_a, vector_b, vector_c
  *o++ = lg(in.values[0]);
  *o++ = lg(in.values[1]);
  *o++ = lg(in.values[2]);
  *o++ = lg(in.values[3]);
  *o++ = in.values[5];
  *o++ = in.values[6];
  *o++ = g.dtype == ir::DType::f16;
  *o++ = g.dtype == ir::DType::bf16;
  *o++ = g.dtype == ir::DType::f32;
  *o++ = g.dtype == ir::DType::f64;
  *o++ = lg(in.values[7]);
  *o++ = lg(in.values[8]);
  *o++ = lg(in.values[9]);
}

// The rest of the row, from gemm_problem_features on.
static void write_set_features(const ir::Gemm& g, const lower::GemmParams& p, const Multiprocessors& sms,
                               const lower::DeviceLimits& device, double* o) {
  for (int v : {p.ml, p.nl, p.ms, p.ns, p.u, p.ks, p.kl, p.kg, p.va, p.vb, p.la, p.lb, p.sw}) *o++ = lg(v);
  *o++ = p.db;
  *o++ = p.acc32;
  // Tensor cores at all, and warp-group wgmma (TC=2) rather than mma.sync: two indicators, not one
  // ordinal, since TC=2 is no "more" of TC=1.
  *o++ = p.tc > 0;
  *o++ = p.tc == 2;
  // Copies by the Tensor Memory Accelerator: the same tiles run 1.07x as fast as with cp.async (the
  // geometric mean of the H100's TC=2 winners), and the data holds both kinds.
  *o++ = p.tma;
  *o++ = lg(p.threads());
  const std::int64_t blocks = ceil_div(g.m, std::max(p.ml, 1)) * ceil_div(g.n, std::max(p.nl, 1)) *
                              std::max(p.kg, 1) * std::max<std::int64_t>(g.batch, 1);
  *o++ = lg(double(blocks));
  *o++ = lg(double(ceil_div(ceil_div(g.k, std::max(p.kg, 1)), std::max(p.u, 1))));
  const int resident = gemm_resident_blocks(g, p, sms);
  *o++ = lg(std::max(resident, 1));
  *o++ = gemm_wave_fill(g, p, blocks, resident, sms, device);
  *o++ = sm_balance(double(blocks), sms);
}

void gemm_features(const ir::Gemm& problem, const lower::GemmParams& params, double* out,
                   const lower::DeviceLimits& device) {
  write_problem_features(problem, ir::input_features(problem), out);
  write_set_features(problem, params, multiprocessors(device), device, out + gemm_problem_features);
}

std::vector<double> gemm_features(const ir::Gemm& problem, const lower::GemmParams& params,
                                  const lower::DeviceLimits& device) {
  std::vector<double> out(gemm_feature_names().size());
  gemm_features(problem, params, out.data(), device);
  return out;
}

std::vector<double> gemm_features(const ir::Gemm& problem, std::span<const lower::GemmParams> params,
                                  const lower::DeviceLimits& device) {
  const size_t width = gemm_feature_names().size();
  std::vector<double> out(width * params.size());
  std::array<double, gemm_problem_features> own;
  write_problem_features(problem, ir::input_features(problem), own.data());
  const Multiprocessors sms = multiprocessors(device);
  for (size_t i = 0; i < params.size(); ++i) {
    double* row = out.data() + i * width;
    std::ranges::copy(own, row);
    write_set_features(problem, params[i], sms, device, row + gemm_problem_features);
  }
  return out;
}

}  // namespace isaac::tune
