#include "runtime/driver.hpp"

#include <isaac/runtime/runtime.hpp>

#include <algorithm>
#include <utility>

namespace isaac::runtime {

namespace {
void check_range(std::size_t bytes, std::size_t offset, std::size_t size, const char* what) {
  if (offset > size || bytes > size - offset)
    throw InvalidArgument(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(offset) + " overruns a device buffer of " + std::to_string(size) + " bytes");
}
}  // namespace

Buffer::Buffer(std::size_t bytes) : bytes_(bytes), owned_(true) {
  use_device();
  if (bytes) ISAAC_CU(cuMemAlloc, &ptr_, bytes);
}

Buffer Buffer::wrap(DevicePtr ptr, std::size_t bytes) {
  Buffer b;
  b.ptr_ = ptr;
  b.bytes_ = bytes;
  return b;
}

Buffer::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)),
      owned_(std::exchange(other.owned_, false)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  std::swap(ptr_, other.ptr_);
  std::swap(bytes_, other.bytes_);
  std::swap(owned_, other.owned_);
  return *this;
}

Buffer::~Buffer() {
  if (owned_ && ptr_) driver::api().cuMemFree(ptr_);  // no throwing from a destructor
}

void Buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  check_range(bytes, offset, bytes_, "an upload");
  use_device();
  ISAAC_CU(cuMemcpyHtoD, ptr_ + offset, host, bytes);
  ISAAC_CU(cuCtxSynchronize);
}

void Buffer::repeat_prefix(std::size_t prefix) {
  check_range(prefix, 0, bytes_, "a repeated prefix");
  if (prefix == 0) throw InvalidArgument("a repeated prefix of 0 bytes fills nothing");
  use_device();
  ISAAC_CU(cuCtxSynchronize);
  // Each copy doubles what is filled; whole copies of the prefix keep byte i equal to byte i % prefix.
  for (std::size_t filled = prefix; filled < bytes_;) {
    const std::size_t copy = std::min(filled, bytes_ - filled);
    ISAAC_CU(cuMemcpyDtoD, ptr_ + filled, ptr_, copy);
    filled += copy;
  }
  ISAAC_CU(cuCtxSynchronize);
}

void Buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  check_range(bytes, offset, bytes_, "a download");
  use_device();
  ISAAC_CU(cuCtxSynchronize);
  ISAAC_CU(cuMemcpyDtoH, host, ptr_ + offset, bytes);
}

void Buffer::fill_bytes(unsigned char value) {
  use_device();
  ISAAC_CU(cuMemsetD8, ptr_, value, bytes_);
  ISAAC_CU(cuCtxSynchronize);
}

void Buffer::fill_bytes(unsigned char value, const Stream& stream) {
  ISAAC_CU(cuMemsetD8Async, ptr_, value, bytes_, static_cast<CUstream>(stream.handle()));
}

}  // namespace isaac::runtime
