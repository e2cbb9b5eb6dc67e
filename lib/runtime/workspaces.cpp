#include <isaac/runtime/workspaces.hpp>

#include "runtime/driver.hpp"

namespace isaac::runtime {

DevicePtr StreamWorkspaces::get(const Stream& stream, std::size_t bytes) {
  if (bytes == 0) return 0;
  const bool per_thread = stream.handle() == static_cast<StreamHandle>(CU_STREAM_PER_THREAD);
  Key key{stream.handle(), per_thread ? std::this_thread::get_id() : std::thread::id{}};
  std::lock_guard lock(mutex_);
  Buffer& buffer = buffers_[key];
  if (buffer.bytes() < bytes) buffer = Buffer(bytes);
  return buffer.ptr();
}

}  // namespace isaac::runtime
