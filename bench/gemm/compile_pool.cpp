#include "compile_pool.hpp"

#include "problems.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace isaac::bench {

int default_threads(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

lower::SplitMode parse_split_mode(const std::string& text) {
  try {
    return lower::parse_split_mode(text);
  } catch (const InvalidArgument& e) {
    throw BenchError(e.what());
  }
}

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += " | ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '|')) out.pop_back();
  if (out.size() > limit) out = out.substr(0, limit) + "...";
  return out;
}

std::vector<Compiled> compile_all(const std::vector<ir::Gemm>& problems, const std::vector<lower::GemmParams>& params,
                                  lower::SplitMode mode, int threads) {
  if (problems.size() != params.size()) throw BenchError("compile_all: one problem per parameter set");
  std::vector<Compiled> out(params.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < params.size();) {
      auto t0 = std::chrono::steady_clock::now();
      try {
        out[i].gemm.emplace(problems[i], params[i], mode);
      } catch (const std::exception& e) {
        out[i].error = one_line(e.what());
      } catch (...) {
        out[i].error = "unknown exception";
      }
      out[i].wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(default_threads(threads)), params.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return out;
}

std::vector<Compiled> compile_all(const ir::Gemm& problem, const std::vector<lower::GemmParams>& params,
                                  lower::SplitMode mode, int threads) {
  return compile_all(std::vector<ir::Gemm>(params.size(), problem), params, mode, threads);
}

}  // namespace isaac::bench
