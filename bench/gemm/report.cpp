#include "report.hpp"

#include "csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace isaac::bench {

bool in_paper_group(const Problem& p) {
  return p.suite.rfind("DeepBench", 0) == 0 || p.suite == "ICA" || p.suite == "LAPACK";
}
bool in_linpack(const Problem& p) { return p.suite == "LINPACK"; }

namespace {

std::string figure(double v) { return v > 0 && std::isfinite(v) ? fmt::format("{:.3f}", v) : std::string{}; }

struct Mean {
  double log_sum = 0;
  int n = 0;
  void add(double ratio) {
    log_sum += std::log(ratio);
    ++n;
  }
  double value() const { return n ? std::exp(log_sum / n) : 0; }
  std::string str() const { return n ? fmt::format("{:.3f}x over {} rows", value(), n) : std::string("no rows"); }
};

// dtype,suite,m,n,k,at,bt of a row: the leading columns of both CSVs.
std::string problem_columns(const ReportRow& r) {
  return fmt::format("{},{},{},{},{},{},{}", ir::name(r.dtype), csv_field(r.problem.suite), r.problem.m, r.problem.n,
                     r.problem.k, int(r.problem.at), int(r.problem.bt));
}

}  // namespace

std::string format_report_csv(const std::string& comment, const std::vector<ReportRow>& rows) {
  std::string out = "# " + comment + "\n";
  out += "dtype,suite,m,n,k,at,bt,isaac_tflops,cublas_tflops,roofline_tflops,params\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{}\n", problem_columns(r), figure(r.isaac_tflops), figure(r.cublas_tflops),
                       figure(r.roofline_tflops), csv_field(r.params));
  return out;
}

std::string format_floor_csv(const std::string& comment, const std::vector<ReportRow>& rows) {
  std::string out = "# " + comment + "\n";
  out += "dtype,suite,m,n,k,at,bt,bytes,floor_tflops,isaac_tflops,cublas_tflops,roofline_tflops\n";
  for (const auto& r : rows)
    out += fmt::format("{},{:.0f},{},{},{},{}\n", problem_columns(r), minimal_bytes(r.problem, r.dtype),
                       figure(r.floor_tflops), figure(r.isaac_tflops), figure(r.cublas_tflops),
                       figure(r.roofline_tflops));
  return out;
}

