// Uses only isaac's installed headers and library: prints the version, whether a CUDA driver is
// there, and emits the smoke kernel's PTX (which needs no GPU).
#include <isaac/lower/smoke.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/version.hpp>

#include <iostream>
#include <string>

int main() {
  std::cout << "isaac " << isaac::version() << "\n";
  std::string why;
  if (isaac::runtime::driver_available(&why))
    std::cout << "CUDA driver: available, " << isaac::runtime::device_count() << " device(s)\n";
  else
    std::cout << "CUDA driver: not available (" << why << ")\n";

  std::string ptx = isaac::lower::emit_axpy_ptx(isaac::lower::parse_target("sm_90"));
  bool ok = ptx.find(std::string(".entry ") + isaac::lower::axpy_kernel_name) != std::string::npos;
  std::cout << "smoke PTX for sm_90: " << ptx.size() << " bytes, " << (ok ? "has" : "LACKS") << " kernel "
            << isaac::lower::axpy_kernel_name << "\n";
  return ok ? 0 : 1;
}
