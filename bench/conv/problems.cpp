#include "problems.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/timer.hpp>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace isaac::bench {

std::vector<Problem> read_problems(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read the problem list " + path + " (use --problems)");
  std::vector<Problem> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::stringstream ss(line);
    std::string f;
    std::vector<std::string> v;
    while (std::getline(ss, f, ',')) v.push_back(f);
    if (v.size() != 8) throw InvalidArgument("bad line in " + path + ": " + line);
    out.push_back({v[0], std::stoll(v[1]), std::stoll(v[2]), std::stoll(v[3]), std::stoll(v[4]), std::stoll(v[5]),
                   std::stoll(v[6]), std::stoll(v[7])});
  }
  return out;
}

ir::Conv make_conv(const Problem& pr, ir::DType t, ir::ImageLayout il, ir::FilterLayout fl) {
  return ir::dense_conv(t, pr.n, pr.c, pr.p + pr.r - 1, pr.q + pr.s - 1, pr.k, pr.r, pr.s, 1, 0, 1, il, fl);
}

std::string layout_text(const ir::Conv& v) {
  return fmt::format("{}/{}", ir::name(v.input_layout), ir::name(v.filter_layout));
}

double conv_bytes(const ir::Conv& v) {
  double e = static_cast<double>(ir::size_of(v.dtype));
  return e * (v.n * v.c * v.h * v.w + v.k * v.c * v.r * v.s + v.n * v.k * v.p * v.q);
}


Operands::Operands(const ir::Conv& v)
    : in(ir::size_of(v.dtype) * v.n * v.c * v.h * v.w),
      filter(ir::size_of(v.dtype) * v.k * v.c * v.r * v.s),
      out(ir::size_of(v.dtype) * v.n * v.k * v.p * v.q) {
  // Small finite values: 0x3C00 / 0x3F80_0000-ish byte patterns are fine for timing.
  in.fill_bytes(0x3C);
  filter.fill_bytes(0x3C);
  out.fill_bytes(0);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string f;
  while (std::getline(ss, f, sep))
    if (!f.empty()) out.push_back(f);
  return out;
}
std::vector<ConvWinner> read_winners(const std::vector<Problem>& problems, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read the sweep winners " + path + ": run `sweep` first (or --winners)");
  std::vector<ConvWinner> winners;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto q1 = line.find('"'), q2 = line.rfind('"');
    const auto head = split(line.substr(0, q1), ',');
    if (head.size() < 3 || q1 == std::string::npos) continue;
    auto pr = std::find_if(problems.begin(), problems.end(), [&](const Problem& p) { return p.name == head[1]; });
    if (pr == problems.end()) continue;
    ConvWinner w{head[0], head[2], line.substr(q1 + 1, q2 - q1 - 1), *pr, {}};
    if (const auto tail = split(line.substr(q2 + 1), ','); tail.size() >= 2) {
      w.ms = std::stod(tail[0]);
      w.tflops = std::stod(tail[1]);
    }
    const auto slash = w.layout.find('/');
    w.conv = make_conv(*pr, ir::parse_dtype(w.dtype), ir::parse_image_layout(w.layout.substr(0, slash)),
                       ir::parse_filter_layout(w.layout.substr(slash + 1)));
    winners.push_back(std::move(w));
  }
  return winners;
}

double median_ms(const CompiledConv& kernel, const Operands& o, const runtime::Stream& stream) {
  return runtime::time_on_stream(
             [&](const runtime::Stream& s) { kernel.run(o.out.ptr(), o.in.ptr(), o.filter.ptr(), 1, 0, s); }, stream)
      .median_ms;
}

}  // namespace isaac::bench
