#pragma once
// The CUDA Driver API loaded with dlopen: the only file set that includes cuda.h.
// Each entry point is fetched with cuGetProcAddress at the version of the cuda.h we compile
// against, so a newer driver gives us the ABI we were written for.
#include <cuda.h>

#include <string>

namespace isaac::runtime::driver {

#define ISAAC_DRIVER_FUNCTIONS(X)                                                                     \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)         \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                       \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxSetFlags) X(cuCtxSetCurrent) X(cuCtxGetCurrent)  \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyDtoD)                                                          \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemsetD8Async) X(cuStreamCreate)                  \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)       \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuModuleLoadDataEx) X(cuModuleLoadData)               \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute)                \
  X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuCtxSynchronize) X(cuTensorMapEncodeTiled)                  \
  X(cuTensorMapEncodeIm2col) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

struct Api {
#define ISAAC_DECLARE(name) decltype(&::name) name = nullptr;
  ISAAC_DRIVER_FUNCTIONS(ISAAC_DECLARE)
#undef ISAAC_DECLARE
};

// The loaded and initialised driver; throws DriverError ("no CUDA driver found: ...") otherwise.
const Api& api();

// Throws DriverError naming `call` and the driver's error name and message when `result` fails.
void check(CUresult result, const char* call);

}  // namespace isaac::runtime::driver

// Calls a driver function through the loaded table and checks its result.
#define ISAAC_CU(fn, ...) ::isaac::runtime::driver::check(::isaac::runtime::driver::api().fn(__VA_ARGS__), #fn)
