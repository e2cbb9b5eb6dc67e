#include "problems.hpp"

#include "csv.hpp"
#include "embedded_problems.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace isaac::bench {

std::string Problem::shape() const {
  return batch == 1 ? fmt::format("{}x{}x{}", m, n, k) : fmt::format("{}x{}x{}x{}", batch, m, n, k);
}

std::string problem_name(ir::DType dtype, const Problem& p) {
  return fmt::format("{}/{}/{}/{}", ir::name(dtype), p.suite, p.shape(), p.layout());
}

ir::Gemm to_gemm(const Problem& p, ir::DType dtype) {
  return ir::dense_gemm(dtype, p.m, p.n, p.k, p.at, p.bt, p.batch);
}

double minimal_bytes(const Problem& p, ir::DType dtype) {
  double elements = double(p.m) * double(p.k) + double(p.k) * double(p.n) + double(p.m) * double(p.n);
  return double(p.batch) * elements * double(ir::size_of(dtype));
}

namespace {

std::int64_t parse_int(const std::string& text, const CsvTable& t, std::size_t row, const char* what) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw BenchError(fmt::format("{}:{}: {} '{}' is not an integer", t.path, t.line_numbers[row], what, text));
  return v;
}

CsvTable compiled_in_table(CompiledInProblems list) {
  if (list == CompiledInProblems::batched)
    return parse_csv(embedded_gemm_batched_problems, "<compiled-in gemm_batched_problems.csv>");
  return parse_csv(embedded_gemm_problems, "<compiled-in gemm_problems.csv>");
}

}  // namespace

std::vector<Problem> load_problems(const std::string& path, CompiledInProblems compiled_in) {
  CsvTable t = path.empty() ? compiled_in_table(compiled_in) : read_csv(path);
  std::size_t suite = t.column("suite"), m = t.column("m"), n = t.column("n"), k = t.column("k"), at = t.column("at"),
              bt = t.column("bt");
  const std::optional<std::size_t> batch = t.find_column("batch");
  std::vector<Problem> out;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    Problem p;
    p.suite = row[suite];
    if (batch) p.batch = parse_int(row[*batch], t, r, "batch");
    p.m = parse_int(row[m], t, r, "m");
    p.n = parse_int(row[n], t, r, "n");
    p.k = parse_int(row[k], t, r, "k");
    std::int64_t a = parse_int(row[at], t, r, "at"), b = parse_int(row[bt], t, r, "bt");
    if (p.batch < 1 || p.m < 1 || p.n < 1 || p.k < 1 || (a != 0 && a != 1) || (b != 0 && b != 1))
      throw BenchError(fmt::format("{}:{}: batch and sizes must be positive, at/bt 0 or 1", t.path, t.line_numbers[r]));
    if (p.batch != 1 && compiled_in == CompiledInProblems::paper)
      throw BenchError(fmt::format("{}:{}: batch {}: this mode runs single GEMMs; time batched ones with "
                                   "isaac-bench-gemm batched --problems",
                                   t.path, t.line_numbers[r], p.batch));
    p.at = a == 1;
    p.bt = b == 1;
    out.push_back(p);
  }
  if (out.empty()) throw BenchError(fmt::format("{}: no problems", t.path));
  return out;
}

ir::DType parse_one_dtype(const std::string& raw) {
  std::string text = raw;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "fp32" || text == "float" || text == "float32") return ir::DType::f32;
  if (text == "fp16" || text == "half" || text == "float16") return ir::DType::f16;
  if (text == "fp64" || text == "double" || text == "float64") return ir::DType::f64;
  ir::DType d;
  try {
    d = ir::parse_dtype(text);
  } catch (const isaac::Error& e) {
    throw BenchError(fmt::format("unknown dtype '{}': use f32, f16, bf16 or f64", raw));
  }
  return d;
}

std::vector<ir::DType> parse_dtypes(const std::string& text) {
  std::vector<ir::DType> out;
  for (const auto& item : split_csv_line(text)) {
    if (item.empty()) continue;
    ir::DType d = parse_one_dtype(item);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  if (out.empty()) throw BenchError(fmt::format("no dtype in '{}': use e.g. f32,f16,f64", text));
  return out;
}

}  // namespace isaac::bench
