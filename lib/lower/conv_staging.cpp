// Whether a direct CONV kernel stages its results in shared memory for 16-byte stores, and how much
// memory that takes (lower/conv.hpp, conv_staged_stores).
#include "lower/conv_layout.hpp"

#include <isaac/lower/conv.hpp>

#include <array>
#include <utility>

namespace isaac::lower {

namespace {

// Whether `width` consecutive elements of the staged axis, from a multiple of `width`, are
// consecutive elements of O, 16-byte aligned where O is: along the filters (conv_stages_along_filters)
// pixel strides that keep the alignment; along the pixels, the pixel axes the kernel numbers fastest
// first (n, q, p for a CHWN input, else q, p, n) packed with unit stride over a multiple of `width`
// pixels (or all of them), the other strides multiples of `width`.
bool output_runs_contiguous(const ir::Conv& v, int width) {
  const auto& os = v.output_strides;
  if (conv_stages_along_filters(v)) return os[0] % width == 0 && os[2] % width == 0 && os[3] % width == 0;
  if (os[1] % width) return false;
  const bool n_fastest = v.input_layout == ir::ImageLayout::chwn;
  const std::array<std::pair<std::int64_t, std::int64_t>, 3> axes =
      n_fastest ? std::array{std::pair{v.n, os[0]}, std::pair{v.q, os[3]}, std::pair{v.p, os[2]}}
                : std::array{std::pair{v.q, os[3]}, std::pair{v.p, os[2]}, std::pair{v.n, os[0]}};
  std::int64_t packed = 1;
  std::size_t a = 0;
  for (; a < axes.size() && axes[a].second == packed; ++a) packed *= axes[a].first;
  if (a == axes.size()) return true;
  if (packed % width) return false;
  for (; a < axes.size(); ++a)
    if (axes[a].second % width) return false;
  return true;
}

}  // namespace

// Where runs are not contiguous, every run would take eight element stores after the round trip
// through shared memory: f16 Conv11 (K = 174, NHWC) ran at 0.90x the direct stores' speed (H200).
bool conv_staged_stores(const ir::Conv& v, const ConvParams& p) {
  return ir::is_16_bit(v.dtype) && p.tc && !p.wg && p.cl == 1 && p.pl % 8 == 0 && p.kl % 8 == 0 &&
         output_runs_contiguous(v, 8);
}

int conv_staging_bytes(const ir::Conv& v, const ConvParams& p) {
  if (!conv_staged_stores(v, p)) return 0;
  if (conv_stores_by_tma(v, p)) return p.pl * p.kl * 2;  // the output's values, unpadded
  // The f32 staging: the 16-bit one takes less.
  return (conv_stages_along_filters(v) ? p.pl : p.kl) * conv_staging_pitch(v, p, 4) * 4;
}

}  // namespace isaac::lower
