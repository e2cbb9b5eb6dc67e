#pragma once
// Measured datasets as model samples: GEMM rows (bench/results/gemm-sweep-all.csv.xz, isaac-tune
// collect, focus) with the columns dtype, m, n, k, at, bt, params, status, tflops and an optional
// batch (1 without it); CONV rows (isaac-tune
// collect --template conv) with dtype, layout, n, c, h, w, k, r, s, stride, pad, dilation, params,
// status, tflops.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/mlp.hpp>
#include <isaac/tune/spread.hpp>

#include <string>
#include <vector>

namespace isaac::tune::cli {

struct Row {
  std::string job;  // "f32 LINPACK 512 512 512 01": one (problem, dtype) of the data
  double tflops = 0;
  Tiling tiling{};  // of its parameter set
};

struct Dataset {
  std::string template_name;  // "gemm" or "conv", from the columns of the files
  std::vector<Row> rows;  // status=ok rows with a positive TFLOP/s only
  Samples samples;        // gemm_features of each row; y = log(TFLOP/s)
  // Rows left out: their set would now run at another TMA pipeline depth, so their timing is of a
  // kernel the searches no longer run. GEMM: the ST that fits on a GPU of the given SM count differs
  // (collections made before 0.1.15, whose small grids ran four stages). CONV: the set's ring now
  // deepens (lower::conv_pipeline_stages) and the row's shared_bytes is not the deep kernel's (timings
  // made before 0.1.43).
  std::size_t other_depth = 0;
  std::vector<std::string> jobs() const;
};

// Reads CSVs with a header naming the columns above, several separated by commas (all of one
// template); a path ending in .xz is read through `xz -dc`. A non-empty `dtype` keeps only
// its rows; `sm_count` is the measuring GPU's (Dataset::other_depth, and the CONV features' waves of
// blocks). Throws InvalidArgument naming
// the file and line.
Dataset load_dataset(const std::string& paths, const std::string& dtype = "", int sm_count = 132);

}  // namespace isaac::tune::cli
