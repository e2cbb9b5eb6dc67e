#include "device_sync.hpp"

#include "problems.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace isaac::bench {

void device_synchronize(const char* where) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw BenchError(
        fmt::format("cudaDeviceSynchronize ({}) failed: {}: {}", where, cudaGetErrorName(e), cudaGetErrorString(e)));
}

}  // namespace isaac::bench
