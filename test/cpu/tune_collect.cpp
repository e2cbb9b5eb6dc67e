// isaac-tune collect without a GPU (issue 6, "Sampler and data"): --compile-only compiles a plan and
// records it; a run killed mid-line is resumed to exactly the planned rows, each once; the resumed
// plan is the one a fresh run makes; a time budget stops cleanly; a file of another plan, or an
// existing file without --resume, is refused; without a driver, the run fails before any work; and
// the tuner's dataset reader takes the file. The same for --template conv, whose files a GEMM plan
// does not resume (nor the reverse), whose --aligned-share inputs take wgmma sets, and whose spot
// check's float64 sums match ir::evaluate. Runs
// the isaac-tune binary (ISAAC_TUNE_EXE), as do the checks of focus's options and of search --template conv,
// and those of bad input to the tools (damaged data rows, options out of range, bad paths, damaged
// caches and decision files; isaac-report and isaac-info, built beside isaac-tune, likewise).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "../../tools/isaac-tune/collect_conv_check.hpp"

#include <isaac/ir/evaluate.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/ir/pattern.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#ifndef ISAAC_TUNE_EXE
#error "test/CMakeLists.txt defines ISAAC_TUNE_EXE, the path of the isaac-tune binary"
#endif

namespace fs = std::filesystem;

