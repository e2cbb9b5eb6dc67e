#pragma once
// The sweep's local search: after the random sample of a job, hill climbing from its fastest sets.
// A neighbour of a parameter set moves ONE parameter to the adjacent value of its list
//   ML, NL {16..256}   MS, NS {1..16}   U {4..32}   KS {1, 2}   KL {1, 2, 4, 8}   KG {1..256}
//   VA, VB {1, 2, 4, 8}   DB {0, 1}   SW {1, 8}   ACC {16, 32} (f16 only)
// (the lists of gemm_space, powers of two), or makes one of a few two-parameter moves that keep the
// thread count: ML and MS together, NL and NS together, ML up and NL down (and back), MS up and NS
// down (and back). The load layouts (LA, LB) are refitted (tune::fit_load_layouts) and only the sets
// gemm_space would hold are kept: threads a multiple of 32, legal for the problem and the device
// (lower::check_gemm), SW = 8 only where the grid has more than one tile both ways.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <optional>
#include <string>
#include <vector>

namespace isaac::bench {

// The legal neighbours of p, without p itself and without duplicates, one-parameter moves first.
std::vector<lower::GemmParams> neighbours(const ir::Gemm& g, const lower::GemmParams& p,
                                          const lower::DeviceLimits& limits);

// Whether gemm_space(g, limits) could hold p (legal, threads a multiple of 32, SW only where it matters);
// the reason when not.
std::optional<std::string> outside_space(const ir::Gemm& g, const lower::GemmParams& p,
                                         const lower::DeviceLimits& limits);

// The seeds of a job's search: tune::heuristic_gemm and, when given, an earlier winner (its text);
// each only if legal (the reasons of those dropped go to `dropped`).
std::vector<lower::GemmParams> search_seeds(const ir::Gemm& g, const lower::DeviceLimits& limits,
                                            const std::string& earlier_winner, std::string* dropped = nullptr);

}  // namespace isaac::bench
