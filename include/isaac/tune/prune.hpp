#pragma once
// Analytic pruning (after the first step of the MAGMA GEMM autotuner, Kurzak, Tomov & Dongarra 2012):
// no model and no GPU, only what a parameter set does with the multiprocessor's resources. Each legal
// set gets an occupancy level (resident warps per SM, from its threads, estimated registers and shared
// memory) and four figures to maximise:
//   shared-memory reuse  ML*NL / (ML+NL): FMAs per element loaded from global memory
//   register reuse       MS*NS / (MS+NS): FMAs per element loaded from shared memory
//   work per thread      MS*NS*U / KL: FMAs between two barriers
//   utilisation          useful / computed work (tile padding) x how full the last wave of blocks is
// The first three are the MAGMA criteria; the last makes the pruning input-aware (a 128x128 tile on a
// 2560x16 GEMM wastes 7/8 of its work). Sets whose utilisation is under half the best set's are
// dropped; then at each occupancy level only the sets that no other set of the level beats on all
// four are kept (a Pareto front), so the list keeps the best reuse each occupancy can afford. The list is ordered by occupancy, then by a balance of the four within a
// level: the order simulated annealing (tune/anneal.hpp) walks.
//
// Parameters that do not change the four figures are fixed, not searched: the widest legal vector
// loads, the load layouts of the space, and SW = 1.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/occupancy.hpp>

#include <vector>

namespace isaac::tune {

// How a parameter set uses a multiprocessor, and its figures of merit for one problem.
struct Resources {
  int threads = 0, registers = 0, shared_bytes = 0;
  int blocks_per_sm = 0;  // 0: the set does not fit on a multiprocessor
  int warps_per_sm = 0;   // the occupancy level
  double shared_reuse = 0, register_reuse = 0, work_per_thread = 0, utilisation = 0;
};

template <class Params>
struct PrunedSet {
  Params params;
  Resources resources;
};

struct PruneReport {
  std::size_t legal_sets = 0;   // sets looked at
  std::size_t kept = 0;         // the pruned list's length
  int occupancy_levels = 0;     // distinct warps-per-SM levels in the list
  double prune_ms = 0;
};

// The pruned list, ordered by occupancy (fewest resident warps first), then best balance first.
// Never empty when the problem has a legal set.
std::vector<PrunedSet<lower::GemmParams>> prune_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device,
                                                           const Multiprocessors& sms = {},
                                                           PruneReport* report = nullptr);
std::vector<PrunedSet<lower::ConvParams>> prune_conv_space(const ir::Conv& problem,
                                                           const lower::ConvEpilogue& epilogue,
                                                           const lower::DeviceLimits& device,
                                                           const Multiprocessors& sms = {},
                                                           PruneReport* report = nullptr);

// The index, in a pruned list, of the set that balances the four figures best over the whole list
// (where annealing starts).
template <class Params>
std::size_t best_balanced(const std::vector<PrunedSet<Params>>& list);
double balance(const Resources& r);

template <class Params>
std::size_t best_balanced(const std::vector<PrunedSet<Params>>& list) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < list.size(); ++i)
    if (balance(list[i].resources) > balance(list[best].resources)) best = i;
  return best;
}

}  // namespace isaac::tune
