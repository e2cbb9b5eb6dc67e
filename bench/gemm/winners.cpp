#include "winners.hpp"

#include "csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <type_traits>

namespace isaac::bench {

namespace {

template <class T>
T number(const CsvTable& t, std::size_t row, std::size_t col) {
  const std::string& text = t.rows[row][col];
  T v{};
  bool ok = false;
  if constexpr (std::is_floating_point_v<T>) {
    char* end = nullptr;
    v = std::strtod(text.c_str(), &end);
    ok = !text.empty() && *end == '\0';
  } else {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    ok = ec == std::errc{} && end == text.data() + text.size();
  }
  if (!ok)
    throw BenchError(
        fmt::format("{}:{}: column {} holds '{}', not a number", t.path, t.line_numbers[row], t.header[col], text));
  return v;
}

}  // namespace

std::vector<Winner> read_winners(const std::string& path) {
  CsvTable t = read_csv(path);
  std::size_t dtype = t.column("dtype"), suite = t.column("suite"), m = t.column("m"), n = t.column("n"),
              k = t.column("k"), at = t.column("at"), bt = t.column("bt"), params = t.column("params"),
              median = t.column("median_ms"), tflops = t.column("tflops"), candidates = t.column("candidates"),
              failures = t.column("failures");
  std::vector<Winner> out;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    Winner w;
    w.dtype = parse_one_dtype(row[dtype]);
    w.problem.suite = row[suite];
    w.problem.m = number<std::int64_t>(t, r, m);
    w.problem.n = number<std::int64_t>(t, r, n);
    w.problem.k = number<std::int64_t>(t, r, k);
    w.problem.at = number<int>(t, r, at) != 0;
    w.problem.bt = number<int>(t, r, bt) != 0;
    w.params = row[params];
    w.median_ms = number<double>(t, r, median);
    w.tflops = number<double>(t, r, tflops);
    w.candidates = number<int>(t, r, candidates);
    w.failures = number<int>(t, r, failures);
    out.push_back(std::move(w));
  }
  return out;
}

std::string format_winners(const std::vector<Winner>& winners) {
  std::string out = winners_header;
  for (const auto& w : winners)
    out += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{:.3f},{},{}\n", ir::name(w.dtype), csv_field(w.problem.suite),
                       w.problem.m, w.problem.n, w.problem.k, int(w.problem.at), int(w.problem.bt), csv_field(w.params),
                       w.median_ms, w.tflops, w.candidates, w.failures);
  return out;
}

}  // namespace isaac::bench
