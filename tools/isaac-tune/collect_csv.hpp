#pragma once
// The CSV of `isaac-tune collect`: the sweep's columns (bench/results/gemm-sweep-all.csv.xz, what
// dataset.cpp reads by name) after a leading `index` (the row of the plan), below one comment line
// naming the plan. GEMM and CONV files differ only in the problem's columns (between `index` and
// `params`). Rows are appended as they complete, each with one write(2), and synced to disk every
// few rows or every second; --resume truncates a torn last line and skips the indices present.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>

namespace isaac::tune::cli {

inline constexpr const char* collect_header =
    "index,dtype,suite,m,n,k,at,bt,params,status,median_ms,min_ms,max_ms,tflops,registers,local_bytes,shared_bytes,"
    "threads,blocks,emit_ms,compile_ms,reason,phase";
inline constexpr const char* collect_conv_header =
    "index,dtype,suite,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,median_ms,min_ms,max_ms,tflops,"
    "registers,local_bytes,shared_bytes,threads,blocks,emit_ms,compile_ms,reason,phase";
inline constexpr const char* collect_plan_prefix = "# isaac-tune collect plan: ";

// The problem's columns of a row, joined by commas (no quotes, no commas inside a field):
// "f32,random,512,256,128,0,1" (dtype, suite, m, n, k, at, bt) for a GEMM, and
// "f16,random,NHWC/KRSC,16,64,58,58,128,3,3,1,1,1" (dtype, suite, layout, n, c, h, w, k, r, s,
// stride, pad, dilation) for a dense CONV of ir::dense_conv's form (square stride, pad, dilation).
std::string problem_columns(const ir::Gemm& g);
std::string problem_columns(const ir::Conv& v);
std::string layout_name(const ir::Conv& v);  // "NCHW/KCRS": ir::name(input) + "/" + ir::name(filter)

// status: ok | compiled (--compile-only) | compile (emission or ptxas failed) | jit (the driver refused
// the module) | launch (a run failed or hung) | wrong (failed the spot check) | illegal (no legal
// parameter set was found). Every status but ok and compiled has a reason, and no status but ok has
// numbers for the timings and TFLOP/s.
struct ResultRow {
  std::uint64_t index = 0;
  std::string problem;   // problem_columns() of the row's input
  std::string params;    // the parameter set's str(); empty when there is none
  double flops = 0;      // useful flops of one run, for the TFLOP/s
  std::string status;
  double median_ms = std::numeric_limits<double>::quiet_NaN(), min_ms = median_ms, max_ms = median_ms;
  int registers = -1, local_bytes = -1, shared_bytes = -1, threads = 0;
  std::int64_t blocks = 0;
  double emit_ms = std::numeric_limits<double>::quiet_NaN(), compile_ms = emit_ms;
  std::string reason;
  std::string phase = "sampler";  // how the parameters were drawn: sampler (learned) or uniform
};

// One CSV line, with its newline.
std::string format_row(const ResultRow& row);
// `text` on one line (newlines become " | "), at most `limit` characters.
std::string one_line(const std::string& text, std::size_t limit = 600);

// What a row already in the file says about its plan row (to check that the plan is the same): the
// problem's columns as problem_columns() writes them, and the parameters.
struct StoredRow {
  std::string problem, params;
  bool operator==(const StoredRow&) const = default;
};

// For --resume: reads `path`, drops a torn last line (truncating the file), checks that the file's plan
// line equals `signature` and its header is `header`, and returns the rows present by index. A plan
// line without "template=" (a file from before CONV) counts as "template=gemm " followed by it.
// A missing or empty file (or one holding less than the header) gives no rows and is started anew.
// Throws InvalidArgument naming the file and the line for anything else.
std::map<std::uint64_t, StoredRow> read_for_resume(const std::string& path, const std::string& signature,
                                                    const std::string& header, std::size_t* truncated_bytes = nullptr);

class RowWriter {
 public:
  // Appends to `path`; writes the plan line and `header` first when the file is empty or new.
  // Without `append`, refuses a file that already holds rows (use --resume, or remove it).
  RowWriter(const std::string& path, const std::string& signature, const std::string& header, bool append);
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;
  // Thread-safe; syncs to disk every `sync_rows` rows or `sync_seconds` (and in sync()).
  void write(const std::string& line);
  void sync();

 private:
  void write_all(const std::string& text);
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
  int unsynced_ = 0;
  std::chrono::steady_clock::time_point last_sync_;
};

}  // namespace isaac::tune::cli
