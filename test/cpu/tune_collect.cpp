// isaac-tune collect without a GPU (issue 6, "Sampler and data"): --compile-only compiles a plan and
// records it; a run killed mid-line is resumed to exactly the planned rows, each once; the resumed
// plan is the one a fresh run makes; a time budget stops cleanly; a file of another plan, or an
// existing file without --resume, is refused; without a driver, the run fails before any work; and
// the tuner's dataset reader takes the file. Runs the isaac-tune binary (ISAAC_TUNE_EXE).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef ISAAC_TUNE_EXE
#error "test/CMakeLists.txt defines ISAAC_TUNE_EXE, the path of the isaac-tune binary"
#endif

namespace fs = std::filesystem;

namespace {

const char* header =
    "index,dtype,suite,m,n,k,at,bt,params,status,median_ms,min_ms,max_ms,tflops,registers,local_bytes,shared_bytes,"
    "threads,blocks,emit_ms,compile_ms,reason,phase";

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

// Runs isaac-tune with `args`; returns the exit status, stdout+stderr in `output`.
int tune(const std::string& args, const Dir& dir, std::string* output = nullptr) {
  const fs::path log = dir.path / "log.txt";
  const std::string command = std::string("'") + ISAAC_TUNE_EXE + "' " + args + " > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  const std::string text = read(log);
  if (output) *output = text;
  INFO(command, "\n", text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

// Checks the file's form and returns its rows by index (each index once).
std::map<long, std::vector<std::string>> check_file(const fs::path& p) {
  const Csv csv = parse(p);
  CHECK(csv.ends_with_newline);
  REQUIRE(csv.comments.size() == 1);
  CHECK(csv.comments[0].rfind("# isaac-tune collect plan: seed=", 0) == 0);
  REQUIRE(csv.header == header);
  const std::size_t columns = split(header).size();
  std::map<long, std::vector<std::string>> by_index;
  for (const auto& row : csv.rows) {
    REQUIRE(row.size() == columns);
    const long index = std::stol(row[0]);
    CHECK(by_index.emplace(index, row).second);  // no duplicate
    const std::string& status = row[9];
    CHECK((status == "compiled" || status == "compile" || status == "illegal"));
    CHECK(row[13].empty());  // tflops: never a number without a measurement
    CHECK(row[2] == "random");
    CHECK((row[22] == "sampler" || row[22] == "uniform"));
    if (status == "compiled") {
      CHECK(row[21].empty());
      CHECK(row[8].find("ML=") == 0);
      CHECK(std::stoi(row[17]) > 0);  // threads
      CHECK(std::stol(row[18]) > 0);  // blocks
      CHECK(std::stod(row[19]) > 0);  // emit_ms
    } else {
      CHECK(!row[21].empty());  // every failure has its reason
    }
  }
  return by_index;
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
  }
  SUBCASE("another plan is refused") {
    const std::string before = read(out);
    std::string text;
    CHECK(tune("collect --count 20 --resume --dtypes f32" + common, dir, &text) != 0);
    CHECK(text.find("another plan") != std::string::npos);
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
    std::ofstream fake(dir.path / "measured.csv");
    fake << "# the compiled rows, made to look measured\n" << header << "\n";
    for (const auto& [i, row] : resumed) {
      if (row[9] != "compiled") continue;
      auto r = row;
      r[9] = "ok";
      r[13] = std::to_string(1.0 + double(i) / 10);
      for (std::size_t c = 0; c < r.size(); ++c) fake << (c ? "," : "") << (c == 8 ? "\"" + r[c] + "\"" : r[c]);
      fake << "\n";
    }
    fake.close();
    std::string train_log;
    CHECK(tune("train --data '" + (dir.path / "measured.csv").string() + "' --hidden 4 --epochs 2 --out '" +
                   (dir.path / "model.json").string() + "'",
               dir, &train_log) == 0);
    CHECK(train_log.find("trained") != std::string::npos);
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
  CHECK_FALSE(fs::exists(out));
}
