// `selftest`: the CPU-side pieces the GPU run depends on, checked where there is no GPU: the half
// conversions, CSV quoting, the compiled-in problems (the paper's and the batched ones), the winners file, the sample's composition,
// tolerances, the report's columns and the memory floor's PTX.
#include "ceilings.hpp"
#include "csv.hpp"
#include "memory_floor.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "report.hpp"
#include "refine.hpp"
#include "sampling.hpp"
#include "winners.hpp"

#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/streaming.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

namespace isaac::bench {

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  fmt::print("  {} {}\n", ok ? "ok  " : "FAIL", what);
  failures += !ok;
}

}  // namespace

int selftest_main() {
  fmt::print("CSV\n");
  std::string params = lower::GemmParams{}.str();
  auto fields = split_csv_line("a," + csv_field(params) + "," + csv_field("say \"hi\", then") + ",");
  expect(fields.size() == 4 && fields[1] == params && fields[2] == "say \"hi\", then" && fields[3].empty(),
         "quoted fields with commas and quotes survive a round trip");

  fmt::print("problems\n");
  auto problems = load_problems("");
  expect(problems.size() == 18, fmt::format("the compiled-in list has 18 problems ({})", problems.size()));
  expect(problems.front().suite == "LINPACK" && problems.front().m == 512 && problems.front().bt,
         "the first is LINPACK 512 NT");
  expect(std::all_of(problems.begin(), problems.end(), [](const Problem& p) { return p.batch == 1; }),
         "the paper's problems are unbatched (no batch column: 1)");
  auto batched = load_problems("", CompiledInProblems::batched);
  expect(batched.size() == 12, fmt::format("the compiled-in batched list has 12 problems ({})", batched.size()));
  expect(std::all_of(batched.begin(), batched.end(),
                     [](const Problem& p) {
                       return p.batch >= 2 && p.batch <= 4096 &&
                              double(p.batch) * double(p.m) * double(p.n) * double(p.k) <= 0x1p34;
                     }),
         "every batch in [2, 4096], batch*m*n*k <= 2^34");
  const Problem& scores = batched.front();
  expect(problem_name(ir::DType::f32, scores) == "f32/Attention/128x512x512x64/TN" &&
             scores.flops() == 2.0 * 128 * 512 * 512 * 64 &&
             minimal_bytes(scores, ir::DType::f16) == 2.0 * 128 * (512 * 64 + 64 * 512 + 512 * 512),
         fmt::format("the first is attention's scores, named with its batch ({}); flops and bytes count the batch",
                     problem_name(ir::DType::f32, scores)));
  const ir::Gemm g = to_gemm(scores, ir::DType::f32);
  expect(g.batch == 128 && g.a_trans && !g.b_trans && g.stride_a == 512 * 64 && g.stride_c == 512 * 512,
         "its GEMM is batched, strided, TN");
  const std::string batched_path =
      (std::filesystem::temp_directory_path() / "isaac-bench-selftest-batched.csv").string();
  write_file(batched_path, "suite,batch,m,n,k,at,bt\nHPC,8,64,64,64,0,0\n");
  bool refused = false;
  try {
    load_problems(batched_path);
  } catch (const BenchError& e) {
    refused = std::string(e.what()).find(":2: batch 8: this mode runs single GEMMs") != std::string::npos;
  }
  expect(refused && load_problems(batched_path, CompiledInProblems::batched).front().batch == 8,
         "the paper's modes refuse a batched row (it would run as one GEMM); batched takes it");
  std::filesystem::remove(batched_path);
  auto dtypes = parse_dtypes("f32,fp16,double");
  expect(dtypes.size() == 3 && dtypes[1] == ir::DType::f16 && dtypes[2] == ir::DType::f64, "dtype names");

  fmt::print("winners file\n");
  std::vector<Winner> winners = {{ir::DType::f16, problems[5], params, 0.0123, 17.5, 200, 3}};
  std::string path = (std::filesystem::temp_directory_path() / "isaac-bench-selftest-winners.csv").string();
  write_file(path, format_winners(winners));
  auto back = read_winners(path);
  std::filesystem::remove(path);
  expect(back.size() == 1 && back[0].params == params && back[0].dtype == ir::DType::f16 &&
             back[0].problem.same_shape(problems[5]) && back[0].candidates == 200 && back[0].failures == 3,
         "winners round trip");

  fmt::print("report CSV\n");
  ReportRow row;
  row.problem = problems[0];
  row.params = params;
  row.isaac_tflops = 10;
  std::string report = format_report_csv("comment", {row});
  auto table = parse_csv(report, "report");
  expect(report.rfind("# comment\n", 0) == 0 && table.header.size() == 11 && table.header[7] == "isaac_tflops" &&
             table.rows.size() == 1 && table.rows[0][8].empty() && table.rows[0][10] == params,
         "leading comment, the 11 columns, empty cells for missing figures");

  fmt::print("ceilings\n");
  // A batch field placed before m once made this a batch of 8192 empty GEMMs, and every peak an
  // out-of-memory error (2026-11-29 to 2026-12-01).
  const Problem peak = peak_problem(8192);
  expect(peak.batch == 1 && peak.m == 8192 && peak.n == 8192 && peak.k == 8192 && !peak.at && !peak.bt &&
             std::abs(peak.flops() - 2.0 * 8192.0 * 8192.0 * 8192.0) < 1,
         "the peak is measured on one NN GEMM of 8192^3");

  fmt::print("report table (made-up figures)\n");
  Ceilings ceilings;
  ceilings.bandwidth_tbs = 3.0;
  ceilings.peak_tflops = {{ir::DType::f32, 52.0}, {ir::DType::f16, 658.0}};
  std::vector<ReportRow> demo;
  for (std::size_t i : {2u, 3u, 4u, 12u, 15u}) {
    for (ir::DType d : {ir::DType::f32, ir::DType::f16}) {
      ReportRow r;
      r.dtype = d;
      r.problem = problems[i];
      r.params = params;
      r.cublas_tflops = 10.0 + double(i);
      r.isaac_tflops = i == 15 && d == ir::DType::f16 ? 0 : r.cublas_tflops * (0.8 + 0.1 * double(i % 7));
      if (r.isaac_tflops == 0) r.isaac_error = "made-up failure";
      double bytes = minimal_bytes(r.problem, d);
      r.roofline_tflops = ceilings.roofline_tflops(d, r.problem.flops(), bytes);
      r.bandwidth_bound = ceilings.bandwidth_bound(d, r.problem.flops(), bytes);
      r.rel_error = 1e-6;
      r.floor_tflops = r.cublas_tflops * 1.25;
      demo.push_back(r);
    }
  }
  int missing = print_report(demo, ceilings);
  expect(missing == 1, "the report counts the row without a figure");
  ReportRow linpack4096 = demo[2];
  expect(!linpack4096.bandwidth_bound && std::abs(linpack4096.roofline_tflops - 52.0) < 1e-9,
         "LINPACK 4096 f32 is bound by the peak");
  expect(demo[4].bandwidth_bound, "DeepBench 2560x16x2560 f32 is bound by bandwidth");
  const std::string floors = format_floor_csv("made up", demo);
  expect(floors.find("\ndtype,suite,m,n,k,at,bt,bytes,floor_tflops,isaac_tflops,cublas_tflops,roofline_tflops\n") !=
             std::string::npos,
         "the floor CSV names its columns");
  expect(floors.find(fmt::format(",{:.0f},{:.3f},", minimal_bytes(demo[4].problem, demo[4].dtype),
                                 demo[4].floor_tflops)) != std::string::npos,
         "the floor CSV holds each row's minimal bytes and floor");

  fmt::print("tolerances\n");
  expect(tolerance_for(ir::DType::f32, 60000, true) < 3e-4 && tolerance_for(ir::DType::f32, 32, true) < 1e-5 &&
             tolerance_for(ir::DType::f16, 2560, true) < 2e-3 && tolerance_for(ir::DType::f64, 60000, true) < 1e-12,
         "f32, f16 (ACC=32) and f64 tolerances are tight enough to catch a wrong kernel");
  const CheckResult batched_check{.rel_error = 1e-3, .worst_entry = 3, .batch = 128, .tolerance = 1e-5};
  expect(batched_check.str().find("in matrix 3 of 128") != std::string::npos,
         "a batched check names its worst matrix: " + batched_check.str());

  fmt::print("samples (gemm_space with the H100's limits)\n");
  lower::DeviceLimits limits;
  SampleOptions o;
  for (const auto& [p, d] : {std::pair{problems[12], ir::DType::f32}, std::pair{problems[3], ir::DType::f16},
                             std::pair{problems[4], ir::DType::f64}}) {
    ir::Gemm g = to_gemm(p, d);
    Sample s = draw_sample(g, limits, o);
    fmt::print("    {}: {}\n", problem_name(d, p), s.summary());
    int legal = 0, sensible = 0, kg = 0, acc16 = 0, near_sms = 0;
    for (const auto& q : s.params) {
      legal += bool(lower::check_gemm(g, q, limits));
      sensible += q.threads() >= 64 && q.threads() <= 512 && q.ms * q.ns >= 4;
      kg += q.kg > 1;
      acc16 += q.acc32 == 0;
      std::int64_t blocks = output_tiles(g, q) * q.kg;
      near_sms += q.kg > 1 && blocks >= 52 && blocks <= 528;
    }
    std::size_t n = s.params.size();
    expect(n == std::min<std::size_t>(200, s.sensible), fmt::format("{} sets drawn", n));
    expect(legal == int(n) && sensible == int(n), "all legal and sensible");
    Sample again = draw_sample(g, limits, o);
    expect(again.params == s.params, "the same seed draws the same sample");
    if (s.few_tiles)
      expect(near_sms >= int(n) * 4 / 10, fmt::format("few tiles: {} of {} have KG>1 near the SM count", near_sms, n));
    if (d == ir::DType::f16)
      expect(acc16 >= int(n) / 8 && acc16 <= int(n) / 3, fmt::format("f16: {} of {} with ACC=16", acc16, n));
    else
      expect(acc16 == 0, "no ACC=16 outside f16");
  }
  fmt::print("refinement (neighbours, seeds)\n");
  for (const auto& [p, d] : {std::pair{problems[12], ir::DType::f32}, std::pair{problems[3], ir::DType::f16}}) {
    ir::Gemm g = to_gemm(p, d);
    std::string dropped;
    auto seeds = search_seeds(g, limits, "ML=64,NL=64,MS=4,NS=4,U=8,KS=1,KL=1,KG=1,VA=999", &dropped);
    expect(!seeds.empty() && dropped.find("earlier winner") != std::string::npos,
           fmt::format("{}: the heuristic seeds, an unreadable earlier winner is dropped ({})", problem_name(d, p),
                       dropped));
    if (seeds.empty()) continue;
    lower::GemmParams c = seeds.front();
    auto again = search_seeds(g, limits, c.str());
    expect(again.size() == 1 && again.front() == c, "a legal earlier winner seeds (once, not twice)");
    auto near = neighbours(g, c, limits);
    std::set<std::string> names;
    int legal = 0, one = 0, same_threads = 0;
    for (const auto& q : near) {
      names.insert(q.str());
      legal += !outside_space(g, q, limits);
      same_threads += q.threads() == c.threads();
      int changed = (q.ml != c.ml) + (q.nl != c.nl) + (q.ms != c.ms) + (q.ns != c.ns) + (q.u != c.u) + (q.ks != c.ks) +
                    (q.kl != c.kl) + (q.kg != c.kg) + (q.va != c.va) + (q.vb != c.vb) + (q.db != c.db) +
                    (q.sw != c.sw) + (q.acc32 != c.acc32);
      one += changed == 1;
    }
    fmt::print("    {}: {} neighbours of {} ({} one-parameter moves)\n", problem_name(d, p), near.size(), c.str(), one);
    expect(near.size() >= 6 && names.size() == near.size() && !names.count(c.str()),
           "several neighbours, no duplicate, not the set itself");
    expect(legal == int(near.size()), "every neighbour legal and inside gemm_space");
    expect(one >= 4 && same_threads > one / 2, "mostly one-parameter moves, some keeping the thread count");
    auto space = lower::gemm_space(g, limits);
    std::set<std::string> in_space;
    for (const auto& q : space) in_space.insert(q.str());
    int found = 0;
    for (auto q : near) {  // gemm_space holds ACC=32 only (the sampler switches some sets to ACC=16)
      q.acc32 = 1;
      found += in_space.count(q.str()) > 0;
    }
    expect(found == int(near.size()), fmt::format("every neighbour is in gemm_space ({} of {})", found, near.size()));
  }

  fmt::print("streaming kernel (memory floor, L2 flush)\n");
  if (lower::ptxas_available()) {
    for (int sm : {80, 90}) {  // the PTX says sm_70, which the driver compiles for any newer GPU
      auto report = lower::run_ptxas(runtime::streaming_ptx(), lower::Target{sm, false}, runtime::streaming_kernel_name);
      expect(report.ok && report.spill_stores == 0,
             fmt::format("its PTX assembles for sm_{} without spills{}", sm, report.ok ? "" : ": " + report.log));
    }
  } else {
    fmt::print("  skipped: ptxas is not installed\n");
  }

  if (failures)
    fmt::print("selftest: {} FAILED\n", failures);
  else
    fmt::print("selftest: all passed\n");
  return failures ? exit_failed : exit_ok;
}

}  // namespace isaac::bench
