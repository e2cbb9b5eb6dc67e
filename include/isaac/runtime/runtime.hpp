#pragma once
// The CUDA Driver API, loaded with dlopen at first use: libisaac has no link-time dependency on
// libcuda, so it loads (and reports a clear error) on machines without a driver.
// Every failing driver call throws isaac::DriverError naming the call and the driver's message.
#include <isaac/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace isaac::runtime {

// Opaque driver handles, spelled without cuda.h so that only lib/runtime includes it.
using DevicePtr = unsigned long long;  // CUdeviceptr
using StreamHandle = void*;        // CUstream
using ContextHandle = void*;       // CUcontext
using EventHandle = void*;         // CUevent
using ModuleHandle = void*;        // CUmodule
using FunctionHandle = void*;      // CUfunction

// True when libcuda could be loaded and cuInit succeeded; `why` receives the reason otherwise.
bool driver_available(std::string* why = nullptr);
// The driver's version as an integer (e.g. 13000); throws DriverError without a driver.
int driver_version();
int device_count();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block = 0;         // bytes, without opt-in
  int max_shared_per_block_optin = 0;   // bytes, after cuFuncSetAttribute
  int max_shared_per_sm = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  int warp_size = 32;
  std::int64_t l2_bytes = 0;
  std::int64_t global_memory_bytes = 0;
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

DeviceInfo device_info(int ordinal = 0);

// Makes the device's primary context current on the calling thread (retaining it once per process)
// and returns it. Every other call below does this itself.
ContextHandle use_device(int ordinal = 0);
// Host threads that wait for this device sleep instead of spinning (CU_CTX_SCHED_BLOCKING_SYNC on
// its primary context), for programs whose other threads need every core: isaac-tune collect and
// focus compile on all of them while one thread times. Kernel times, taken with events, do not
// change; a wait returns some microseconds later.
void block_on_waits(int ordinal = 0);

class Stream {
 public:
  Stream();                                            // a new non-blocking stream, owned
  static Stream wrap(StreamHandle user_stream);        // the user's stream, not owned (0 = default)
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  ~Stream();
  StreamHandle handle() const { return handle_; }
  void synchronize() const;

 private:
  explicit Stream(StreamHandle h, bool owned) : handle_(h), owned_(owned) {}
  StreamHandle handle_ = nullptr;
  bool owned_ = false;
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes);                  // cuMemAlloc, owned
  static Buffer wrap(DevicePtr ptr, std::size_t bytes);  // the user's memory, not owned
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  ~Buffer();
  DevicePtr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  // Synchronous with respect to all work on the device: the copy happens after every stream's
  // earlier work and has landed when the call returns. (The driver's own copies run on the legacy
  // stream, which isaac's non-blocking streams do not wait for.)
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  // Repeats the buffer's first `prefix` bytes over the whole of it, by copies on the device (as
  // synchronous as upload): large operands filled from one uploaded block without crossing PCIe.
  void repeat_prefix(std::size_t prefix);
  void fill_bytes(unsigned char value);                              // cuMemsetD8, synchronous
  void fill_bytes(unsigned char value, const Stream& stream);  // cuMemsetD8Async

 private:
  DevicePtr ptr_ = 0;
  std::size_t bytes_ = 0;
  bool owned_ = false;
};

struct KernelAttributes {
  int registers = 0;
  int static_shared_bytes = 0;
  int local_bytes = 0;
  int max_threads_per_block = 0;
  int ptx_version = 0;
  int binary_version = 0;
};

class Module;

class Kernel {
 public:
  FunctionHandle handle() const { return handle_; }
  const std::string& name() const { return name_; }
  KernelAttributes attributes() const;
  // Raises the dynamic shared-memory limit (needed above 48 KB).
  void set_max_dynamic_shared(int bytes) const;
  // The blocks of `threads` threads and `dynamic_shared_bytes` one SM holds at once (the driver's
  // occupancy calculator, from the kernel's registers and shared memory).
  int max_active_blocks_per_sm(int threads, int dynamic_shared_bytes) const;

 private:
  friend class Module;
  Kernel(FunctionHandle h, std::string name) : handle_(h), name_(std::move(name)) {}
  FunctionHandle handle_ = nullptr;
  std::string name_;
};

class Module {
 public:
  // JIT-compiles PTX; a failure throws DriverError carrying the JIT error log.
  static Module from_ptx(const std::string& ptx);
  static Module from_cubin(const std::vector<char>& cubin);
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;
  ~Module();
  Kernel kernel(const std::string& name) const;
  const std::string& jit_log() const { return log_; }

 private:
  Module(ModuleHandle h, std::string log) : handle_(h), log_(std::move(log)) {}
  ModuleHandle handle_ = nullptr;
  std::string log_;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// How a launch orders itself after the stream's previous kernel.
enum class LaunchOrder {
  after_previous,    // starts when the previous kernel has finished (the stream's usual order)
  overlap_previous,  // sm_90 programmatic dependent launch: may start once every block of the previous
                     // kernel ran griddepcontrol.launch_dependents; only for a kernel that runs
                     // griddepcontrol.wait before it touches what the previous kernel writes
};

// Launches `kernel`; `args` are pointers to each argument's value, as cuLaunchKernel takes them.
void launch(const Kernel& kernel, Dim3 grid, Dim3 block, unsigned dynamic_shared_bytes,
            const Stream& stream, void** args, LaunchOrder order = LaunchOrder::after_previous);

class Event {
 public:
  Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  ~Event();
  void record(const Stream& stream);
  void synchronize() const;
  // Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_since(const Event& start) const;

 private:
  EventHandle handle_ = nullptr;
};

}  // namespace isaac::runtime
