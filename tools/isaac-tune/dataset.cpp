#include "dataset.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace isaac::tune::cli {

namespace {

// Fields of a CSV line; a field in double quotes may hold the separator.
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) out.emplace_back();
    else if (ch != '\r') out.back() += ch;
  }
  return out;
}

std::string quote_shell(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> read_lines(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw InvalidArgument(fmt::format("{} is a directory: give dataset CSV files, separated by commas", path));
  const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
  std::FILE* f = xz ? ::popen(("xz -dc -- " + quote_shell(path)).c_str(), "r") : std::fopen(path.c_str(), "r");
  if (!f) throw InvalidArgument(fmt::format("cannot read {}", path));
  std::vector<std::string> lines;
  std::string line;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    for (size_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        lines.push_back(std::move(line));
        line.clear();
      } else {
        line += buffer[i];
      }
    }
  if (!line.empty()) lines.push_back(std::move(line));
  const int status = xz ? ::pclose(f) : std::fclose(f);
  if (status != 0) throw InvalidArgument(fmt::format("reading {} failed{}", path, xz ? " (xz -dc exited with an error)" : ""));
  return lines;
}

}  // namespace

Dataset load_one(const std::string& path, const std::string& dtype, const lower::DeviceLimits& device);

std::vector<std::string> Dataset::jobs() const {
  std::set<std::string> set;
  for (const Row& r : rows) set.insert(r.job);
  return {set.begin(), set.end()};
}

Dataset load_dataset(const std::string& paths, const std::string& dtype, int sm_count) {
  lower::DeviceLimits device;
  device.sm_count = sm_count;
  Dataset data;
  size_t pos = 0;
  while (pos <= paths.size()) {
    const size_t comma = std::min(paths.find(',', pos), paths.size());
    Dataset part = load_one(paths.substr(pos, comma - pos), dtype, device);
    if (!data.template_name.empty() && part.template_name != data.template_name)
      throw InvalidArgument(fmt::format("{} holds {} rows, the files before it {} rows: give one template at a time",
                                        paths.substr(pos, comma - pos), part.template_name, data.template_name));
    data.template_name = part.template_name;
    data.samples.features = part.samples.features;
    data.rows.insert(data.rows.end(), part.rows.begin(), part.rows.end());
    data.other_depth += part.other_depth;
    data.samples.x.insert(data.samples.x.end(), part.samples.x.begin(), part.samples.x.end());
    data.samples.y.insert(data.samples.y.end(), part.samples.y.begin(), part.samples.y.end());
    pos = comma + 1;
  }
  if (data.rows.empty()) throw InvalidArgument(fmt::format("{}: no measured rows of dtype {}", paths, dtype));
  return data;
}