namespace {

const char* header =
    "index,dtype,suite,m,n,k,at,bt,params,status,median_ms,min_ms,max_ms,tflops,registers,local_bytes,shared_bytes,"
    "threads,blocks,emit_ms,compile_ms,reason,phase";
// What dataset.cpp reads CONV rows by (dtype, layout, n, c, h, w, k, r, s, stride, pad, dilation,
// params, status, tflops), in collect's form.
const char* conv_header =
    "index,dtype,suite,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,median_ms,min_ms,max_ms,tflops,"
    "registers,local_bytes,shared_bytes,threads,blocks,emit_ms,compile_ms,reason,phase";

struct Dir {
  fs::path path = fs::temp_directory_path() / ("isaac_tune_collect_" + std::to_string(::getpid()));
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` through the shell; returns its exit status (-1 when a signal ended it),
// stdout+stderr in `output`.
int run(const std::string& command, const Dir& dir, std::string* output = nullptr) {
  const fs::path log = dir.path / "log.txt";
  const int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
  const std::string text = read(log);
  if (output) *output = text;
  INFO(command, "\n", text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs isaac-tune with `args`; returns the exit status, stdout+stderr in `output`.
int tune(const std::string& args, const Dir& dir, std::string* output = nullptr) {
  return run(std::string("'") + ISAAC_TUNE_EXE + "' " + args, dir, output);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

struct Csv {
  std::vector<std::string> comments;
  std::string header;
  std::vector<std::vector<std::string>> rows;
  bool ends_with_newline = false;
};

Csv parse(const fs::path& p) {
  const std::string text = read(p);
  Csv csv;
  csv.ends_with_newline = !text.empty() && text.back() == '\n';
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') csv.comments.push_back(line);
    else if (csv.header.empty()) csv.header = line;
    else csv.rows.push_back(split(line));
  }
  return csv;
}

// The position of column `name` in `header_line`.
std::size_t column(const std::string& header_line, const std::string& name) {
  const auto names = split(header_line);
  const auto it = std::find(names.begin(), names.end(), name);
  REQUIRE_MESSAGE(it != names.end(), "no column " << name);
  return std::size_t(it - names.begin());
}

// Checks the file's form and returns its rows by index (each index once). GEMM files unless `conv`.
std::map<long, std::vector<std::string>> check_file(const fs::path& p, bool conv = false) {
  const Csv csv = parse(p);
  const std::string head = conv ? conv_header : header;
  CHECK(csv.ends_with_newline);
  REQUIRE(csv.comments.size() == 1);
  CHECK(csv.comments[0].rfind(conv ? "# isaac-tune collect plan: template=conv seed="
                                   : "# isaac-tune collect plan: template=gemm seed=",
                              0) == 0);
  REQUIRE(csv.header == head);
  const std::size_t columns = split(head).size();
  const std::size_t status_at = column(head, "status"), params_at = column(head, "params");
  std::map<long, std::vector<std::string>> by_index;
  for (const auto& row : csv.rows) {
    REQUIRE(row.size() == columns);
    auto at = [&](const char* name) -> const std::string& { return row[column(head, name)]; };
    const long index = std::stol(row[0]);
    CHECK(by_index.emplace(index, row).second);  // no duplicate
    const std::string& status = row[status_at];
    CHECK((status == "compiled" || status == "compile" || status == "illegal"));
    CHECK(at("tflops").empty());  // never a number without a measurement
    CHECK(at("median_ms").empty());
    CHECK(at("suite") == "random");
    if (conv) {
      CHECK(at("phase") == "uniform");  // CONV sets are uniform over the legal space
      const std::string& layout = at("layout");
      CHECK((layout == "NCHW/KCRS" || layout == "CHWN/CRSK" || layout == "NHWC/KRSC"));
      CHECK((at("dtype") == "f32" || at("dtype") == "f16" || at("dtype") == "bf16"));
      // H, W, R, S, stride, pad and dilation give P and Q of at least 1 (dataset.cpp rebuilds them).
      const long h = std::stol(at("h")), w = std::stol(at("w")), r = std::stol(at("r")), s = std::stol(at("s"));
      const long stride = std::stol(at("stride")), pad = std::stol(at("pad")), dilation = std::stol(at("dilation"));
      CHECK((stride == 1 || stride == 2));
      CHECK((dilation == 1 || dilation == 2));
      CHECK((pad == 0 || pad == std::min(r, s) / 2));
      CHECK((h + 2 * pad - dilation * (r - 1) - 1) / stride + 1 >= 1);
      CHECK((w + 2 * pad - dilation * (s - 1) - 1) / stride + 1 >= 1);
      CHECK(std::stol(at("k")) >= 16);
      CHECK(std::stol(at("n")) <= 64);
    } else {
      CHECK((at("phase") == "sampler" || at("phase") == "uniform"));
    }
    if (status == "compiled") {
      CHECK(at("reason").empty());
      CHECK(row[params_at].find(conv ? "PL=" : "ML=") == 0);
      CHECK(std::stoi(at("threads")) > 0);
      CHECK(std::stol(at("blocks")) > 0);
      CHECK(std::stod(at("emit_ms")) > 0);
      CHECK(std::stoi(at("shared_bytes")) > 0);
    } else {
      CHECK(!at("reason").empty());  // every failure has its reason
    }
  }
  return by_index;
}

// Writes the compiled rows of `rows` as measured ones (status ok, a made-up TFLOP/s) under `head`.
void write_measured(const fs::path& p, const std::string& head, const std::map<long, std::vector<std::string>>& rows) {
  std::ofstream fake(p);
  fake << "# the compiled rows, made to look measured\n" << head << "\n";
  const std::size_t status_at = column(head, "status"), tflops_at = column(head, "tflops"),
                    params_at = column(head, "params");
  for (const auto& [i, row] : rows) {
    if (row[status_at] != "compiled") continue;
    auto r = row;
    r[status_at] = "ok";
    r[tflops_at] = std::to_string(1.0 + double(i) / 10);
    for (std::size_t c = 0; c < r.size(); ++c) fake << (c ? "," : "") << (c == params_at ? "\"" + r[c] + "\"" : r[c]);
    fake << "\n";
  }
}

std::set<long> indices(const std::map<long, std::vector<std::string>>& rows) {
  std::set<long> out;
  for (const auto& [i, row] : rows) out.insert(i);
  return out;
}

std::set<long> range(long n) {
  std::set<long> out;
  for (long i = 0; i < n; ++i) out.insert(i);
  return out;
}

}  // namespace

TEST_CASE("collect --compile-only, a torn last line, and --resume") {
  Dir dir;
  const fs::path out = dir.path / "collect.csv";
  const std::string common =
      " --compile-only --seed 7 --per-shape 4 --uniform-share 0.25 --jobs 2 --quiet --out '" + out.string() + "'";
  REQUIRE(tune("collect --count 12" + common, dir) == 0);
  auto rows = check_file(out);
  CHECK(indices(rows) == range(12));
  std::size_t compiled = 0;
  for (const auto& [i, row] : rows) compiled += row[9] == "compiled";
  CHECK(compiled >= 10);

  SUBCASE("an existing file is not overwritten without --resume") {
    const std::string before = read(out);
    std::string text;
    CHECK(tune("collect --count 20" + common, dir, &text) != 0);
    CHECK(text.find("--resume") != std::string::npos);
    CHECK(read(out) == before);
    // A file from before CONV, whose plan line has no "template=", is a GEMM plan: it resumes.
    std::string old = before;
    const std::string tag = "template=gemm ";
    REQUIRE(old.find(tag) != std::string::npos);
    old.erase(old.find(tag), tag.size());
    std::ofstream(out, std::ios::binary | std::ios::trunc) << old;
    CHECK(tune("collect --resume --count 12" + common, dir, &text) == 0);
    CHECK(text.find("already in") != std::string::npos);
    CHECK(read(out) == old);
  }
  SUBCASE("another plan is refused") {
    const std::string before = read(out);
    std::string text;
    CHECK(tune("collect --count 20 --resume --dtypes f32" + common, dir, &text) != 0);
    CHECK(text.find("another plan") != std::string::npos);
    CHECK(read(out) == before);
    // A CONV plan does not resume a GEMM file: the plan line names the template.
    CHECK(tune("collect --template conv --count 20 --resume --compile-only --seed 7 --per-shape 4 --jobs 2 --quiet "
               "--out '" + out.string() + "'",
               dir, &text) != 0);
    CHECK(text.find("another plan") != std::string::npos);
    CHECK(text.find("template=conv") != std::string::npos);
    CHECK(read(out) == before);
  }
  SUBCASE("killed mid-line, then resumed") {
    // A crash in the middle of a write: the last line loses its second half and its newline.
    std::string text = read(out);
    const std::size_t last = text.rfind('\n', text.size() - 2) + 1;
    const long torn_index = std::stol(text.substr(last));
    text.resize(last + (text.size() - last) / 2);
    std::ofstream(out, std::ios::binary | std::ios::trunc) << text;

    std::string log;
    REQUIRE(tune("collect --resume --count 20" + common, dir, &log) == 0);
    CHECK(log.find("dropped a torn last line") != std::string::npos);
    const auto resumed = check_file(out);
    CHECK(indices(resumed) == range(20));  // exactly 20 distinct indices, the torn one redone
    CHECK(resumed.count(torn_index));
    // Nothing more to do: a second resume writes nothing.
    const std::string before = read(out);
    REQUIRE(tune("collect --resume --count 20" + common, dir) == 0);
    CHECK(read(out) == before);

    // The plan is a function of the seed: a fresh run has the same rows (index, input, parameters).
    const fs::path fresh = dir.path / "fresh.csv";
    REQUIRE(tune("collect --count 20 --compile-only --seed 7 --per-shape 4 --uniform-share 0.25 --jobs 2 --quiet --out '" +
                     fresh.string() + "'",
                 dir) == 0);
    const auto again = check_file(fresh);
    REQUIRE(indices(again) == range(20));
    for (long i = 0; i < 20; ++i) {
      INFO("index ", i);
      for (int column : {1, 3, 4, 5, 6, 7, 8, 9, 22}) CHECK(resumed.at(i)[std::size_t(column)] == again.at(i)[std::size_t(column)]);
    }

    // The tuner's reader takes the file by column name (index and the plan line are extra): as measured
    // rows, it trains on them.
    write_measured(dir.path / "measured.csv", header, resumed);
    std::string train_log;
    CHECK(tune("train --data '" + (dir.path / "measured.csv").string() + "' --hidden 4 --epochs 2 --out '" +
                   (dir.path / "model.json").string() + "'",
               dir, &train_log) == 0);
    CHECK(train_log.find("trained") != std::string::npos);

    // eval --predictions writes one line per measured row: its tiling, measured and predicted TFLOP/s.
    const auto predictions = dir.path / "predictions.csv";
    CHECK(tune("eval --data '" + (dir.path / "measured.csv").string() + "' --model '" +
                   (dir.path / "model.json").string() + "' --predictions '" + predictions.string() + "'",
               dir, &train_log) == 0);
    std::ifstream in(predictions);
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK(line == "job,tile_m,tile_n,thread_m,thread_n,u,split,tc,measured_tflops,predicted_tflops");
    std::size_t lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      CHECK(std::stod(line.substr(line.rfind(',') + 1)) > 0);
    }
    CHECK(lines == resumed.size());
  }
}

TEST_CASE("collect --template conv: --compile-only, the header, a torn last line, --resume, another template") {
  Dir dir;
  const fs::path out = dir.path / "conv.csv";
  const std::string options = " --template conv --compile-only --seed 5 --per-shape 3 --jobs 2 --quiet";
  const std::string common = options + " --out '" + out.string() + "'";
  REQUIRE(tune("collect --count 6" + common, dir) == 0);
  const auto rows = check_file(out, true);  // the header is conv_header, the plan line template=conv
  CHECK(indices(rows) == range(6));
  std::size_t compiled = 0;
  for (const auto& [i, row] : rows) compiled += row[column(conv_header, "status")] == "compiled";
  CHECK(compiled >= 5);
  // The rows of one input share its columns, and their parameter sets differ (drawn without repeats).
  const std::size_t params_at = column(conv_header, "params");
  for (long i : {0L, 3L}) {
    for (std::size_t c = 1; c < params_at; ++c) CHECK(rows.at(i)[c] == rows.at(i + 2)[c]);
    CHECK(rows.at(i)[params_at] != rows.at(i + 1)[params_at]);
    CHECK(rows.at(i + 1)[params_at] != rows.at(i + 2)[params_at]);
  }

  // A GEMM plan does not resume a CONV file.
  std::string before = read(out), text;
  CHECK(tune("collect --count 9 --resume --compile-only --seed 5 --per-shape 3 --jobs 2 --quiet --out '" +
                 out.string() + "'",
             dir, &text) != 0);
  CHECK(text.find("another plan") != std::string::npos);
  CHECK(read(out) == before);
  // Nor does a CONV plan with other shapes.
  CHECK(tune("collect --count 9 --resume --pq-max 100" + common, dir, &text) != 0);
  CHECK(text.find("another plan") != std::string::npos);
  CHECK(read(out) == before);

  // Killed mid-line, then resumed to 9 rows.
  std::string cut = before;
  const std::size_t last = cut.rfind('\n', cut.size() - 2) + 1;
  const long torn_index = std::stol(cut.substr(last));
  cut.resize(last + (cut.size() - last) / 2);
  std::ofstream(out, std::ios::binary | std::ios::trunc) << cut;
  std::string log;
  REQUIRE(tune("collect --resume --count 9" + common, dir, &log) == 0);
  CHECK(log.find("dropped a torn last line") != std::string::npos);
  const auto resumed = check_file(out, true);
  CHECK(indices(resumed) == range(9));
  CHECK(resumed.count(torn_index));

  // The plan is a function of its options: a fresh run has the same rows.
  const fs::path fresh = dir.path / "fresh.csv";
  REQUIRE(tune("collect --count 9" + options + " --out '" + fresh.string() + "'", dir) == 0);
  const auto again = check_file(fresh, true);
  REQUIRE(indices(again) == range(9));
  for (long i = 0; i < 9; ++i) {
    INFO("index ", i);
    for (std::size_t c = 1; c <= params_at + 1; ++c) CHECK(resumed.at(i)[c] == again.at(i)[c]);
  }

  // The tuner's reader takes CONV rows by column name: as measured rows, it trains a CONV model.
  write_measured(dir.path / "measured.csv", conv_header, resumed);
  std::string train_log;
  CHECK(tune("train --data '" + (dir.path / "measured.csv").string() + "' --hidden 4 --epochs 2 --out '" +
                 (dir.path / "model.json").string() + "'",
             dir, &train_log) == 0);
  CHECK(train_log.find("trained") != std::string::npos);
  CHECK(read(dir.path / "model.json").find("\"conv\"") != std::string::npos);

  // --dtype: a file may hold none of that dtype's rows, as long as the list holds some.
  const auto first = std::find_if(resumed.begin(), resumed.end(),
                                  [](const auto& r) { return r.second[column(conv_header, "status")] == "compiled"; });
  REQUIRE(first != resumed.end());
  const std::string dtype = first->second[column(conv_header, "dtype")];
  std::map<long, std::vector<std::string>> others = resumed;
  std::erase_if(others, [&](const auto& r) { return r.second[column(conv_header, "dtype")] == dtype; });
  others.emplace(-1, first->second);  // a row of another dtype, so that the file is not empty
  others.at(-1)[column(conv_header, "dtype")] = dtype == "f64" ? "f32" : "f64";
  write_measured(dir.path / "others.csv", conv_header, others);
  const std::string both = (dir.path / "others.csv").string() + "," + (dir.path / "measured.csv").string();
  CHECK(tune("train --data '" + both + "' --dtype " + dtype + " --hidden 4 --epochs 2 --out '" +
                 (dir.path / "one.json").string() + "'",
             dir, &train_log) == 0);
  CHECK(tune("train --data '" + (dir.path / "others.csv").string() + "' --dtype " + dtype +
                 " --hidden 4 --epochs 2 --out '" + (dir.path / "none.json").string() + "'",
             dir, &train_log) != 0);
  CHECK(train_log.find("no measured rows of dtype " + dtype) != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "none.json"));
}

// --aligned-share 1 rounds every input's N, C and K up to multiples of 8, which the f16 wgmma (TC=2)
// sets need; with --tc-share 1 every other row of an input that has such sets is one (sm_90).
TEST_CASE("collect --template conv --aligned-share: N, C and K multiples of 8, and f16 and bf16 rows on wgmma") {
  Dir dir;
  for (const std::string dtype : {"f16", "bf16"}) {
    CAPTURE(dtype);
    const fs::path out = dir.path / (dtype + ".csv");
    REQUIRE(tune("collect --template conv --compile-only --dtypes " + dtype + " --aligned-share 1 --tc-share 1 --seed 9 "
                 "--per-shape 4 --count 32 --jobs 2 --quiet --out '" + out.string() + "'",
                 dir) == 0);
    const Csv csv = parse(out);
    REQUIRE(csv.comments.size() == 1);
    CHECK(csv.comments[0].find(" aligned-share=1") != std::string::npos);
    const auto rows = check_file(out, true);
    REQUIRE(rows.size() == 32);
    int wgmma = 0, inputs_with_wgmma = 0;
    for (long first = 0; first < 32; first += 4) {
      const auto& row = rows.at(first);
      CHECK(row[column(conv_header, "dtype")] == dtype);
      for (const char* name : {"n", "c", "k"}) CHECK(std::stol(row[column(conv_header, name)]) % 8 == 0);
      int here = 0;
      for (long i = first; i < first + 4; ++i) {
        const bool tc2 = rows.at(i)[column(conv_header, "params")].find("TC=2") != std::string::npos;
        // The first of each pair of tensor-core rows is a TC=1 set, the second TC=2 where there is one.
        if (tc2) CHECK((i - first) % 2 == 1);
        here += tc2;
      }
      // NCHW inputs take single-element loads: no TC=2 set.
      if (row[column(conv_header, "layout")].rfind("NCHW", 0) == 0) CHECK(here == 0);
      wgmma += here;
      inputs_with_wgmma += here > 0;
    }
    CHECK(inputs_with_wgmma >= 3);
    CHECK(wgmma == 2 * inputs_with_wgmma);
  }
  std::string text;
  CHECK(tune("collect --template conv --compile-only --aligned-share 1.5 --count 1 --out '" +
                 (dir.path / "bad.csv").string() + "'",
             dir, &text) != 0);
  CHECK(text.find("aligned-share") != std::string::npos);
}

TEST_CASE("the CONV spot check's float64 sums are ir::evaluate's, on periodic operands") {
  using isaac::tune::cli::ConvPoint;
  namespace ir = isaac::ir;
  struct Shape {
    ir::DType dtype;
    long n, c, h, w, k, r, s, stride, pad, dilation;
    ir::ImageLayout il;
    ir::FilterLayout fl;
  };
  const Shape shapes[] = {
      {ir::DType::f32, 2, 3, 11, 13, 5, 3, 3, 1, 1, 1, ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
      {ir::DType::f16, 3, 4, 12, 10, 6, 3, 3, 2, 1, 1, ir::ImageLayout::chwn, ir::FilterLayout::crsk},
      {ir::DType::f64, 2, 5, 13, 16, 4, 5, 3, 1, 1, 2, ir::ImageLayout::nhwc, ir::FilterLayout::krsc},
      {ir::DType::f32, 1, 2, 9, 30, 3, 3, 10, 1, 1, 1, ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
  };
  for (const Shape& sh : shapes) {
    const ir::Conv v = ir::dense_conv(sh.dtype, sh.n, sh.c, sh.h, sh.w, sh.k, sh.r, sh.s, sh.stride, sh.pad,
                                      sh.dilation, sh.il, sh.fl);
    INFO(ir::to_string(v));
    // Operands of periods 37 and 41, as the GPU side uploads them (random_buffer).
    std::vector<double> in_period(37), f_period(41);
    for (std::size_t i = 0; i < in_period.size(); ++i) in_period[i] = std::sin(double(i) + 0.5);
    for (std::size_t i = 0; i < f_period.size(); ++i) f_period[i] = std::cos(3.0 * double(i) + 0.25);
    std::vector<double> input(std::size_t(v.n * v.c * v.h * v.w)), filter(std::size_t(v.k * v.c * v.r * v.s));
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = in_period[i % in_period.size()];
    for (std::size_t i = 0; i < filter.size(); ++i) filter[i] = f_period[i % f_period.size()];
    std::vector<double> expected(std::size_t(v.n * v.k * v.p * v.q), 0.0);
    ir::evaluate(ir::conv_contraction(v), {{"I", input.data()}, {"F", filter.data()}}, expected.data(),
                 {{"alpha", 1.0}, {"beta", 0.0}});
    const auto points = isaac::tune::cli::conv_sample_points(v, expected.size(), 1);
    REQUIRE(points.size() == expected.size());  // all of them when they fit the count
    for (const ConvPoint& o : points) {
      const auto ref = isaac::tune::cli::conv_reference(v, o, in_period, f_period);
      const auto i = std::size_t(isaac::tune::cli::conv_output_offset(v, o));
      REQUIRE(i < expected.size());
      CHECK(std::abs(ref.sum - expected[i]) <= 1e-12 * (ref.magnitude + 1));
      CHECK(ref.magnitude >= std::abs(ref.sum));
      // The bound of test/gpu/conv.cpp: above the output's rounding, far below the magnitude.
      const double bound = isaac::tune::cli::conv_error_bound(v.dtype, ref.magnitude, v.c * v.r * v.s, 1, 0);
      CHECK(bound >= 0x1p-60 * ref.magnitude);
      CHECK(bound <= 0.01 * ref.magnitude + 1e-6);
      // Tensor cores widen it: twice the terms (sums rounded toward zero), and for f32 three TF32
      // products per term besides
      const double tc_bound = isaac::tune::cli::conv_error_bound(v.dtype, ref.magnitude, v.c * v.r * v.s, 1, 1);
      // (f16's bound is mostly the output's rounding to f16, which tensor cores do not change).
      CHECK(tc_bound >= (v.dtype == ir::DType::f32 ? 5.0 : v.dtype == ir::DType::f64 ? 1.5 : 1.0) * bound);
      CHECK(tc_bound > bound);
    }
    // Fewer points than elements: the corners and random ones, all inside the output.
    const auto some = isaac::tune::cli::conv_sample_points(v, 16, 2);
    CHECK(some.size() == 16);
    CHECK(isaac::tune::cli::conv_output_offset(v, some[0]) == 0);
    for (const ConvPoint& o : some) {
      CHECK((o.n >= 0 && o.n < v.n && o.k >= 0 && o.k < v.k && o.p >= 0 && o.p < v.p && o.q >= 0 && o.q < v.q));
    }
  }
}

TEST_CASE("collect --seconds stops cleanly") {
  Dir dir;
  const fs::path out = dir.path / "budget.csv";
  std::string log;
  REQUIRE(tune("collect --compile-only --seconds 2 --jobs 2 --quiet --seed 3 --out '" + out.string() + "'", dir, &log) == 0);
  CHECK(log.find("stopped: the time budget") != std::string::npos);
  const auto rows = check_file(out);
  CHECK(!rows.empty());
}

TEST_CASE("collect without --compile-only needs a driver, and says so before any work") {
  Dir dir;
  const fs::path out = dir.path / "gpu.csv";
  std::string log;
  const int status = tune("collect --count 4 --out '" + out.string() + "'", dir, &log);
  if (log.find("no CUDA driver") == std::string::npos && status == 0) {
    MESSAGE("a CUDA driver is present: the no-driver path is not tested here");
    return;
  }
  CHECK(status != 0);
  CHECK(log.find("no CUDA driver") != std::string::npos);
  CHECK(log.find("--compile-only") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("collect refuses bad options") {
  Dir dir;
  const fs::path out = dir.path / "bad.csv";
  std::string log;
  CHECK(tune("collect --compile-only --out '" + out.string() + "'", dir, &log) != 0);  // neither --count nor --seconds
  CHECK(log.find("--count") != std::string::npos);
  CHECK(tune("collect --compile-only --count 4 --alpha 0 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("alpha") != std::string::npos);
  CHECK(tune("collect --compile-only --count 4 --dtypes f32,f17 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(tune("collect --compile-only --count 4 --m-min 100 --m-max 10 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("M range") != std::string::npos);
  CHECK(tune("collect --compile-only --count 4 --uniform-share 1.5 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("uniform-share") != std::string::npos);
  // Each template's own options are refused with the other.
  CHECK(tune("collect --template conv --compile-only --count 4 --alpha 2 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--alpha applies to --template gemm only") != std::string::npos);
  CHECK(tune("collect --compile-only --count 4 --pq-max 30 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--pq-max applies to --template conv only") != std::string::npos);
  CHECK(tune("collect --template conv --compile-only --count 4 --k-min 100 --k-max 10 --out '" + out.string() + "'",
             dir, &log) != 0);
  CHECK(log.find("K range") != std::string::npos);
  CHECK(tune("collect --template conv --compile-only --count 4 --max-flops 10 --out '" + out.string() + "'", dir,
             &log) != 0);
  CHECK(log.find("--max-flops") != std::string::npos);
  CHECK(tune("collect --template lstm --compile-only --count 4 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK_FALSE(fs::exists(out));
  // Training counts waves of blocks on --sm-count SMs: none would make every occupancy feature NaN.
  CHECK(tune("train --data no.csv --out '" + out.string() + "' --sm-count 0", dir, &log) != 0);
  CHECK(log.find("--sm-count: Value 0 not in range 1 to 65536") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

// focus writes a batch column since 0.1.31: a batched GEMM is a problem of its own (its own job, its
// own log2_batch), files without the column hold single GEMMs, and a batch below one is refused.
TEST_CASE("the dataset reader takes a batch column: batched rows are their own jobs") {
  Dir dir;
  const std::string set = "\"ML=64,NL=64,MS=4,NS=4,U=8,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=0,SW=1,ACC=32,TC=0\"";
  const auto write = [&](const fs::path& p, const std::string& header, const std::vector<std::string>& rows) {
    std::ofstream out(p);
    out << header << "\n";
    for (const std::string& r : rows) out << r << "\n";
  };
  const fs::path batched = dir.path / "batched.csv", plain = dir.path / "plain.csv", bad = dir.path / "bad.csv";
  write(batched, "dtype,suite,m,n,k,at,bt,batch,params,status,tflops",
        {"f32,random,96,96,96,0,0,1," + set + ",ok,1.5", "f32,random,96,96,96,0,0,32," + set + ",ok,9.5",
         "f32,random,96,96,96,0,0,32," + set + ",ok,9.0"});
  write(plain, "dtype,suite,m,n,k,at,bt,params,status,tflops", {"f32,random,96,96,96,0,0," + set + ",ok,1.4"});
  write(bad, "dtype,suite,m,n,k,at,bt,batch,params,status,tflops", {"f32,random,96,96,96,0,0,0," + set + ",ok,1.5"});
  const fs::path model = dir.path / "model.json", predictions = dir.path / "predictions.csv";
  std::string log;
  REQUIRE(tune("train --data '" + batched.string() + "," + plain.string() + "' --hidden 4 --epochs 2 --out '" +
                   model.string() + "'",
               dir, &log) == 0);
  REQUIRE(tune("eval --data '" + batched.string() + "," + plain.string() + "' --model '" + model.string() +
                   "' --predictions '" + predictions.string() + "'",
               dir, &log) == 0);
  std::vector<std::string> jobs;
  std::ifstream in(predictions);
  for (std::string line; std::getline(in, line);) jobs.push_back(line.substr(0, line.find(',')));
  CHECK(jobs == std::vector<std::string>{"job", "\"f32 random 96 96 96 00\"", "\"f32 random 96 96 96 00 x32\"",
                                         "\"f32 random 96 96 96 00 x32\"", "\"f32 random 96 96 96 00\""});
  CHECK(tune("train --data '" + bad.string() + "' --hidden 4 --epochs 2 --out '" + (dir.path / "bad.json").string() + "'",
             dir, &log) != 0);
  CHECK(log.find("bad.csv:2: batch 0: a batched GEMM has at least one") != std::string::npos);
}

// Since 0.1.43 a TMA CONV set whose grid fits on the SMs deepens its ring: a row timed before, at four
// stages, records less shared memory than the deep kernel has and is left out, as GEMM rows of another
// ST are; the deep kernel's own row, and a four-stage set's, are kept.
TEST_CASE("the dataset reader leaves out CONV rows timed before their set's ring deepened") {
  namespace ir = isaac::ir;
  namespace lower = isaac::lower;
  Dir dir;
  const ir::Conv v = ir::dense_conv(ir::DType::f16, 16, 512, 9, 9, 512, 3, 3, 1, 0, 1, ir::ImageLayout::nhwc,
                                    ir::FilterLayout::krsc);  // DeepBench's Conv13
  const auto fitted = [&](const char* text) {
    auto p = lower::parse_conv_params(text);
    lower::fit_conv_load_layouts(v, p);
    return p;
  };
  const auto deep = fitted("PL=64,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2");  // 104 blocks
  const auto four = fitted("PL=64,KL=32,PS=8,KS=2,U=64,VI=8,VF=8,TC=2");  // 208 blocks
  const std::string deep_set = deep.str(), four_set = four.str();
  REQUIRE(lower::conv_legal(v, deep));
  REQUIRE(lower::conv_legal(v, four));
  REQUIRE(lower::conv_pipeline_stages(v, deep) == 12);
  REQUIRE(lower::conv_pipeline_stages(v, four) == 0);
  const int deep_bytes = lower::conv_kernel_shared_bytes(v, deep);
  const auto row = [](const std::string& set, int shared_bytes, double tflops) {
    return fmt::format("f16,random,NHWC/KRSC,16,512,9,9,512,3,3,1,0,1,\"{}\",ok,{},{}", set, tflops, shared_bytes);
  };
  const fs::path data = dir.path / "conv.csv";
  {
    std::ofstream out(data);
    out << "dtype,suite,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,tflops,shared_bytes\n"
        << row(deep_set, deep_bytes, 210) << "\n"
        << row(deep_set, deep_bytes / 3, 150) << "\n"  // the same set at four stages (0.1.42)
        << row(four_set, lower::conv_kernel_shared_bytes(v, four), 140) << "\n";
  }
  std::string log;
  REQUIRE(tune("train --data '" + data.string() + "' --hidden 4 --epochs 2 --out '" + (dir.path / "m.json").string() +
                   "'",
               dir, &log) == 0);
  CHECK(log.find("2 measured rows, 1 jobs; 1 rows left out: timed at a TMA pipeline depth") != std::string::npos);
}

TEST_CASE("focus refuses bad shape ranges and siblings before it looks for a driver") {
  Dir dir;
  const fs::path out = dir.path / "focus.csv";
  std::string log;
  CHECK(tune("focus --seconds 1 --k-min 100 --k-max 10 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("K range [100, 10]") != std::string::npos);
  CHECK(tune("focus --seconds 1 --m-min 64 --m-max 256 --max-mnk 100 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--max-mnk") != std::string::npos);
  // Square inputs need an extent in every range: here M >= 1024 and K <= 256 share none.
  CHECK(tune("focus --seconds 1 --m-min 1024 --k-max 256 --square-share 0.5 --out '" + out.string() + "'", dir, &log) !=
        0);
  CHECK(log.find("--square-share 0.5: no M = N = K") != std::string::npos);
  // Each template's own ranges are refused with the other; N and K belong to both.
  CHECK(tune("focus --template conv --seconds 1 --m-max 256 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--m-max is for gemm rounds") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --square-share 0.5 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--square-share is for gemm rounds") != std::string::npos);
  CHECK(tune("focus --seconds 1 --pq-max 30 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--pq-max is for conv rounds") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --k-min 100 --k-max 10 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("K range [100, 10]") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --c-min 512 --c-max 64 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("C range [512, 64]") != std::string::npos);
  // CONV takes load siblings (VI, VF) since round 62, within the per-shape sets as GEMM's are.
  CHECK(tune("focus --template conv --seconds 1 --kind-siblings 2 --load-siblings 3 --out '" + out.string() + "'", dir,
             &log) != 0);
  CHECK(log.find("need best + 2 x kind-siblings + load-siblings + neighbour-siblings <= per-shape") != std::string::npos);
  CHECK(tune("focus --seconds 1 --layouts CHWN --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--layouts is for conv rounds") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --layouts CHWN,NWHC --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("unknown image layout 'NWHC'") != std::string::npos);
  // CONV takes neighbour siblings too since round 63: counted with the rest, then on to the GPU.
  CHECK(tune("focus --template conv --seconds 1 --load-siblings 3 --neighbour-siblings 4 --out '" + out.string() + "'",
             dir, &log) != 0);
  CHECK(log.find("--load-siblings 3 --neighbour-siblings 4: need best") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --neighbour-siblings 2 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("is for gemm rounds") == std::string::npos);
  CHECK(log.find("neighbour-siblings") == std::string::npos);
  // Siblings of every kind share the per-shape sets with the model's best: 6 + 2 + 5 is more than 12.
  CHECK(tune("focus --seconds 1 --best 6 --load-siblings 2 --neighbour-siblings 5 --out '" + out.string() + "'", dir,
             &log) != 0);
  CHECK(log.find("load-siblings + neighbour-siblings <= per-shape") != std::string::npos);
  // The TF32 kernels are for f32 alone: asked for without f32, the option would change nothing.
  CHECK(tune("focus --seconds 1 --dtypes f16,f64 --f32-tensor-cores --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--f32-tensor-cores needs f32 among --dtypes f16,f64") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --dtypes f16 --f32-tensor-cores --out '" + out.string() + "'", dir,
             &log) != 0);
  CHECK(log.find("--f32-tensor-cores needs f32 among --dtypes f16") != std::string::npos);
  // A batched share needs a largest batch above one, and the reverse; a batch of the smallest GEMMs
  // must fit under the cap, which counts the whole batch.
  CHECK(tune("focus --seconds 1 --batched-share 0.5 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--batched-share 0.5 --batch-max 1: a batched input needs both") != std::string::npos);
  CHECK(tune("focus --seconds 1 --batch-max 64 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--batched-share 0 --batch-max 64") != std::string::npos);
  CHECK(tune("focus --seconds 1 --batched-share 0.5 --batch-max 64 --m-min 64 --n-min 64 --k-min 64 --max-mnk 400000 "
             "--out '" + out.string() + "'",
             dir, &log) != 0);
  CHECK(log.find("two GEMMs of the smallest sizes (64 x 64 x 64) already exceed --max-mnk 400000") != std::string::npos);
  CHECK(tune("focus --template conv --seconds 1 --batch-max 8 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--batch-max is for gemm rounds") != std::string::npos);
  // Six of the model's best, four KG siblings and three load siblings do not fit in twelve.
  CHECK(tune("focus --seconds 1 --kg-siblings 4 --load-siblings 3 --out '" + out.string() + "'", dir, &log) != 0);
  CHECK(log.find("--load-siblings 3") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

// isaac-tune search --template conv: the shipped CONV model ranks a convolution's whole space on the
// CPU, and --show places sets in that ranking (the model's first choice first, an illegal set with
// the legality function's reason), and the same for a GEMM. Wrong sizes or options of the other
// template are refused.
TEST_CASE("search ranks a convolution or a GEMM and places --show sets in the model's ranking") {
  Dir dir;
  std::string log;
  const std::string conv = "search --template conv 16 1024 7 7 2048 1 1 --top 4";
  REQUIRE(tune(conv, dir, &log) == 0);
  CHECK(log.find("f32 CHWN/CRSK/CHWN n=16 c=1024 h=7 w=7 k=2048") != std::string::npos);
  CHECK(log.find("legal sets (direct and Winograd)") != std::string::npos);
  // The first candidate's parameters: the text after "TFLOP/s predicted  " on the line of "    1 ".
  const auto row = log.find("    1 ");
  REQUIRE(row != std::string::npos);
  const auto from = log.find("predicted  ", row) + std::string("predicted  ").size();
  const std::string first = log.substr(from, log.find('\n', from) - from);
  REQUIRE(first.find("PL=") == 0);
  const std::string too_many_threads = "PL=256,KL=256,PS=1,KS=1,U=16,DB=0";
  REQUIRE(tune(conv + " --show '" + first + "' --show '" + too_many_threads + "'", dir, &log) == 0);
  CHECK(log.find(first + ": predicted ") != std::string::npos);
  CHECK(log.find("1.000 of the first choice; 1 of the ") != std::string::npos);
  CHECK(log.find(": illegal here: ") != std::string::npos);
  // A CONV set's copies and occupancy: f16 Conv2's winner on the H200 and the same set with one stage
  // more (docs/tuning-history.md, round 41): 30 and 40 KB of stages, 789 blocks in one wave of 6 x 132 or two
  // of 5 x 132.
  const std::string conv2 = "search --template conv --layout NHWC/KRSC --dtype f16 16 32 42 175 32 5 10 --top 4";
  const std::string conv2_winner = "PL=128,KL=32,PS=16,KS=2,U=32,CS=1,CL=1,CG=1,VI=8,VF=8,LI=4,LF=4,DB=0,TC=2";
  const std::string deeper = "PL=128,KL=32,PS=16,KS=2,U=32,CS=1,CL=1,CG=1,VI=8,VF=8,LI=4,LF=4,DB=1,TC=2";
  REQUIRE(tune(conv2 + " --show '" + conv2_winner + "' --show '" + deeper + "'", dir, &log) == 0);
  CHECK(log.find("TMA copies, 6 blocks per SM, its waves 100% full") != std::string::npos);
  CHECK(log.find("TMA copies, 5 blocks per SM, its waves 60% full") != std::string::npos);

  // The same for a GEMM: the winner of f64 DeepBench-F 2560x64 (bench/results/gemm-sweep-winners.csv).
  const std::string winner = "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=6,VA=1,VB=2,LA=64,LB=8,DB=1,SW=1,ACC=32,TC=1";
  REQUIRE(tune("search 2560 64 2560 --dtype f64 --top 4 --show '" + winner + "' --show 'ML=256,NL=256,MS=1,NS=1,U=8'",
               dir, &log) == 0);
  CHECK(log.find(winner + ": predicted ") != std::string::npos);
  CHECK(log.find(": illegal here: ") != std::string::npos);
  // A set that runs a deep TMA pipeline: f16 LINPACK 1024's winner, 128 blocks, one on each of 128 SMs.
  const std::string deep = "ML=64,NL=128,MS=8,NS=8,U=64,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=8,ACC=32,TC=2,TMA=1,ST=8";
  REQUIRE(tune("search 1024 1024 1024 --layout NT --dtype f16 --top 4 --show '" + deep + "'", dir, &log) == 0);
  CHECK(log.find(deep + ": predicted ") != std::string::npos);
  CHECK(log.find("a deep pipeline, one block per SM, its waves 97% full") != std::string::npos);

  CHECK(tune("search --template conv 16 1024 7", dir, &log) != 0);
  CHECK(log.find("a CONV takes seven sizes, N C H W K R S; got 3") != std::string::npos);
  CHECK(tune("search --template conv 16 1024 7 7 2048 9 9", dir, &log) != 0);
  CHECK(log.find("the 9 x 9 filter (dilation 1) does not fit the 7 x 7 input padded by 0: no output") !=
        std::string::npos);
  CHECK(tune("search 0 256 256", dir, &log) != 0);
  CHECK(log.find("size 0: every size must be at least 1") != std::string::npos);
  CHECK(tune("search 256 256 256 --stride 2", dir, &log) != 0);
  CHECK(log.find("--stride, --pad and --dilation are for convolutions") != std::string::npos);
  CHECK(tune("search --template conv 16 1024 7 7 2048 1 1 --layout CHWN", dir, &log) != 0);
  CHECK(log.find("--layout CHWN: give the image and filter layouts") != std::string::npos);
  // A batched GEMM: one grid for all of them, named in the problem line.
  REQUIRE(tune("search 256 256 256 --batch 4 --top 2", dir, &log) == 0);
  CHECK(log.find("batch=4") != std::string::npos);
  CHECK(tune("search 256 256 256 --batch 0", dir, &log) != 0);
  CHECK(log.find("--batch 0: a batched GEMM has at least one") != std::string::npos);
  CHECK(tune("search --template conv 16 1024 7 7 2048 1 1 --batch 2", dir, &log) != 0);
  CHECK(log.find("--batch is for GEMMs") != std::string::npos);
  CHECK(tune("search 256 256 256 --gpu --show 'ML=64'", dir, &log) != 0);
  CHECK(log.find("--show places sets in the model's ranking") != std::string::npos);
}

// ---- Bad input to the tools: each is refused with a message that names it, and leaves no trace ----

namespace {

const std::string gemm_set = "\"ML=64,NL=64,MS=4,NS=4,U=8,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=0,SW=1,ACC=32,TC=0\"";
const std::string gemm_columns = "dtype,suite,m,n,k,at,bt,params,status,tflops";

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

// `rows` measured GEMM rows over `shapes` shapes (each shape a job of its own).
std::string gemm_rows(int rows, int shapes) {
  std::string text = gemm_columns + "\n";
  for (int i = 0; i < rows; ++i)
    text += "f32,random," + std::to_string(64 + i % shapes) + ",96,96,0,0," + gemm_set + ",ok," +
            std::to_string(1.0 + 0.1 * (i % 7)) + "\n";
  return text;
}

// The caches of the commands run here, in the test's folder (isaac-tune inherits the environment);
// the variables come back as they were at the end.
class CacheEnvironment {
 public:
  explicit CacheEnvironment(const Dir& dir) {
    set("ISAAC_TUNING_DB", (dir.path / "tuning.sqlite").string());
    set("ISAAC_KERNEL_CACHE_DIR", (dir.path / "kernels").string());
    set("ISAAC_CACHE_DIR", (dir.path / "cache").string());
    saved_.emplace_back("ISAAC_NO_CACHE", saved("ISAAC_NO_CACHE"));
    ::unsetenv("ISAAC_NO_CACHE");
  }
  ~CacheEnvironment() {
    for (const auto& [name, value] : saved_)
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
  }
  CacheEnvironment(const CacheEnvironment&) = delete;
  CacheEnvironment& operator=(const CacheEnvironment&) = delete;

 private:
  static std::optional<std::string> saved(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  }
  void set(const char* name, const std::string& value) {
    saved_.emplace_back(name, saved(name));
    ::setenv(name, value.c_str(), 1);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A decision as `cache export` writes it, with the fields of `changes` (name, JSON value) changed.
std::string decision(int i, const std::map<std::string, std::string>& changes = {}) {
  std::map<std::string, std::string> fields{
      {"device", "\"Test GPU\""},         {"compute_capability", "90"}, {"sm_count", "132"},
      {"driver", "13000"},                {"isaac_version", "\"0.1.0\""}, {"template", "\"gemm\""},
      {"dtype", "\"f32\""},               {"layout", "\"NN\""},
      {"shape", "\"m=" + std::to_string(i) + " " + std::string(200, 's') + "\""},
      {"params", "\"ML=64,NL=64,MS=4,NS=4,U=8\""}, {"measured_ms", "0.5"}, {"how", "\"test\""},
      {"created", "\"2026-11-30T00:00:00Z\""}};
  for (const auto& [name, value] : changes) fields[name] = value;
  std::string text;
  for (const auto& [key, json] : fields) text += (text.empty() ? "\"" : ", \"") + key + "\": " + json;
  return "{" + text + "}";
}

std::string decisions_file(const std::vector<std::string>& entries) {
  std::string text;
  for (const std::string& e : entries) text += (text.empty() ? "" : ",\n") + e;
  return "{\"format\": \"isaac-decisions\", \"version\": 1, \"decisions\": [\n" + text + "]}\n";
}

// Entries of `folder` whose name starts with `prefix` and holds ".tmp": what a failed write leaves.
std::vector<std::string> temporaries(const fs::path& folder, const std::string& prefix = "") {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".tmp") != std::string::npos) out.push_back(name);
  }
  return out;
}

// Runs isaac-tune where no file may grow past 64 KiB (ulimit -f counts 512-byte blocks in a POSIX
// shell): a write past it fails with EFBIG, as one on a full disk fails with ENOSPC (SIGXFSZ, which
// would kill the process instead, is ignored).
int tune_on_full_disk(const std::string& args, const Dir& dir, std::string* output) {
  return run(std::string("ulimit -f 128 && trap '' XFSZ && exec '") + ISAAC_TUNE_EXE + "' " + args, dir, output);
}

// isaac-report and isaac-info are built beside isaac-tune (tools/CMakeLists.txt).
fs::path sibling_tool(const char* name) { return fs::path(ISAAC_TUNE_EXE).parent_path() / name; }

}  // namespace

TEST_CASE("train and cv refuse options that would train garbage, abort, or write a model no loader reads") {
  Dir dir;
  const fs::path data = dir.path / "three.csv", pairs = dir.path / "pairs.csv", model = dir.path / "model.json",
                 csv = dir.path / "cv.csv";
  write_text(data, gemm_rows(3, 3));
  write_text(pairs, gemm_rows(4, 2));
  const std::string train = "train --data '" + data.string() + "' --epochs 2 --out '" + model.string() + "' ";
  std::string log;
  const std::pair<const char*, const char*> refused[] = {
      {"--lr -1", "--lr -1: the learning rate must be a finite number above 0"},
      {"--lr-decay 0", "--lr-decay 0: the factor must be above 0 and at most 1"},
      {"--compute-capability -5", "--compute-capability -5: 0 (unknown) or the GPU's"},
      {"--hidden 64 --ensemble 5000", "--ensemble 5000: from 1 to 1024 networks"},
      {"--hidden 99999999", "--hidden \"99999999\": a hidden layer of 99999999 units; at most 4096 per layer"},
      {"--hidden 2000000,2000000", "a hidden layer of 2000000 units; at most 4096 per layer"},
      {"--hidden 4096,4096 --ensemble 8", "a model holds at most 134217728"},
      {"--hidden -5", "--hidden: hidden layers \"-5\""},
  };
  for (const auto& [options, message] : refused) {
    INFO(options);
    CHECK(tune(train + options, dir, &log) == 1);
    CHECK(log.find(message) != std::string::npos);
    CHECK_FALSE(fs::exists(model));
  }

  const std::string cv = "cv --epochs 2 --data '";
  // Five folds of three rows: two would be empty, and averaged in as a test MSE of 0.
  CHECK(tune(cv + data.string() + "' --architectures 4 --folds 5 --csv '" + csv.string() + "'", dir, &log) == 1);
  CHECK(log.find("--folds 5: " + data.string() + " holds 3 rows, and each fold needs at least one: give --folds 3 or "
                 "fewer") != std::string::npos);
  CHECK_FALSE(fs::exists(csv));
  CHECK(tune(cv + pairs.string() + "' --architectures 4 --folds 3 --split jobs", dir, &log) == 1);
  CHECK(log.find("holds 2 jobs, and each fold needs at least one: give --folds 2 or fewer") != std::string::npos);
  REQUIRE(tune(cv + pairs.string() + "' --architectures 4 --folds 2 --split jobs --csv '" + csv.string() + "'", dir,
               &log) == 0);
  const Csv folds = parse(csv);
  REQUIRE(folds.rows.size() == 2);
  for (const auto& row : folds.rows) CHECK(std::stol(row[column(folds.header, "test_rows")]) > 0);
  CHECK(tune(cv + data.string() + "' --architectures 4 --folds 2 --sizes -5", dir, &log) == 1);
  CHECK(log.find("--sizes \"-5\": \"-5\" is not a positive number of training rows") != std::string::npos);
  CHECK(tune(cv + data.string() + "' --architectures '4;99999999' --folds 2", dir, &log) == 1);
  CHECK(log.find("--architectures \"99999999\": a hidden layer of 99999999 units; at most 4096") != std::string::npos);
  CHECK(tune(cv + data.string() + "' --architectures 4 --folds 2 --lr -1", dir, &log) == 1);
  CHECK(log.find("--lr -1") != std::string::npos);
}

TEST_CASE("the dataset reader refuses damaged rows, naming the file and the line") {
  Dir dir;
  const fs::path model = dir.path / "model.json";
  std::string log;
  const auto refused = [&](const std::string& name, const std::string& text, const std::string& message) {
    const fs::path p = dir.path / name;
    write_text(p, text);
    INFO(name, ":\n", text);
    CHECK(tune("train --data '" + p.string() + "' --hidden 4 --epochs 2 --out '" + model.string() + "'", dir, &log) == 1);
    CHECK(log.find(name + message) != std::string::npos);
    CHECK_FALSE(fs::exists(model));
  };
  const std::string head = gemm_columns + "\n", row = "f32,random,96,96,96,0,0," + gemm_set + ",ok,1.5\n";
  // A crash in the middle of a line: the columns after tflops are missing.
  refused("cut.csv", gemm_columns + ",phase\n" + "f32,random,96,96,96,0,0," + gemm_set + ",ok,1.5,focus\n" +
                         "f32,random,97,96,96,0,0," + gemm_set + ",ok,1.5\n",
          ":3: 10 fields where the header has 11 (a line cut short?)");
  refused("junk.csv", head + row + "f32,random,12abc,96,96,0,0," + gemm_set + ",ok,1.5\n", ":3: m \"12abc\" is not an integer");
  refused("tflops.csv", head + "f32,random,96,96,96,0,0," + gemm_set + ",ok,1.5x\n", ":2: tflops \"1.5x\" is not a number");
  refused("zero.csv", head + "f32,random,0,96,96,0,0," + gemm_set + ",ok,1.5\n", ":2: m 0: must be at least 1");
  refused("layout.csv", head + "f32,random,96,96,96,2,0," + gemm_set + ",ok,1.5\n", ":2: at \"2\": must be 0 or 1");
  const std::string conv_head = "dtype,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,tflops\n";
  refused("filter.csv", conv_head + "f32,NCHW/KCRS,2,16,7,7,32,9,9,1,0,1,\"PL=32,KL=16,PS=2,KS=2,U=8\",ok,1.5\n",
          ":2: the 9 x 9 filter (dilation 1) does not fit the 7 x 7 input padded by 0: no output");
  refused("channels.csv", conv_head + "f32,NCHW/KCRS,2,0,7,7,32,3,3,1,1,1,\"PL=32,KL=16,PS=2,KS=2,U=8\",ok,1.5\n",
          ":2: c 0: must be at least 1");
  CHECK(tune("train --data '" + dir.path.string() + "' --hidden 4 --epochs 2 --out '" + model.string() + "'", dir, &log) == 1);
  CHECK(log.find(dir.path.string() + " is a directory") != std::string::npos);
  CHECK(tune("eval --data x.csv --model '" + dir.path.string() + "'", dir, &log) != 0);
  CHECK(log.find("--model: File is actually a directory") != std::string::npos);
}

TEST_CASE("cache export, show, clear and import: bad paths and odd entries fail cleanly, and change nothing") {
  Dir dir;
  const CacheEnvironment environment(dir);
  std::string log;
  const auto decisions_now = [&] {
    REQUIRE(tune("cache show", dir, &log) == 0);
    const auto at = log.find(" decisions\n");
    REQUIRE(at != std::string::npos);
    return std::stol(log.substr(log.rfind(' ', at - 1) + 1));
  };
  const fs::path two = dir.path / "two.json";
  write_text(two, decisions_file({decision(1), decision(2)}));
  REQUIRE(tune("cache import '" + two.string() + "'", dir, &log) == 0);
  CHECK(decisions_now() == 2);

  // import checks every entry before it stores any.
  const std::pair<std::string, const char*> bad_entries[] = {
      {"\"not an object\"", "decision 1 is string \"not an object\", not an object"},
      {decision(3, {{"params", "\"total garbage\""}}), "decision 1 \"params\" \"total garbage\": malformed GEMM parameter"},
      {decision(3, {{"compute_capability", "99999999999"}}), "decision 1 \"compute_capability\" is 99999999999"},
      {decision(3, {{"measured_ms", "-5"}}), "decision 1 \"measured_ms\" is -5"},
      {decision(3, {{"template", "\"lstm\""}}), "decision 1 \"template\" is \"lstm\": gemm or conv"},
      {decision(3, {{"sm_count", "\"132\""}}), "decision 1 \"sm_count\" is \"132\""},
      {decision(3, {{"template", "\"conv\""}}), "decision 1 \"params\" \"ML=64,NL=64,MS=4,NS=4,U=8\":"},
  };
  const fs::path bad = dir.path / "bad.json";
  for (const auto& [entry, message] : bad_entries) {
    INFO(entry);
    write_text(bad, decisions_file({decision(10), entry}));
    CHECK(tune("cache import '" + bad.string() + "'", dir, &log) == 1);
    CHECK(log.find(message) != std::string::npos);
    CHECK(log.find("nothing was imported") != std::string::npos);
    CHECK(decisions_now() == 2);  // decision 10, valid, is not stored either
  }
  // An autotune bucket's candidates, one per line, and a CONV set are taken.
  write_text(bad, decisions_file({decision(11, {{"params", "\"ML=64,NL=64,MS=4,NS=4,U=8\\nML=32,NL=32,MS=4,NS=4,U=8\\n\""}}),
                                  decision(12, {{"template", "\"conv\""}, {"params", "\"PL=32,KL=16,PS=2,KS=2,U=8\""}}),
                                  decision(13, {{"measured_ms", "-1"}, {"created", "\"\""}})}));
  CHECK(tune("cache import '" + bad.string() + "'", dir, &log) == 0);
  CHECK(decisions_now() == 5);

  // export: a directory, no name, a folder that does not exist.
  CHECK(tune("cache export '" + dir.path.string() + "'", dir, &log) == 1);
  CHECK(log.find(dir.path.string() + " is a directory") != std::string::npos);
  CHECK(tune("cache export ''", dir, &log) == 1);
  CHECK(log.find("no file name given") != std::string::npos);
  CHECK(tune("cache export '" + (dir.path / "missing" / "d.json").string() + "'", dir, &log) == 1);
  CHECK(log.find("the folder " + (dir.path / "missing").string() + " does not exist") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "missing"));
  CHECK(temporaries(dir.path).empty());
  CHECK(temporaries(dir.path.parent_path(), dir.path.filename().string()).empty());

  // A full disk: the export fails, and the earlier one stays whole.
  const fs::path exported = dir.path / "exported.json";
  REQUIRE(tune("cache export '" + exported.string() + "'", dir, &log) == 0);
  const std::string before = read(exported);
  std::vector<std::string> many;
  for (int i = 100; i < 1100; ++i) many.push_back(decision(i));
  write_text(dir.path / "many.json", decisions_file(many));
  REQUIRE(tune("cache import '" + (dir.path / "many.json").string() + "'", dir, &log) == 0);
  CHECK(tune_on_full_disk("cache export '" + exported.string() + "'", dir, &log) == 1);
  CHECK(log.find("cannot write " + exported.string()) != std::string::npos);
  CHECK(read(exported) == before);
  CHECK(temporaries(dir.path).empty());

  // Entries of the kernel cache that are not files: a dangling link and a folder are counted apart,
  // and clear removes the files and links and leaves the folder.
  const fs::path kernels = dir.path / "kernels";
  fs::create_directories(kernels / "sub.kernel");
  write_text(kernels / "sub.kernel" / "inside", "not the cache's");
  write_text(kernels / "a.kernel", "a file of the cache");
  fs::create_symlink(dir.path / "nowhere", kernels / "dangling.kernel");
  CHECK(tune("cache show", dir, &log) == 0);
  CHECK(log.find("1 kernels") != std::string::npos);
  CHECK(log.find("2 entries named *.kernel that are not files") != std::string::npos);
  CHECK(tune("cache clear --kernels", dir, &log) == 0);
  CHECK(log.find("removed 2 kernels") != std::string::npos);
  CHECK(log.find("left 1 folders") != std::string::npos);
  CHECK(fs::exists(kernels / "sub.kernel" / "inside"));
  CHECK_FALSE(fs::exists(kernels / "a.kernel"));
  CHECK_FALSE(fs::is_symlink(kernels / "dangling.kernel"));
  CHECK(decisions_now() == 1005);  // --kernels leaves the decisions
}

TEST_CASE("cache clear removes a damaged tuning database, and names a file that is not one") {
  Dir dir;
  const CacheEnvironment environment(dir);
  const fs::path db = dir.path / "tuning.sqlite";
  std::string log;
  {
    std::ofstream out(db, std::ios::binary);
    std::uint32_t x = 7;
    for (int i = 0; i < 8192; ++i) out.put(char((x = x * 1664525u + 1013904223u) >> 24));
  }
  // Not SQLite at all: maybe not isaac's, so it stays; the message names it and says to delete it
  // (not to run `cache clear`, which fails on it).
  CHECK(tune("cache clear --decisions", dir, &log) == 1);
  CHECK(log.find("delete " + db.string()) != std::string::npos);
  CHECK(log.find("isaac-tune cache clear") == std::string::npos);
  CHECK(fs::exists(db));
  fs::remove(db);

  // Damaged pages: reads fail naming the file; clear removes it, and a new one takes its place.
  std::vector<std::string> many;
  for (int i = 0; i < 300; ++i) many.push_back(decision(i));
  write_text(dir.path / "many.json", decisions_file(many));
  REQUIRE(tune("cache import '" + (dir.path / "many.json").string() + "'", dir, &log) == 0);
  {
    const auto size = fs::file_size(db);
    std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uintmax_t at = 4096; at < size; at += 4096) {  // every page but the first, the schema's
      file.seekp(std::streamoff(at));
      file << std::string(64, 'Z');
    }
  }
  CHECK(tune("cache show", dir, &log) == 1);
  CHECK(log.find("database disk image is malformed") != std::string::npos);
  CHECK(log.find("delete " + db.string()) != std::string::npos);
  CHECK(tune("cache clear", dir, &log) == 0);
  CHECK(log.find("removed the damaged tuning database " + db.string()) != std::string::npos);
  REQUIRE(tune("cache show", dir, &log) == 0);
  CHECK(log.find(": 0 decisions") != std::string::npos);

  // A "decisions" table of another form (a column renamed in the schema's text, which SQLite keeps
  // on the first page): refused on open, naming the columns; clear removes it.
  REQUIRE(tune("cache import '" + (dir.path / "many.json").string() + "'", dir, &log) == 0);
  std::string bytes = read(db);
  const auto at = bytes.find("created TEXT NOT NULL");
  REQUIRE(at < 4096);
  bytes.replace(at, 7, "stamped");
  write_text(db, bytes);
  CHECK(tune("cache show", dir, &log) == 1);
  CHECK(log.find("its table \"decisions\" has the columns (") != std::string::npos);
  CHECK(log.find("how, stamped) where this isaac needs (") != std::string::npos);
  CHECK(tune("cache clear --decisions", dir, &log) == 0);
  REQUIRE(tune("cache show", dir, &log) == 0);
  CHECK(log.find(": 0 decisions") != std::string::npos);
}

TEST_CASE("eval --predictions on a full disk leaves no truncated file; export refuses a folder or a missing one") {
  Dir dir;
  const CacheEnvironment environment(dir);
  std::string log;
  const fs::path data = dir.path / "rows.csv", model = dir.path / "model.json", predictions = dir.path / "p.csv";
  write_text(data, gemm_rows(5000, 5000));  // about 350 kB of predictions
  REQUIRE(tune("train --data '" + data.string() + "' --hidden 4 --epochs 1 --out '" + model.string() + "'", dir, &log) == 0);
  const std::string eval = "eval --data '" + data.string() + "' --model '" + model.string() + "' --predictions '";
  CHECK(tune_on_full_disk(eval + predictions.string() + "'", dir, &log) == 1);
  CHECK(log.find("cannot write " + predictions.string()) != std::string::npos);
  CHECK_FALSE(fs::exists(predictions));
  CHECK(temporaries(dir.path).empty());
  CHECK(tune(eval + (dir.path / "missing" / "p.csv").string() + "'", dir, &log) == 1);
  CHECK(log.find("does not exist") != std::string::npos);
  REQUIRE(tune(eval + predictions.string() + "'", dir, &log) == 0);
  CHECK(parse(predictions).rows.size() == 5000);

  // export writes into an existing folder only, and never over a folder.
  const fs::path spec = dir.path / "one.spec";
  write_text(spec, "f f32 NN 64 64 64\n");
  CHECK(tune("export '" + spec.string() + "' --no-cubin --out '" + dir.path.string() + "'", dir, &log) == 1);
  CHECK(log.find(dir.path.string() + " is a directory: name a file to write") != std::string::npos);
  const fs::path nested = dir.path / "no" / "such" / "k.hpp";
  CHECK(tune("export '" + spec.string() + "' --no-cubin --out '" + nested.string() + "'", dir, &log) == 1);
  CHECK(log.find("the folder " + nested.parent_path().string() + " does not exist") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "no"));
  CHECK(tune("export '" + dir.path.string() + "' --no-cubin --out '" + (dir.path / "k.hpp").string() + "'", dir, &log) == 1);
  CHECK(log.find("the export spec " + dir.path.string() + " is a directory") != std::string::npos);
  CHECK(temporaries(dir.path).empty());
}

TEST_CASE("search, sampler and collect refuse compute capabilities that isaac cannot compile for") {
  Dir dir;
  std::string log;
  for (const char* cc : {"50", "100", "-1"}) {
    INFO(cc);
    CHECK(tune(std::string("search 256 256 256 --top 1 --compute-capability ") + cc, dir, &log) == 1);
    CHECK(log.find(std::string("--compute-capability ") + cc + ": unknown target") != std::string::npos);
  }
  CHECK(tune("sampler --sm -1 --shapes 1", dir, &log) == 1);
  CHECK(log.find("--sm -1: unknown target '-1': expected sm_70") != std::string::npos);
  // Before, --sm 50 became sm_70, which CUDA 13's ptxas refuses: every row a failure, and exit code 0.
  const fs::path out = dir.path / "c.csv";
  CHECK(tune("collect --compile-only --sm 50 --count 2 --quiet --out '" + out.string() + "'", dir, &log) == 1);
  CHECK(log.find("--sm 50: unknown target") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("isaac-report refuses bad problem files, naming the file and the line") {
  const fs::path report = sibling_tool("isaac-report");
  if (!fs::exists(report)) {
    MESSAGE("skipped: no isaac-report beside " << ISAAC_TUNE_EXE);
    return;
  }
  Dir dir;
  const CacheEnvironment environment(dir);
  const fs::path gemm = dir.path / "gemm.csv", conv = dir.path / "conv.csv";
  const std::string gemm_head = "suite,m,n,k,at,bt\n", conv_head = "name,n,p,q,k,c,r,s\n";
  std::string log;
  const auto refused = [&](const std::string& gemm_text, const std::string& conv_text, const std::string& message) {
    write_text(gemm, gemm_text);
    write_text(conv, conv_text);
    INFO(gemm_text, conv_text);
    CHECK(run("'" + report.string() + "' --problems '" + gemm.string() + "' --winners none.csv --dtypes f32 " +
                  "--conv-problems '" + conv.string() + "' --conv-winners none.csv --conv-dtypes f32",
              dir, &log) == 1);
    CHECK(log.find(message) != std::string::npos);
  };
  refused(gemm_head + "X,abc,128,128,0,0\n", conv_head, "gemm.csv:2: m \"abc\" must be an integer of at least 1");
  refused("suite,m,n,k,at\nX,128,128,128,0\n", conv_head, "gemm.csv:1: the header has no column \"bt\"");
  refused(gemm_head + "X,128,128\n", conv_head, "gemm.csv:2: 3 fields where the header has 6");
  refused(gemm_head + "X,128,128,128,0,2\n", conv_head, "gemm.csv:2: bt \"2\" must be 0 or 1");
  refused(gemm_head, conv_head + "C,0,7,7,64,64,1,1\n", "conv.csv:2: n \"0\" must be an integer of at least 1");
  refused(gemm_head, conv_head + "C,16,0,7,64,64,1,1\n", "conv.csv:2: p \"0\" must be an integer of at least 1");
  refused("", conv_head, "gemm.csv has no header line");
  CHECK(run("'" + report.string() + "' --problems '" + dir.path.string() + "' --conv-problems ''", dir, &log) == 1);
  CHECK(log.find(dir.path.string() + " is a directory") != std::string::npos);
}

TEST_CASE("isaac-info --jit without a driver exits 77, the tests' code for skipped") {
  const fs::path info = sibling_tool("isaac-info");
  if (!fs::exists(info)) {
    MESSAGE("skipped: no isaac-info beside " << ISAAC_TUNE_EXE);
    return;
  }
  Dir dir;
  std::string log;
  CHECK(run("'" + info.string() + "'", dir, &log) == 0);
  if (log.find("no GPU") == std::string::npos) {
    MESSAGE("a GPU is present: the no-driver path of --jit is not tested here");
    return;
  }
  CHECK(run("'" + info.string() + "' --jit", dir, &log) == 77);
  CHECK(log.find("--jit skipped") != std::string::npos);
}
