#pragma once
// What `run` writes: bench/results/h100-gemm.csv (one leading comment line, then exactly
//   dtype,suite,m,n,k,at,bt,isaac_tflops,cublas_tflops,roofline_tflops,params)
// and a table on stdout with isaac/cuBLAS per row, geometric means per dtype over the DeepBench, ICA
// and LAPACK rows, over the LINPACK rows, and over the rows whose roofline is set by bandwidth, and the
// issue's targets. The memory floor of each row (memory_floor.hpp) goes to a CSV of its own:
//   dtype,suite,m,n,k,at,bt,bytes,floor_tflops,isaac_tflops,cublas_tflops,roofline_tflops
#include "ceilings.hpp"
#include "problems.hpp"

#include <isaac/ir/dtype.hpp>

#include <string>
#include <vector>

namespace isaac::bench {

struct ReportRow {
  ir::DType dtype = ir::DType::f32;
  Problem problem;
  std::string params;
  double isaac_tflops = 0;  // 0: no figure (the error says why)
  double cublas_tflops = 0;
  double roofline_tflops = 0;
  double floor_tflops = 0;  // flops over the memory floor's time; 0: not measured
  bool bandwidth_bound = false;
  std::string cublas_which;
  std::string isaac_error, cublas_error;
  double rel_error = -1;         // of isaac's result against the float64 reference; -1: not checked
  double cublas_rel_error = -1;  // of cublasGemmEx's, the same way (a check of the harness)
  std::string cublas_warning;    // set when cuBLAS's own result fails the check
};

std::string format_report_csv(const std::string& comment, const std::vector<ReportRow>& rows);
std::string format_floor_csv(const std::string& comment, const std::vector<ReportRow>& rows);
// Prints the table and the summaries; returns the number of rows without both figures.
int print_report(const std::vector<ReportRow>& rows, const Ceilings& ceilings);

bool in_paper_group(const Problem& p);  // DeepBench, ICA or LAPACK
bool in_linpack(const Problem& p);

}  // namespace isaac::bench