Dataset load_one(const std::string& path, const std::string& dtype, const lower::DeviceLimits& device) {
  const auto lines = read_lines(path);
  Dataset data;
  std::size_t measured = 0, columns = 0;
  std::map<std::string, size_t> col;
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    if (lines[ln].empty() || lines[ln][0] == '#') continue;
    const auto fields = split(lines[ln]);
    if (col.empty()) {
      columns = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) col[fields[i]] = i;
      data.template_name = col.count("r") && col.count("layout") ? "conv" : "gemm";
      const std::vector<const char*> needs =
          data.template_name == "conv"
              ? std::vector<const char*>{"dtype", "layout", "n", "c", "h", "w", "k", "r", "s", "stride", "pad",
                                         "dilation", "params", "status", "tflops"}
              : std::vector<const char*>{"dtype", "m", "n", "k", "at", "bt", "params", "status", "tflops"};
      for (const char* need : needs)
        if (!col.count(need)) throw InvalidArgument(fmt::format("{}: the header has no column \"{}\"", path, need));
      data.samples.features =
          int(data.template_name == "conv" ? conv_feature_names().size() : gemm_feature_names().size());
      continue;
    }
    // A row of another length is damaged (a line cut short by a crash, a stray separator): its
    // fields would be read from the wrong columns.
    if (fields.size() != columns)
      throw InvalidArgument(fmt::format("{}:{}: {} fields where the header has {}{}", path, ln + 1, fields.size(), columns,
                                        fields.size() < columns ? " (a line cut short?)" : ""));
    auto get = [&](const char* name) -> const std::string& { return fields[col.at(name)]; };
    // Whole fields only: stoll and stod would read "12abc" as 12.
    auto integer = [&](const char* name) {
      const std::string& text = get(name);
      std::int64_t value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
        throw InvalidArgument(fmt::format("{} \"{}\" is not an integer", name, text));
      return value;
    };
    auto at_least = [&](const char* name, std::int64_t least) {
      const std::int64_t value = integer(name);
      if (value < least) throw InvalidArgument(fmt::format("{} {}: must be at least {}", name, value, least));
      return value;
    };
    auto flag = [&](const char* name) {
      const std::string& text = get(name);
      if (text != "0" && text != "1") throw InvalidArgument(fmt::format("{} \"{}\": must be 0 or 1", name, text));
      return text == "1";
    };
    if (get("status") != "ok") continue;
    ++measured;
    if (!dtype.empty() && get("dtype") != dtype) continue;
    try {
      Row row;
      const std::string& tflops = get("tflops");
      const auto [end, ec] = std::from_chars(tflops.data(), tflops.data() + tflops.size(), row.tflops);
      if (tflops.empty() || ec != std::errc{} || end != tflops.data() + tflops.size())
        throw InvalidArgument(fmt::format("tflops \"{}\" is not a number", tflops));
      if (!(row.tflops > 0) || !std::isfinite(row.tflops)) continue;
      const ir::DType t = ir::parse_dtype(get("dtype"));
      const std::string suite = col.count("suite") ? get("suite") : "-";
      std::vector<double> f;
      if (data.template_name == "conv") {
        const std::string& layout = get("layout");
        const auto slash = layout.find('/');
        if (slash == std::string::npos)
          throw InvalidArgument(fmt::format("layout \"{}\": give the image and filter layouts, e.g. CHWN/CRSK", layout));
        const ir::Conv v = ir::dense_conv(t, at_least("n", 1), at_least("c", 1), at_least("h", 1), at_least("w", 1),
                                          at_least("k", 1), at_least("r", 1), at_least("s", 1), at_least("stride", 1),
                                          at_least("pad", 0), at_least("dilation", 1),
                                          ir::parse_image_layout(layout.substr(0, slash)),
                                          ir::parse_filter_layout(layout.substr(slash + 1)));
        if (v.p < 1 || v.q < 1)
          throw InvalidArgument(fmt::format("the {} x {} filter (dilation {}) does not fit the {} x {} input padded by "
                                            "{}: no output",
                                            v.r, v.s, v.dilation_h, v.h, v.w, v.pad_h));
        const lower::ConvParams params = lower::parse_conv_params(get("params"));
        // A set whose ring now deepens (0.1.43) was timed at four stages before: its recorded shared
        // memory is then not the deep kernel's. Files that record none (focus before 0.1.44) cannot
        // say which kernel they timed.
        if (lower::conv_pipeline_stages(v, params) &&
            (!col.count("shared_bytes") || integer("shared_bytes") != lower::conv_kernel_shared_bytes(v, params))) {
          ++data.other_depth;
          continue;
        }
        f = conv_features(v, params, device);
        row.tiling = tiling_of(params);
        row.job = fmt::format("{} {} {} n{} c{} h{} w{} k{} r{} s{} u{} p{} d{}", get("dtype"), suite, layout, get("n"),
                              get("c"), get("h"), get("w"), get("k"), get("r"), get("s"), get("stride"), get("pad"),
                              get("dilation"));
      } else {
        // Files without a batch column (collect, sweeps, focus before 0.1.31) hold single GEMMs.
        const std::int64_t batch = col.count("batch") ? integer("batch") : 1;
        if (batch < 1) throw InvalidArgument(fmt::format("batch {}: a batched GEMM has at least one", batch));
        const ir::Gemm g = ir::dense_gemm(t, at_least("m", 1), at_least("n", 1), at_least("k", 1), flag("at"),
                                          flag("bt"), batch);
        const lower::GemmParams params = lower::parse_gemm_params(get("params"));
        lower::GemmParams fitted = params;
        lower::fit_gemm_pipeline_depth(g, fitted, device);
        if (fitted.st != params.st) {
          ++data.other_depth;
          continue;
        }
        f = gemm_features(g, params, device);
        row.tiling = tiling_of(params);
        row.job = fmt::format("{} {} {} {} {} {}{}{}", get("dtype"), suite, get("m"), get("n"), get("k"), get("at"),
                              get("bt"), batch == 1 ? std::string{} : fmt::format(" x{}", batch));
      }
      data.samples.x.insert(data.samples.x.end(), f.begin(), f.end());
      data.samples.y.push_back(std::log(row.tflops));
      data.rows.push_back(std::move(row));
    } catch (const std::logic_error& e) {  // a library parser's std::stoi and the like
      throw InvalidArgument(fmt::format("{}:{}: malformed number ({})", path, ln + 1, e.what()));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("{}:{}: {}", path, ln + 1, e.what()));
    }
  }
  // A file may hold none of one dtype (load_dataset checks the whole list), but one with no measured
  // row at all is not training data.
  if (measured == 0) throw InvalidArgument(fmt::format("{}: no measured rows (status ok)", path));
  return data;
}

}  // namespace isaac::tune::cli
