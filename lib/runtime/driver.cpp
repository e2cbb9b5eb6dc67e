#include "runtime/driver.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/runtime.hpp>

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace isaac::runtime {

namespace driver {

namespace {

struct Loaded {
  Api api;
  std::string error;  // empty when the driver is usable
};

Loaded load() {
  Loaded loaded;
  void* library = nullptr;
  std::string dl_errors;
  for (const char* name : {"libcuda.so.1", "libcuda.so"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library) break;
    const char* e = dlerror();
    dl_errors += std::string(dl_errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!library) {
    loaded.error = "no CUDA driver found: " + dl_errors +
                   " (install the NVIDIA driver, or put libcuda.so.1 on the loader path)";
    return loaded;
  }
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc = reinterpret_cast<GetProc>(dlsym(library, "cuGetProcAddress_v2"));
  if (!get_proc) {
    loaded.error = "the CUDA driver is too old: libcuda has no cuGetProcAddress_v2, so it predates CUDA 12; isaac "
                   "needs a CUDA " + std::to_string(CUDA_VERSION / 1000) + " driver (update the NVIDIA driver)";
    return loaded;
  }
#define ISAAC_LOAD(name)                                                                                 \
  {                                                                                                      \
    CUdriverProcAddressQueryResult status{};                                                             \
    void* fn = nullptr;                                                                                  \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !fn) { \
      loaded.error = "no usable CUDA driver: it lacks " #name " at CUDA version " +                      \
                     std::to_string(CUDA_VERSION) + " (update the NVIDIA driver)";                       \
      return loaded;                                                                                     \
    }                                                                                                    \
    loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>(fn);                                   \
  }
  ISAAC_DRIVER_FUNCTIONS(ISAAC_LOAD)
#undef ISAAC_LOAD
  CUresult init = loaded.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* message = nullptr;
    loaded.api.cuGetErrorString(init, &message);
    loaded.error = std::string("the CUDA driver is installed but cuInit failed: ") +
                   (message ? message : "unknown error") + " (is a GPU visible to this process?)";
  }
  return loaded;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

}  // namespace

const Api& api() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw DriverError(l.error);
  return l.api;
}

void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* message = nullptr;
  loaded().api.cuGetErrorName(result, &name);
  loaded().api.cuGetErrorString(result, &message);
  throw DriverError(std::string(call) + " failed: " + (name ? name : "CUDA_ERROR_" + std::to_string(result)) + ": " +
                    (message ? message : "no message"));
}

}  // namespace driver

bool driver_available(std::string* why) {
  try {
    driver::api();
    return true;
  } catch (const DriverError& e) {
    if (why) *why = e.what();
    return false;
  }
}

int driver_version() {
  int version = 0;
  ISAAC_CU(cuDriverGetVersion, &version);
  return version;
}

int device_count() {
  int count = 0;
  ISAAC_CU(cuDeviceGetCount, &count);
  return count;
}

}  // namespace isaac::runtime
