#pragma once
// Parallel loops of the tests. The GPU tests' first phase: compile every case (LLVM, and the driver's JIT where the result is a
// loaded kernel) on all cores, keeping each case's result or error for the one-at-a-time checks.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace isaac::test {

template <class T>
struct Compiled {
  std::vector<std::optional<T>> results;  // per case: empty where compilation threw
  std::vector<std::string> errors;        // per case: the exception's message, or empty
  unsigned workers = 0;
  double seconds = 0;
};

// Calls f(i) for every i in [0, count) on `threads` threads, each taking the next index.
template <class F>
void parallel_for(std::size_t count, unsigned threads, F f) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < count;) f(i);
    });
  for (auto& t : pool) t.join();
}

// compile(i, result) fills the std::optional<T> `result` for case i (emplace or assign), or throws.
template <class T, class Compile>
Compiled<T> compile_all(std::size_t count, Compile compile) {
  Compiled<T> out;
  out.results.resize(count);
  out.errors.resize(count);
  out.workers = std::max(2u, std::thread::hardware_concurrency());
  auto start = std::chrono::steady_clock::now();
  parallel_for(count, out.workers, [&](std::size_t i) {
    try {
      compile(i, out.results[i]);
    } catch (const std::exception& e) {
      out.errors[i] = e.what();
    }
  });
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace isaac::test
