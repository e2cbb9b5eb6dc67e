#pragma once
// The CONV sweep's local search: after the random sample and the seeds of a job, hill climbing from
// its fastest sets. A neighbour moves one parameter to the next power of two up or down (DB and TC
// toggle), or two at once with the thread count unchanged; LI and LF follow as conv_space sets them,
// and only sets of conv_space are kept.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <vector>

namespace isaac::bench {

// The neighbours of p inside conv_space, without p itself and without duplicates.
std::vector<lower::ConvParams> conv_neighbours(const ir::Conv& v, const lower::ConvParams& p,
                                               const lower::DeviceLimits& limits);

}  // namespace isaac::bench
