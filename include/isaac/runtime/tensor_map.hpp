#pragma once
// Tensor maps for the Tensor Memory Accelerator (sm_90): the 128-byte description of a global tensor
// that cp.async.bulk.tensor reads to copy one box of it into shared memory. The driver builds it on
// the host; a kernel takes it by value, as a grid constant.
#include <isaac/runtime/runtime.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace isaac::runtime {

// The driver's CUtensorMap, spelled without cuda.h.
struct alignas(128) TensorMap {
  std::array<std::byte, 128> bytes{};
};

// How TMA arranges a box's rows in shared memory: the 16-byte chunks of each row of `bytes` bytes
// XORed with the row's index (the layouts wgmma reads, PTX ISA "Shared memory matrix layout").
enum class TensorSwizzle { none = 0, bytes32 = 32, bytes64 = 64, bytes128 = 128 };

// A tiled map of a tensor of 1 to 5 dimensions whose elements are `element_bytes` (2, 4 or 8) at
// `base`. Dimension 0 is contiguous; strides[i] is the distance in bytes between consecutive indices
// of dimension i + 1. A copy reads a box of box[0] x box[1] x ... elements; what lies outside the
// tensor reads as zero. Throws InvalidArgument naming the rule (16-byte aligned base and strides, box
// sides of 1 to 256, an inner box side within the swizzle's row) before the driver is asked,
// DriverError if it refuses.
TensorMap encode_tensor_map(DevicePtr base, int element_bytes, std::span<const std::uint64_t> dims,
                            std::span<const std::uint64_t> strides, std::span<const std::uint32_t> box,
                            TensorSwizzle swizzle);

// An im2col map of an image tensor of 3 to 5 dimensions, (C, W[, H[, D]], N) with C contiguous: a
// copy reads `pixels` consecutive output pixels (W fastest, then H, D and N) of `channels` channels
// each, starting at the pixel and channel the copy names and moved by its filter offsets; taps
// outside the image read as zero. A pixel's window starts range over the bounding box from
// lower_corner to the image's far edge plus upper_corner (one value per spatial dimension, W first,
// within [-128, 127] for a 4-dimensional tensor), stepping by element_strides (the convolution's
// strides; one per dimension, C's first and ignored). Throws InvalidArgument as encode_tensor_map does,
// DriverError if the driver refuses.
TensorMap encode_im2col_tensor_map(DevicePtr base, int element_bytes, std::span<const std::uint64_t> dims,
                                   std::span<const std::uint64_t> strides, std::span<const int> lower_corner,
                                   std::span<const int> upper_corner, std::uint32_t channels, std::uint32_t pixels,
                                   std::span<const std::uint32_t> element_strides, TensorSwizzle swizzle);

}  // namespace isaac::runtime
