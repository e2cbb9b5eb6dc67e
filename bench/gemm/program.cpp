// `program`: every problem of the problem list run once through isaac::compile (the DSL statement
// C = alpha A B + beta C bound to device tensors), as an application would: parameters chosen by
// choose_gemm (tuning database, else model + top-k), kernels through the kernel cache. Prints the wall
// time and where the decisions and kernels came from, so that two runs in a row show what the
// persistent caches save (issue 7): the second should emit and tune nothing.
#include "modes.hpp"
#include "problems.hpp"

#include <isaac/isaac.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/program.hpp>

#include <fmt/format.h>

#include <chrono>

namespace isaac::bench {

int program_main(const ProgramOptions& o) {
  using namespace isaac::dsl;
  const auto start = std::chrono::steady_clock::now();
  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Scalar alpha("alpha"), beta("beta");
  Tensor<float, 2> A32("A"), B32("B"), C32("C");
  Tensor<double, 2> A64("A"), B64("B"), C64("C");
  Tensor<half, 2> A16("A"), B16("B"), C16("C");
  TuningOptions options;
  options.top_k = o.top_k;
  const std::map<ir::DType, Program> programs = {
      {ir::DType::f32, compile(C32(m, n) = alpha * sum(k, A32(m, k) * B32(k, n)) + beta * C32(m, n), options)},
      {ir::DType::f64, compile(C64(m, n) = alpha * sum(k, A64(m, k) * B64(k, n)) + beta * C64(m, n), options)},
      {ir::DType::f16, compile(C16(m, n) = alpha * sum(k, A16(m, k) * B16(k, n)) + beta * C16(m, n), options)}};
  runtime::Stream stream;
  int runs = 0;
  for (ir::DType t : parse_dtypes(o.dtypes))
    for (const Problem& p : load_problems(o.problems)) {
      const std::size_t e = ir::size_of(t);
      runtime::Buffer a(e * std::size_t(p.m * p.k)), b(e * std::size_t(p.k * p.n)), c(e * std::size_t(p.m * p.n));
      for (runtime::Buffer* x : {&a, &b, &c}) x->fill_bytes(0x3c);
      // BLAS column-major: A is M x K with unit stride along M unless transposed (stored K x M).
      const std::vector<std::int64_t> sa = p.at ? std::vector<std::int64_t>{p.k, 1} : std::vector<std::int64_t>{1, p.m};
      const std::vector<std::int64_t> sb = p.bt ? std::vector<std::int64_t>{p.n, 1} : std::vector<std::int64_t>{1, p.k};
      programs.at(t)(stream, {{"A", {a.ptr(), {p.m, p.k}, sa}}, {"B", {b.ptr(), {p.k, p.n}, sb}},
                              {"C", {c.ptr(), {p.m, p.n}, {1, p.m}}}},
                     {{"alpha", 1.0}, {"beta", 0.0}});
      stream.synchronize();
      ++runs;
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int from_database = 0, tuned = 0;
  for (const auto& [t, program] : programs)
    for (const auto& [key, d] : program.decisions()) (d.how.rfind("tuning database", 0) == 0 ? from_database : tuned)++;
  const KernelCacheStats stats = kernel_cache_stats();
  fmt::print("program: {} GEMMs in {:.2f} s; decisions: {} from the tuning database, {} tuned now; kernels: {} emitted by "
             "LLVM, {} from the kernel cache ({})\n",
             runs, seconds, from_database, tuned, stats.misses, stats.hits, kernel_cache_directory());
  return exit_ok;
}

}  // namespace isaac::bench
