#pragma once
// The plan of `isaac-tune collect --template conv`: random dense convolutions like the paper's
// DeepBench ones (bench/problems/conv_problems.csv), and for each, --per-shape parameter sets drawn
// uniformly from the template's whole legal space (lower::conv_space, enumerated once per input;
// the CONV template has no learned sampler). As for GEMM, the plan is a pure function of its
// settings: row i is the same in every run with the same settings.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace isaac::tune::cli {

struct ConvShapeOptions {
  std::int64_t n_min = 1, n_max = 64;      // images
  std::int64_t c_min = 1, c_max = 1024;    // input channels
  std::int64_t k_min = 16, k_max = 2048;   // filters
  std::int64_t pq_min = 7, pq_max = 350;   // output height P and width Q (each drawn on its own)
  double max_flops = 0x1p35;               // 2*N*P*Q*K*C*R*S at most this, so that one kernel stays short
  double max_elements = 0x1p27;            // input and output elements at most this (device memory, checks)
  // This share of the inputs has N, C and K rounded up to multiples of 8: the vectors of eight that
  // the wgmma (TC=2) sets copy need them (N for CHWN, C for NHWC, K or C*R*S for the filter).
  double aligned_share = 0;
  std::vector<ir::DType> dtypes = {ir::DType::f32, ir::DType::f16};
  void validate() const;  // throws InvalidArgument naming the bad option
};

// A dense convolution (ir::dense_conv): N, C, K, P, Q log-uniform in their ranges, redrawn together
// until the flops and the tensors fit the caps; R x S among 1x1, 3x3 (twice as often), 5x5 and 7x7,
// or one time in eight among the rectangular 5x20, 3x10 and 5x10 of speech models; stride 1 (2 one
// time in five); dilation 1 (2 one time in ten); padding 0 or min(R, S) / 2 (even odds); H and W the
// input sizes that give P x Q outputs; dtype and layout (NCHW/KCRS, CHWN/CRSK or NHWC/KRSC) uniform.
ir::Conv random_conv(const ConvShapeOptions& o, std::mt19937_64& rng);

// With probability o.aligned_share, N, C and K rounded up to multiples of 8 where their ranges allow.
// The draw is taken only where the share is set, so that other plans stay as they were.
void align_conv_extents(const ConvShapeOptions& o, std::mt19937_64& rng, std::int64_t& n, std::int64_t& c,
                        std::int64_t& k);

struct ConvPlanOptions {
  ConvShapeOptions shapes;
  int per_shape = 8;           // parameter sets per input: distinct while the legal space allows
  std::uint64_t seed = 1;
  double tc_share = 0;         // f16 and f64: this share of an input's rows drawn from its TC=1 sets alone
  lower::DeviceLimits device;  // the legal space is taken against these
  // "template=conv seed=1 dtypes=f32,f16 per-shape=8 ...": written at the top of the CSV, compared on --resume.
  std::string signature() const;
};

struct ConvPlanRow {
  std::uint64_t index = 0;
  std::uint64_t shape = 0;                  // index / per_shape
  ir::Conv problem;
  std::optional<lower::ConvParams> params;  // none: the legal space is empty for this input
  bool params_planned = true;               // false: next(false) left the parameter set out
};

class ConvPlan {
 public:
  explicit ConvPlan(ConvPlanOptions options);  // validates the options
  // Row `next_index()`, then the one after it: call in order. The first row of an input that needs
  // its parameter set enumerates the input's legal space (tens of milliseconds); with `params` false
  // (a row that --resume skips), the row has its input only, and the space waits for a row that
  // needs it. Either way the rows after it are the same.
  ConvPlanRow next(bool params = true);
  std::uint64_t next_index() const { return next_; }
  const ConvPlanOptions& options() const { return options_; }

 private:
  ConvPlanOptions options_;
  std::mt19937_64 shape_rng_, pick_rng_;
  std::uint64_t next_ = 0;
  ir::Conv shape_;
  std::vector<double> draws_;             // the current input's uniform draws, one per row
  std::vector<lower::ConvParams> picks_;  // its parameter sets, one per row (once the space is enumerated)
  bool picked_ = false;
};

}  // namespace isaac::tune::cli
