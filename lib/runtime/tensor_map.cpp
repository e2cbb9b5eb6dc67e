#include "runtime/driver.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/tensor_map.hpp>

#include <fmt/format.h>

namespace isaac::runtime {

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) && alignof(TensorMap) == alignof(CUtensorMap));

TensorMap encode_tensor_map(DevicePtr base, int element_bytes, std::array<std::uint64_t, 3> dims,
                            std::array<std::uint64_t, 2> strides, std::array<std::uint32_t, 2> box,
                            TensorSwizzle swizzle) {
  // Formatted only for an error: this runs at every launch of a TMA kernel.
  auto what = [&] {
    return fmt::format("tensor map of {} x {} x {} elements of {} bytes, strides {} and {} bytes, box {} x {}", dims[0],
                       dims[1], dims[2], element_bytes, strides[0], strides[1], box[0], box[1]);
  };
  CUtensorMapDataType type;
  switch (element_bytes) {
    case 2: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case 4: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    case 8: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; break;
    default: throw InvalidArgument(fmt::format("{}: elements are 2, 4 or 8 bytes", what()));
  }
  if (base % 16) throw InvalidArgument(fmt::format("{}: the base address {:#x} is not 16-byte aligned", what(), base));
  for (std::uint64_t stride : strides)
    if (stride % 16 || stride >= (std::uint64_t{1} << 40))
      throw InvalidArgument(fmt::format("{}: a stride must be a multiple of 16 bytes below 2^40", what()));
  for (std::uint64_t d : dims)
    if (d == 0 || d > (std::uint64_t{1} << 32))
      throw InvalidArgument(fmt::format("{}: every dimension holds 1 to 2^32 elements", what()));
  for (std::uint32_t side : box)
    if (side == 0 || side > 256) throw InvalidArgument(fmt::format("{}: a box side is 1 to 256 elements", what()));
  if ((box[0] * element_bytes) % 16)
    throw InvalidArgument(fmt::format("{}: the box's inner side must be a multiple of 16 bytes", what()));
  if (swizzle != TensorSwizzle::none && box[0] * element_bytes > static_cast<std::uint32_t>(swizzle))
    throw InvalidArgument(fmt::format("{}: the box's inner side exceeds the {}-byte swizzle", what(), static_cast<int>(swizzle)));
  CUtensorMapSwizzle mode = CU_TENSOR_MAP_SWIZZLE_NONE;
  switch (swizzle) {
    case TensorSwizzle::none: break;
    case TensorSwizzle::bytes32: mode = CU_TENSOR_MAP_SWIZZLE_32B; break;
    case TensorSwizzle::bytes64: mode = CU_TENSOR_MAP_SWIZZLE_64B; break;
    case TensorSwizzle::bytes128: mode = CU_TENSOR_MAP_SWIZZLE_128B; break;
  }
  const cuuint64_t global_dims[3] = {dims[0], dims[1], dims[2]};
  const cuuint64_t global_strides[2] = {strides[0], strides[1]};
  const cuuint32_t box_dims[3] = {box[0], box[1], 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  TensorMap map;
  CUresult result = driver::api().cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap*>(&map), type, 3, reinterpret_cast<void*>(base), global_dims, global_strides,
      box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, mode, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) driver::check(result, ("cuTensorMapEncodeTiled (" + what() + ")").c_str());
  return map;
}

}  // namespace isaac::runtime
