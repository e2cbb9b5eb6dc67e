#pragma once
// Tensor maps for the Tensor Memory Accelerator (sm_90): the 128-byte description of a global tensor
// that cp.async.bulk.tensor reads to copy one box of it into shared memory. The driver builds it on
// the host; a kernel takes it by value, as a grid constant.
#include <isaac/runtime/runtime.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace isaac::runtime {

// The driver's CUtensorMap, spelled without cuda.h.
struct alignas(128) TensorMap {
  std::array<std::byte, 128> bytes{};
};

// How TMA arranges a box's rows in shared memory: the 16-byte chunks of each row of `bytes` bytes
// XORed with the row's index (the layouts wgmma reads, PTX ISA "Shared memory matrix layout").
enum class TensorSwizzle { none = 0, bytes32 = 32, bytes64 = 64, bytes128 = 128 };

// A three-dimensional tiled map of elements of `element_bytes` (2, 4 or 8) at `base`. Dimension 0 is
// contiguous; strides[i] is the distance in bytes between consecutive indices of dimension i + 1.
// A copy reads a box of box[0] x box[1] x 1 elements; what lies outside the tensor reads as zero.
// Throws InvalidArgument naming the rule (16-byte aligned base and strides, box sides of 1 to 256,
// an inner box side within the swizzle's row) before the driver is asked, DriverError if it refuses.
TensorMap encode_tensor_map(DevicePtr base, int element_bytes, std::array<std::uint64_t, 3> dims,
                            std::array<std::uint64_t, 2> strides, std::array<std::uint32_t, 2> box,
                            TensorSwizzle swizzle);

}  // namespace isaac::runtime
