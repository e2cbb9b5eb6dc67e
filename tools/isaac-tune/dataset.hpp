#pragma once
// Measured GEMM datasets (bench/results/gemm-sweep-*.csv[.xz]) as model samples.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/mlp.hpp>

#include <string>
#include <vector>

namespace isaac::tune::cli {

struct Row {
  std::string job;  // "f32 LINPACK 512 512 512 01": one (problem, dtype) of the sweep
  ir::Gemm problem;
  lower::GemmParams params;
  double tflops = 0;
};

struct Dataset {
  std::vector<Row> rows;  // status=ok rows with a positive TFLOP/s only
  Samples samples;        // gemm_features of each row; y = log(TFLOP/s)
  std::vector<std::string> jobs() const;
};

// Reads CSVs with a header (dtype, suite, m, n, k, at, bt, params, status, tflops, ...), several
// separated by commas; a path ending in .xz is read through `xz -dc`. A non-empty `dtype` keeps only
// its rows. Throws InvalidArgument naming the file and line.
Dataset load_dataset(const std::string& paths, const std::string& dtype = "");

}  // namespace isaac::tune::cli
