#include "runtime/driver.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/tensor_map.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <string>

namespace isaac::runtime {

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) && alignof(TensorMap) == alignof(CUtensorMap));

namespace {

constexpr std::size_t max_rank = 5;

// The rules both kinds of map share, checked before the driver is asked. `what` formats the map for
// an error only: this runs at every launch of a TMA kernel.
CUtensorMapDataType check_tensor(DevicePtr base, int element_bytes, std::span<const std::uint64_t> dims,
                                 std::span<const std::uint64_t> strides, std::uint32_t inner_box_elements,
                                 TensorSwizzle swizzle, const std::function<std::string()>& what) {
  CUtensorMapDataType type;
  switch (element_bytes) {
    case 2: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case 4: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    case 8: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; break;
    default: throw InvalidArgument(fmt::format("{}: elements are 2, 4 or 8 bytes", what()));
  }
  if (dims.empty() || dims.size() > max_rank || strides.size() + 1 != dims.size())
    throw InvalidArgument(fmt::format("{}: a tensor has 1 to 5 dimensions and a stride for each but the first", what()));
  if (base % 16) throw InvalidArgument(fmt::format("{}: the base address {:#x} is not 16-byte aligned", what(), base));
  for (std::uint64_t stride : strides)
    if (stride % 16 || stride >= (std::uint64_t{1} << 40))
      throw InvalidArgument(fmt::format("{}: a stride must be a multiple of 16 bytes below 2^40", what()));
  for (std::uint64_t d : dims)
    if (d == 0 || d > (std::uint64_t{1} << 32))
      throw InvalidArgument(fmt::format("{}: every dimension holds 1 to 2^32 elements", what()));
  if ((inner_box_elements * element_bytes) % 16)
    throw InvalidArgument(fmt::format("{}: the box's inner side must be a multiple of 16 bytes", what()));
  if (swizzle != TensorSwizzle::none && inner_box_elements * element_bytes > static_cast<std::uint32_t>(swizzle))
    throw InvalidArgument(
        fmt::format("{}: the box's inner side exceeds the {}-byte swizzle", what(), static_cast<int>(swizzle)));
  return type;
}

CUtensorMapSwizzle swizzle_mode(TensorSwizzle swizzle) {
  switch (swizzle) {
    case TensorSwizzle::none: break;
    case TensorSwizzle::bytes32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TensorSwizzle::bytes64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TensorSwizzle::bytes128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

TensorMap encode_tensor_map(DevicePtr base, int element_bytes, std::span<const std::uint64_t> dims,
                            std::span<const std::uint64_t> strides, std::span<const std::uint32_t> box,
                            TensorSwizzle swizzle) {
  auto what = [&] {
    return fmt::format("tensor map of {} elements of {} bytes, strides {} bytes, box {}", fmt::join(dims, " x "),
                       element_bytes, fmt::join(strides, ", "), fmt::join(box, " x "));
  };
  if (box.size() != dims.size()) throw InvalidArgument(fmt::format("{}: the box needs a side per dimension", what()));
  const CUtensorMapDataType type = check_tensor(base, element_bytes, dims, strides, box[0], swizzle, what);
  for (std::uint32_t side : box)
    if (side == 0 || side > 256) throw InvalidArgument(fmt::format("{}: a box side is 1 to 256 elements", what()));
  const cuuint32_t element_strides[max_rank] = {1, 1, 1, 1, 1};
  TensorMap map;
  CUresult result = driver::api().cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap*>(&map), type, static_cast<cuuint32_t>(dims.size()), reinterpret_cast<void*>(base),
      dims.data(), strides.data(), box.data(), element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) driver::check(result, ("cuTensorMapEncodeTiled (" + what() + ")").c_str());
  return map;
}

TensorMap encode_im2col_tensor_map(DevicePtr base, int element_bytes, std::span<const std::uint64_t> dims,
                                   std::span<const std::uint64_t> strides, std::span<const int> lower_corner,
                                   std::span<const int> upper_corner, std::uint32_t channels, std::uint32_t pixels,
                                   std::span<const std::uint32_t> element_strides, TensorSwizzle swizzle) {
  auto what = [&] {
    return fmt::format("im2col tensor map of {} elements of {} bytes, strides {} bytes, corners ({}) and ({}), {} "
                       "channels x {} pixels, element strides {}",
                       fmt::join(dims, " x "), element_bytes, fmt::join(strides, ", "), fmt::join(lower_corner, ", "),
                       fmt::join(upper_corner, ", "), channels, pixels, fmt::join(element_strides, ", "));
  };
  if (dims.size() < 3) throw InvalidArgument(fmt::format("{}: an image has 3 to 5 dimensions", what()));
  const CUtensorMapDataType type = check_tensor(base, element_bytes, dims, strides, channels, swizzle, what);
  const std::size_t spatial = dims.size() - 2;
  if (lower_corner.size() != spatial || upper_corner.size() != spatial || element_strides.size() != dims.size())
    throw InvalidArgument(fmt::format("{}: the corners need a value per spatial dimension and the element strides one "
                                      "per dimension",
                                      what()));
  // The driver packs the corners of all spatial dimensions into 16 bits.
  const int reach = dims.size() == 3 ? 32768 : dims.size() == 4 ? 128 : 16;
  for (std::span<const int> corner : {lower_corner, upper_corner})
    for (int x : corner)
      if (x < -reach || x >= reach)
        throw InvalidArgument(fmt::format("{}: a {}-dimensional tensor's corners lie within [{}, {}]", what(),
                                          dims.size(), -reach, reach - 1));
  if (channels == 0 || channels > 256) throw InvalidArgument(fmt::format("{}: 1 to 256 channels per pixel", what()));
  if (pixels == 0 || pixels > 1024) throw InvalidArgument(fmt::format("{}: 1 to 1024 pixels per copy", what()));
  for (std::uint32_t step : element_strides)
    if (step == 0 || step > 8) throw InvalidArgument(fmt::format("{}: element strides are 1 to 8", what()));
  TensorMap map;
  CUresult result = driver::api().cuTensorMapEncodeIm2col(
      reinterpret_cast<CUtensorMap*>(&map), type, static_cast<cuuint32_t>(dims.size()), reinterpret_cast<void*>(base),
      dims.data(), strides.data(), lower_corner.data(), upper_corner.data(), channels, pixels, element_strides.data(),
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) driver::check(result, ("cuTensorMapEncodeIm2col (" + what() + ")").c_str());
  return map;
}

}  // namespace isaac::runtime
