#include "runtime/driver.hpp"

#include <isaac/runtime/runtime.hpp>

#include <utility>

namespace isaac::runtime {

Module Module::from_ptx(const std::string& ptx) {
  use_device();
  // The JIT writes its messages into these buffers; we keep the info log and report the error log.
  std::string info(16384, '\0'), error(16384, '\0');
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* values[] = {info.data(), reinterpret_cast<void*>(info.size()), error.data(),
                    reinterpret_cast<void*>(error.size()), reinterpret_cast<void*>(1)};
  CUmodule module = nullptr;
  CUresult result = driver::api().cuModuleLoadDataEx(&module, ptx.c_str(), std::size(options), options, values);
  info.resize(info.find('\0'));
  error.resize(error.find('\0'));
  if (result != CUDA_SUCCESS) {
    try {
      driver::check(result, "cuModuleLoadDataEx");
    } catch (const DriverError& e) {
      throw DriverError(std::string(e.what()) + "\nJIT log:\n" + error + info);
    }
  }
  return Module(module, info);
}

Module Module::from_cubin(const std::vector<char>& cubin) {
  use_device();
  CUmodule module = nullptr;
  ISAAC_CU(cuModuleLoadData, &module, cubin.data());
  return Module(module, {});
}

Module::Module(Module&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), log_(std::move(other.log_)) {}

Module& Module::operator=(Module&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(log_, other.log_);
  return *this;
}

Module::~Module() {
  if (handle_) driver::api().cuModuleUnload(static_cast<CUmodule>(handle_));
}

Kernel Module::kernel(const std::string& name) const {
  CUfunction fn = nullptr;
  CUresult result = driver::api().cuModuleGetFunction(&fn, static_cast<CUmodule>(handle_), name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) throw InvalidArgument("the module has no kernel named '" + name + "'");
  driver::check(result, "cuModuleGetFunction");
  return Kernel(fn, name);
}

KernelAttributes Kernel::attributes() const {
  auto get = [this](CUfunction_attribute which) {
    int value = 0;
    ISAAC_CU(cuFuncGetAttribute, &value, which, static_cast<CUfunction>(handle_));
    return value;
  };
  KernelAttributes a;
  a.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  a.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  a.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  a.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  a.ptx_version = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
  a.binary_version = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
  return a;
}

void Kernel::set_max_dynamic_shared(int bytes) const {
  ISAAC_CU(cuFuncSetAttribute, static_cast<CUfunction>(handle_), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
           bytes);
}

int Kernel::max_active_blocks_per_sm(int threads, int dynamic_shared_bytes) const {
  int blocks = 0;
  ISAAC_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, static_cast<CUfunction>(handle_), threads,
           static_cast<std::size_t>(dynamic_shared_bytes));
  return blocks;
}

void launch(const Kernel& kernel, Dim3 grid, Dim3 block, unsigned dynamic_shared_bytes, const Stream& stream,
            void** args, LaunchOrder order) {
  if (order == LaunchOrder::after_previous) {
    ISAAC_CU(cuLaunchKernel, static_cast<CUfunction>(kernel.handle()), grid.x, grid.y, grid.z, block.x, block.y,
             block.z, dynamic_shared_bytes, static_cast<CUstream>(stream.handle()), args, nullptr);
    return;
  }
  CUlaunchAttribute overlap{};
  overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  overlap.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid.x, config.gridDimY = grid.y, config.gridDimZ = grid.z;
  config.blockDimX = block.x, config.blockDimY = block.y, config.blockDimZ = block.z;
  config.sharedMemBytes = dynamic_shared_bytes;
  config.hStream = static_cast<CUstream>(stream.handle());
  config.attrs = &overlap;
  config.numAttrs = 1;
  ISAAC_CU(cuLaunchKernelEx, &config, static_cast<CUfunction>(kernel.handle()), args, nullptr);
}

}  // namespace isaac::runtime