int print_report(const std::vector<ReportRow>& rows, const Ceilings& ceilings) {
  int missing = 0;
  fmt::print("\n{:<4} {:<12} {:>17} {:<2} {:>9} {:>9} {:>7} {:>9} {:>6} {:>6} {:>3} {:>9} {:>9}  {}\n", "type",
             "suite", "m x n x k", "", "isaac", "cuBLAS", "ratio", "roofline", "isaac", "cuBLAS", "bw", "floor",
             "rel.err", "params");
  fmt::print("{:<4} {:<12} {:>17} {:<2} {:>9} {:>9} {:>7} {:>9} {:>6} {:>6} {:>3} {:>9} {:>9}\n", "", "", "", "",
             "TFLOP/s", "TFLOP/s", "", "TFLOP/s", "%roof", "%roof", "", "TFLOP/s", "(isaac)");
  for (const auto& r : rows) {
    bool both = r.isaac_tflops > 0 && r.cublas_tflops > 0;
    missing += !both;
    auto pct = [&](double v) {
      return v > 0 && r.roofline_tflops > 0 ? fmt::format("{:.0f}", 100 * v / r.roofline_tflops) : std::string("-");
    };
    fmt::print("{:<4} {:<12} {:>17} {:<2} {:>9} {:>9} {:>7} {:>9.2f} {:>6} {:>6} {:>3} {:>9} {:>9}  {}\n",
               ir::name(r.dtype), r.problem.suite, r.problem.shape(), r.problem.layout(),
               r.isaac_tflops > 0 ? fmt::format("{:.2f}", r.isaac_tflops) : "FAILED",
               r.cublas_tflops > 0 ? fmt::format("{:.2f}", r.cublas_tflops) : "FAILED",
               both ? fmt::format("{:.2f}x", r.isaac_tflops / r.cublas_tflops) : "-", r.roofline_tflops,
               pct(r.isaac_tflops), pct(r.cublas_tflops), r.bandwidth_bound ? "yes" : "",
               r.floor_tflops > 0 ? fmt::format("{:.2f}", r.floor_tflops) : "-",
               r.rel_error >= 0 ? fmt::format("{:.1e}", r.rel_error) : "-", r.params);
    if (!r.isaac_error.empty()) fmt::print("     isaac failed: {}\n", r.isaac_error);
    if (!r.cublas_error.empty()) fmt::print("     cuBLAS failed: {}\n", r.cublas_error);
    if (!r.cublas_warning.empty()) fmt::print("     WARNING: {}\n", r.cublas_warning);
  }

  fmt::print("\nGeometric means of isaac/cuBLAS (rows with both figures):\n");
  std::vector<ir::DType> dtypes;
  for (const auto& r : rows)
    if (std::find(dtypes.begin(), dtypes.end(), r.dtype) == dtypes.end()) dtypes.push_back(r.dtype);
  for (ir::DType d : dtypes) {
    Mean paper, linpack, linpack_large, bandwidth;
    for (const auto& r : rows) {
      if (r.dtype != d || !(r.isaac_tflops > 0 && r.cublas_tflops > 0)) continue;
      double ratio = r.isaac_tflops / r.cublas_tflops;
      if (in_paper_group(r.problem)) paper.add(ratio);
      if (in_linpack(r.problem)) linpack.add(ratio);
      if (in_linpack(r.problem) && r.problem.m >= 2048) linpack_large.add(ratio);
      if (r.bandwidth_bound) bandwidth.add(ratio);
    }
    fmt::print("  {}: DeepBench+ICA+LAPACK {}; LINPACK {} (2048 and 4096: {}); bandwidth-bound rows {}\n", ir::name(d),
               paper.str(), linpack.str(), linpack_large.str(), bandwidth.str());
  }

  // What the bandwidth-bound rows leave to gain: no kernel beats the memory floor, so floor / cuBLAS is
  // the most any could be ahead of cuBLAS there.
  fmt::print("\nBandwidth-bound rows against the memory floor (one kernel reading A and B and writing C once, "
             "timed the same way), geometric means:\n");
  for (ir::DType d : dtypes) {
    Mean isaac, cublas;
    for (const auto& r : rows) {
      if (r.dtype != d || !r.bandwidth_bound || !(r.floor_tflops > 0)) continue;
      if (r.isaac_tflops > 0) isaac.add(r.isaac_tflops / r.floor_tflops);
      if (r.cublas_tflops > 0) cublas.add(r.cublas_tflops / r.floor_tflops);
    }
    if (cublas.n)
      fmt::print("  {}: isaac/floor {}, cuBLAS/floor {}; floor/cuBLAS (the most a kernel could gain over cuBLAS) "
                 "{:.3f}x over {} rows\n",
                 ir::name(d), isaac.str(), cublas.str(), 1 / cublas.value(), cublas.n);
  }

  // The targets on the H100.
  fmt::print("\nTargets:\n");
  auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
  auto mean_of = [&](ir::DType d, const std::function<bool(const ReportRow&)>& pick) {
    Mean m;
    for (const auto& r : rows)
      if (r.dtype == d && pick(r) && r.isaac_tflops > 0 && r.cublas_tflops > 0) m.add(r.isaac_tflops / r.cublas_tflops);
    return m;
  };
  auto has = [&](ir::DType d) {
    return std::any_of(rows.begin(), rows.end(), [&](const ReportRow& r) { return r.dtype == d; });
  };
  if (has(ir::DType::f32)) {
    Mean m = mean_of(ir::DType::f32, [](const ReportRow& r) { return in_paper_group(r.problem); });
    fmt::print("  f32 >= 1.5x cuBLAS (geomean, DeepBench+ICA+LAPACK): {} -> {}\n", m.str(),
               verdict(m.n && m.value() >= 1.5));
    for (const auto& r : rows)
      if (r.dtype == ir::DType::f32 && in_linpack(r.problem) && r.problem.m >= 2048) {
        bool both = r.isaac_tflops > 0 && r.cublas_tflops > 0;
        double ratio = both ? r.isaac_tflops / r.cublas_tflops : 0;
        fmt::print("  f32 >= 0.9x cuBLAS on LINPACK {}: {} -> {}\n", r.problem.m,
                   both ? fmt::format("{:.3f}x", ratio) : std::string("no figure"), verdict(both && ratio >= 0.9));
      }
  }
  for (ir::DType d : {ir::DType::f16, ir::DType::f64})
    if (has(d)) {
      Mean m = mean_of(d, [](const ReportRow& r) { return r.bandwidth_bound; });
      fmt::print("  {} >= 1.3x cuBLAS (geomean, rows bound by bandwidth): {} -> {}\n", ir::name(d), m.str(),
                 verdict(m.n && m.value() >= 1.3));
    }
  fmt::print("Ceilings (this run): bandwidth {:.3f} TB/s", ceilings.bandwidth_tbs);
  for (auto [d, v] : ceilings.peak_tflops) fmt::print(", peak {} {:.1f} TFLOP/s", ir::name(d), v);
  fmt::print("\n");
  return missing;
}

}  // namespace isaac::bench
