#pragma once
// The model search (paper §6): rank the whole legal space of a problem with the performance model,
// keep the best k, then (select_*) re-benchmark them, spread over tilings (spread.hpp), on the GPU and
// keep the fastest.
//
// GEMM: the first layer of the network is linear in the features, and the features of a parameter
// set differ from those of its base set (KG = 1, SW = 1) only by terms that depend on U, KG and SW,
// and by its wave fill, which depends on the base set's blocks and KG (tune/occupancy.hpp). So the
// first layer runs once per base set (~60k, a chunk at a time, the problem's own features folded into
// the bias) plus once per (U, KG, SW), and every expanded set (~1M) costs a vector addition and the
// wave fill's column scaled before the remaining layers: the same numbers as predict(), up to float
// rounding (the test checks both). CONV spaces are smaller and go through predict() directly.
// An ensemble model (ensemble.hpp) ranks the whole space with its first member and re-ranks that
// member's best ensemble_pool sets with all of its members.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/model_file.hpp>

#include <functional>
#include <string>
#include <vector>

namespace isaac::tune {

template <class Params>
struct RankedSet {
  Params params;
  double predicted_tflops = 0;
};
using Ranked = RankedSet<lower::GemmParams>;
using RankedConv = RankedSet<lower::ConvParams>;

struct SearchReport {
  std::size_t legal_sets = 0;  // the whole legal space that was ranked
  double enumerate_ms = 0;     // listing the legal space
  double evaluate_ms = 0;      // the model over every legal set, and the top-k selection
};

// Sets an ensemble model (ensemble.hpp) re-ranks: its first member ranks the whole space, and the
// whole ensemble this many of that member's best.
inline constexpr int ensemble_pool = 2048;

// The search's hedges (spread.hpp) take the model's best sets that split the reduction less than its
// first choice, and its best few thousand may hold none: on the thin f16 DeepBench rows all of them
// split K. So the search keeps the model's best sets of each grid split (KG, CG) besides, this many
// per split (rank_*_space's per_split).
inline constexpr int per_split_pool = 32;

// The `top` best legal sets by predicted TFLOP/s, best first (SW = 1 alone where the grid fits on
// the SMs at once: lower::gemm_grid_fits_at_once); then, with per_split > 0, the best
// per_split sets of each grid split and (GEMM) of each kind of kernel (TC) that are not among them,
// best first. The model must be made for
// the template, with its feature names (else InvalidArgument says what it was made for).
std::vector<Ranked> rank_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                    int top, SearchReport* report = nullptr, int per_split = 0);
std::vector<RankedConv> rank_conv_space(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                        const lower::DeviceLimits& device, const Model& model, int top,
                                        SearchReport* report = nullptr, int per_split = 0);

// The model's best `top` legal sets that are neighbours of `center` (neighbours.hpp: the same tiling
// or one step from it), best first, neither `center` nor the sets that differ from it in SW alone; the
// splits are those rank_gemm_space ranks.
std::vector<Ranked> rank_gemm_neighbours(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                         const lower::GemmParams& center, int top);
// The same for CONV over the direct and both Winograd spaces (a neighbour keeps the kernel's kind).
std::vector<RankedConv> rank_conv_neighbours(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                             const lower::DeviceLimits& device, const Model& model,
                                             const lower::ConvParams& center, int top);
// How many of them the re-benchmark picks its neighbour candidates from.
inline constexpr int neighbour_pool = 256;

// Measures one parameter set on the GPU and returns its time in ms, the median of runs_per_timing
// runs; throws when it cannot (a compile, JIT or launch failure): the selection then moves on to the
// next candidate.
inline constexpr int runs_per_timing = 7;
// The re-benchmark's last step, a race among short kernels (select_best.hpp): up to
// race_finalists_max candidates within race_margin of the fastest are timed in turns until each has
// run for race_ms of GPU time, or race_rounds turns; from the third turn on, one whose median so far
// is clearly_slower than the best median leaves the race.
inline constexpr double race_margin = 1.03;
inline constexpr std::size_t race_finalists_max = 4;
inline constexpr double race_ms = 2.0;
inline constexpr int race_rounds = 12;
inline constexpr double clearly_slower = 1.02;
template <class Params>
using Benchmark = std::function<double(const Params&)>;
using GemmBenchmark = Benchmark<lower::GemmParams>;

template <class Params>
struct TimedSet {
  Params params;
  int rank = 0;     // its place among the candidates spread over tilings
  double ms = 0;    // the re-benchmark's time (select_best.hpp says how it is taken)
};

template <class Params>
struct Choice {
  Params params;
  double predicted_tflops = 0;
  double measured_ms = -1;  // -1 when nothing was measured (top_k = 0)
  // The chosen set's place among the candidates spread over tilings (0 = the model's first choice);
  // the neighbours of the fastest come after those and their spares (select_best.hpp); for CONV,
  // listed + i is the i-th of the Winograd sets timed besides (select_conv).
  int rank = 0;
  int listed = 0;           // the candidates listed, spares and neighbours included
  int benchmarked = 0;      // candidates that ran
  std::vector<std::string> failures;  // candidates that could not run, with why
  std::vector<TimedSet<Params>> timed;  // every candidate that ran, in the model's order
  SearchReport search;
};
using Selection = Choice<lower::GemmParams>;
using ConvSelection = Choice<lower::ConvParams>;

// Ranks the space and re-benchmarks the model's `top_k` best (0 trusts the model's first choice): a
// fifth of them (neighbours.hpp) are the model's best neighbours of the fastest of the others, unless
// the model's first choice is a `wgmma` set (neighbours_pay).
// `candidates`, when given, sees the sets about to be benchmarked, in order, before they are (to
// compile them in parallel): the first pass, then the neighbours; spares that stand in for failed
// candidates are benchmarked unannounced. Throws isaac::Error when no candidate could run.
Selection select_gemm(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model, int top_k,
                      const GemmBenchmark& benchmark,
                      const std::function<void(const std::vector<Ranked>&)>& candidates = {});
// CONV: the model ranks the direct and the Winograd sets (conv_space, winograd_space and
// winograd_product_space), and a fifth of the top k are neighbours as for GEMM. Where Winograd
// applies and top_k > 0, the Winograd sets (WG=1 and WG=2)
// that won the H100 sweeps are timed besides the model's
// candidates (those it has not among them already), a hedge for the problems the model has seen least;
// their predicted_tflops is 0.
std::vector<lower::ConvParams> winograd_candidates(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                                   const lower::DeviceLimits& device);
ConvSelection select_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                          const lower::DeviceLimits& device, const Model& model, int top_k,
                          const Benchmark<lower::ConvParams>& benchmark,
                          const std::function<void(const std::vector<RankedConv>&)>& candidates = {});

}  // namespace isaac::tune
