#pragma once
// Device scratch memory for a kernel that may be launched on several streams at once.
#include <isaac/runtime/runtime.hpp>

#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace isaac::runtime {

// One buffer per stream, grown on demand: launches on different streams may run at the same time,
// so they must never share scratch memory, while launches on one stream run in order and can.
class StreamWorkspaces {
 public:
  // At least `bytes` bytes for launches on `stream` (0 bytes: a null pointer). Growing frees the
  // stream's old buffer, which cuMemFree does only once the work using it has finished.
  DevicePtr get(const Stream& stream, std::size_t bytes);

 private:
  // The per-thread default stream has one handle for a different stream in every thread.
  using Key = std::pair<StreamHandle, std::thread::id>;
  std::mutex mutex_;
  std::map<Key, Buffer> buffers_;
};

}  // namespace isaac::runtime
