#include "runtime/driver.hpp"

#include <isaac/runtime/runtime.hpp>

#include <utility>

namespace isaac::runtime {

Stream::Stream() : owned_(true) {
  use_device();
  CUstream s = nullptr;
  ISAAC_CU(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
  handle_ = s;
}

Stream Stream::wrap(StreamHandle user_stream) { return Stream(user_stream, false); }

Stream::Stream(Stream&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), owned_(std::exchange(other.owned_, false)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(owned_, other.owned_);
  return *this;
}

Stream::~Stream() {
  if (owned_ && handle_) driver::api().cuStreamDestroy(static_cast<CUstream>(handle_));
}

void Stream::synchronize() const { ISAAC_CU(cuStreamSynchronize, static_cast<CUstream>(handle_)); }

Event::Event() {
  use_device();
  CUevent e = nullptr;
  ISAAC_CU(cuEventCreate, &e, CU_EVENT_DEFAULT);
  handle_ = e;
}

Event::Event(Event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  std::swap(handle_, other.handle_);
  return *this;
}

Event::~Event() {
  if (handle_) driver::api().cuEventDestroy(static_cast<CUevent>(handle_));
}

void Event::record(const Stream& stream) {
  ISAAC_CU(cuEventRecord, static_cast<CUevent>(handle_), static_cast<CUstream>(stream.handle()));
}

void Event::synchronize() const { ISAAC_CU(cuEventSynchronize, static_cast<CUevent>(handle_)); }

float Event::elapsed_since(const Event& start) const {
  float ms = 0;
  ISAAC_CU(cuEventElapsedTime, &ms, static_cast<CUevent>(start.handle_), static_cast<CUevent>(handle_));
  return ms;
}

}  // namespace isaac::runtime
