#include "google_benchmark.hpp"

#include <utility>

namespace isaac::bench {

bool init_google_benchmark(const std::vector<std::string>& args) {
  // Google Benchmark keeps pointers into argv: the storage lives as long as the process.
  static std::vector<std::string> storage;
  static std::vector<char*> argv;
  storage.assign(1, "isaac-bench-gemm");
  storage.insert(storage.end(), args.begin(), args.end());
  argv.clear();
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(storage.size());
  benchmark::Initialize(&argc, argv.data());
  return !benchmark::ReportUnrecognizedArguments(argc, argv.data());
}

void register_timed(const std::string& name, std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(body))
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace isaac::bench
