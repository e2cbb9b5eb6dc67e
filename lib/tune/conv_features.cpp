#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/occupancy.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace isaac::tune {

namespace {

double lg(double v) { return std::log2(std::max(v, 1.0)); }
double lg(int v) { return v > 0 && (v & (v - 1)) == 0 ? std::countr_zero(unsigned(v)) : lg(double(v)); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / std::max<std::int64_t>(b, 1); }

// The registers a direct kernel's threads are expected to hold, for its occupancy: wgmma (TC=2)
// kernels hold their accumulators and little else (occupancy.hpp).
int occupancy_registers(const ir::Conv& v, const lower::ConvParams& p, bool tma) {
  if (p.tc != 2) return lower::estimate_conv_registers(v, p);
  return p.pl * p.kl / p.threads() + (tma ? wgmma_tma_registers : wgmma_copy_registers);
}

}  // namespace

const std::vector<std::string>& conv_feature_names() {
  static const std::vector<std::string> names = {
      "log2_n", "log2_c", "log2_h", "log2_w", "log2_k", "log2_p", "log2_q", "log2_r", "log2_s", "log2_stride",
      "log2_pad_plus_1", "log2_dilation", "log2_gemm_m", "log2_gemm_n", "log2_gemm_k", "input_reduction_contiguous",
      "filter_k_contiguous", "f16", "bf16", "f32", "f64",
      "log2_pl", "log2_kl", "log2_ps", "log2_ks", "log2_u", "log2_cs", "log2_cl", "log2_cg", "log2_vi", "log2_vf",
      "log2_li", "log2_lf", "db", "tc", "log2_threads", "log2_blocks", "log2_reduction_iterations", "wg",
      "log2_group_planes", "tma", "log2_resident_blocks", "wave_fill", "log2_tma_stages"};
  return names;
}

std::vector<double> conv_features(const ir::Conv& v, std::span<const lower::ConvParams> params,
                                  const lower::DeviceLimits& device) {
  const Multiprocessors sms = multiprocessors(device);
  const bool input_reduction_contiguous = lower::conv_input_reduction_contiguous(v);
  const bool filter_k_contiguous = lower::conv_filter_k_contiguous(v);
  const size_t width = conv_feature_names().size();
  const ir::ImplicitGemm g = ir::implicit_gemm(v);
  std::vector<double> problem = {lg(double(v.n)), lg(double(v.c)), lg(double(v.h)), lg(double(v.w)), lg(double(v.k)),
                                 lg(double(v.p)), lg(double(v.q)), lg(double(v.r)), lg(double(v.s)),
                                 lg(double(std::max(v.stride_h, v.stride_w))),
                                 lg(double(std::max(v.pad_h, v.pad_w) + 1)),
                                 lg(double(std::max(v.dilation_h, v.dilation_w))), lg(double(g.m)), lg(double(g.n)),
                                 lg(double(g.k)), double(input_reduction_contiguous), double(filter_k_contiguous),
                                 double(v.dtype == ir::DType::f16),
                                 double(v.dtype == ir::DType::bf16), double(v.dtype == ir::DType::f32),
                                 double(v.dtype == ir::DType::f64)};
  std::vector<double> out(width * params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const lower::ConvParams& p = params[i];
    double* o = std::copy(problem.begin(), problem.end(), out.data() + i * width);
    for (int x : {p.pl, p.kl, p.ps, p.ks, p.u, p.cs, p.cl, p.cg, p.vi, p.vf, p.li, p.lf}) *o++ = lg(x);
    *o++ = p.db;
    *o++ = p.tc;
    *o++ = lg(p.threads());
    if (p.wg == 2) {
      // The batched GEMM's blocks over every plane, its iterations over C, and its batch of planes.
      const auto grid = lower::conv_grid(v, p).main;
      *o++ = lg(double(grid[0]) * grid[1] * grid[2]);
      *o++ = lg(double(ceil_div(v.c, p.u)));
      *o++ = 2;
      *o++ = lg(double((v.r + 3) * (v.s + 3)));
    } else if (p.wg) {
      // A block of a WG=1 kernel takes PL 2 x 2 output tiles and KL filters over all C, U channels
      // per stage (its grid is one-dimensional); its CL thread groups split the (R+1)(S+1) planes.
      *o++ = lg(double(lower::conv_grid(v, p).main[0]));
      *o++ = lg(double(ceil_div(v.c, p.u)));
      *o++ = 1;
      *o++ = lg(double((v.r + 1) * (v.s + 1) / std::max(p.cl, 1)));
    } else {
      const double blocks = double(ceil_div(g.m, p.pl) * ceil_div(g.n, p.kl) * std::max(p.cg, 1));
      *o++ = lg(blocks);
      *o++ = lg(double(ceil_div(ceil_div(g.k, std::max(p.cg, 1)), p.u)));
      *o++ = 0;
      *o++ = 0;
      // How the kernel copies, how many of its blocks an SM holds and how full their waves keep the GPU.
      const bool tma = lower::conv_tma(v, p);
      const int threads = p.threads() + (tma && lower::conv_tma_producer_warp(v, p) ? 32 : 0);
      const int resident = resident_blocks(
          threads, occupancy_registers(v, p, tma),
          lower::conv_shared_bytes(v.dtype, input_reduction_contiguous, filter_k_contiguous, p), sms);
      *o++ = double(tma);
      *o++ = lg(std::max(resident, 1));
      *o++ = wave_fill(blocks, resident, sms);
      // The ring is not a parameter: where the grid fits on the SMs it deepens from four stages (three
      // with DB=0) to as many as 16 (lower::conv_pipeline_stages), 1.2-1.6x as fast, a step the other
      // features only imply.
      const int deep = tma ? lower::conv_pipeline_stages(v, p) : 0;
      *o++ = tma ? lg(deep ? deep : p.db ? 4 : 3) : 0;
      continue;
    }
    // The Winograd kernels copy with cp.async; their occupancy and ring are left to their own features.
    *o++ = 0;
    *o++ = 0;
    *o++ = 1;
    *o++ = 0;
  }
  return out;
}

std::vector<double> conv_features(const ir::Conv& problem, const lower::ConvParams& params,
                                  const lower::DeviceLimits& device) {
  return conv_features(problem, std::span(&params, 1), device);
}

}  // namespace isaac::tune
