#pragma once
// Bucketed keys for runtime autotuning (after Burn's autotune): shapes that are likely to want the
// same parameters share one tuning decision, so a program that sees many shapes tunes a few times.
// A key rounds each dimension up to a power of two (or keeps it exact), flags whether the shape
// divides a tile, and caps the batch. The rules are per pattern and configurable.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>

#include <cstdint>
#include <string>

namespace isaac::tune {

struct GemmBuckets {
  bool round_m = true, round_n = true, round_k = true;  // next power of two; false keeps the size exact
  int tile = 64;        // the divisibility flag: whether M, N and K are all multiples of it (0: no flag)
  int batch_cap = 16;   // batches from this size up share a bucket
};

struct ConvBuckets {
  bool round_n = true, round_pq = true, round_k = true, round_c = true;  // R, S, strides, padding exact
  int tile = 32;        // the flag: whether N*P*Q and K are multiples of it (0: no flag)
  int batch_cap = 64;   // images per batch from this many up share a bucket
};

// The smallest power of two >= v, for 1 <= v <= 2^62; throws InvalidArgument otherwise.
std::int64_t round_up_power_of_two(std::int64_t v);

// "gemm M<=512 N<=16 K<=4096 batch=1 tile64=no": the layout and dtype are in the key's other fields.
// A size of 0 (K = 0) keys as "K=0", a bucket of its own.
std::string gemm_bucket(const ir::Gemm& problem, const GemmBuckets& rules = {});
std::string conv_bucket(const ir::Conv& problem, const ConvBuckets& rules = {});

}  // namespace isaac::tune
