#pragma once
// One template's side of `isaac-tune collect` (GEMM: collect_gemm.cpp, CONV: collect_conv.cpp): its
// plan, its CSV header, how a plan row compiles on a worker and runs on the GPU thread. collect.cpp
// drives either through this interface (the queue, the resume, the progress, the summary).
#include "collect_conv_plan.hpp"
#include "collect_csv.hpp"
#include "collect_gpu.hpp"
#include "collect_plan.hpp"

#include <isaac/lower/target.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace isaac::tune::cli {

struct CompileSettings {
  lower::Target target;
  bool ptxas = false;         // ptxas is installed
  bool compile_only = false;  // no GPU: record resources (ptxas) and status 'compiled'
};

// A plan row on its way: made by the plan (in order), compiled on a worker, then (without
// --compile-only, and when compiling left row.status empty) run on the GPU thread.
class Job {
 public:
  virtual ~Job() = default;
  ResultRow row;           // the plan's index, problem, params and phase; the rest as the job goes
  std::uint64_t shape = 0;  // the plan's input the row belongs to (index / per-shape)
  bool params_planned = true;  // false: next(stored) left the parameter set out (row.params means nothing)
  // On a worker: emits (and where it applies assembles) the kernel; on failure, or without a
  // parameter set, sets the row's status and reason.
  virtual void compile(const CompileSettings& settings) = 0;
  // On the GPU thread: loads, optionally spot-checks, and times the kernel (GpuRunner::process).
  virtual void run(bool check) = 0;
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual const char* header() const = 0;
  // The plan line of the CSV ("template=gemm seed=1 ..."), compared on --resume.
  virtual std::string signature() const = 0;
  // The plan, in order and one caller at a time: the index of the next row, and that row. With
  // `stored` (the file holds the row, --resume skips it), the template may leave out the parameter
  // set where working it out is costly and later rows do not depend on it (CONV).
  virtual std::uint64_t next_index() const = 0;
  virtual std::unique_ptr<Job> next(bool stored) = 0;
  // Without --compile-only, before the first next(): the GPU runner that later jobs run on.
  virtual void open_gpu(const GpuOptions& options, RowWriter& writer) = 0;
  virtual std::uint64_t checks() const = 0;  // spot checks run
  // What a worker does to a kernel, for the messages ("emission + ptxas", ...).
  virtual std::string compile_steps(const CompileSettings& settings) const = 0;
  // Lines for the summary after the run (may be empty).
  virtual std::string notes() const { return {}; }
};

std::unique_ptr<Collector> make_gemm_collector(const PlanOptions& options);
std::unique_ptr<Collector> make_conv_collector(const ConvPlanOptions& options);

}  // namespace isaac::tune::cli
