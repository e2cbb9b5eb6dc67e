#pragma once
// The CONV benchmark's problems (conv_problems.csv: name,n,p,q,k,c,r,s) and what both modes derive
// from one: the ir::Conv in a layout, its minimal traffic, device operands.
#include <isaac/conv.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/runtime/runtime.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace isaac::bench {

using Clock = std::chrono::steady_clock;

struct Problem {
  std::string name;
  std::int64_t n, p, q, k, c, r, s;
};

std::vector<Problem> read_problems(const std::string& path);

// Stride 1, no padding: H = P + R - 1, W = Q + S - 1.
ir::Conv make_conv(const Problem& pr, ir::DType t, ir::ImageLayout il, ir::FilterLayout fl);

// One row of the sweep's winners CSV (dtype,name,layout,"params",ms,tflops), with its problem from the
// list and the ir::Conv in the winner's layout.
struct ConvWinner {
  std::string dtype, layout, params;
  Problem problem;
  ir::Conv conv;
  double ms = 0, tflops = 0;  // as the sweep measured them
};
// The winners of problems on the list, in the file's order; throws InvalidArgument when the file
// cannot be read.
std::vector<ConvWinner> read_winners(const std::vector<Problem>& problems, const std::string& path);

// The three layouts the sweep tries.
inline const std::pair<ir::ImageLayout, ir::FilterLayout> layouts[] = {{ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
                                                                       {ir::ImageLayout::chwn, ir::FilterLayout::crsk},
                                                                       {ir::ImageLayout::nhwc, ir::FilterLayout::krsc}};

// "NCHW/KCRS" and the like.
std::string layout_text(const ir::Conv& v);
// Bytes of input, filter and output: the least traffic a kernel can have.
double conv_bytes(const ir::Conv& v);

// Device buffers for the input, filter and output of `v`, filled with small finite values.
struct Operands {
  runtime::Buffer in, filter, out;
  explicit Operands(const ir::Conv& v);
};

// The kernel's median time in ms on the operands (alpha 1, beta 0), from runtime::time_on_stream.
double median_ms(const CompiledConv& kernel, const Operands& operands, const runtime::Stream& stream);

// The non-empty fields of `s` split at `sep`.
std::vector<std::string> split(const std::string& s, char sep);

}  // namespace isaac::bench
