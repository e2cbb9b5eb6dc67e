#include <isaac/error.hpp>
#include <isaac/lower/ptxas.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <regex>
#include <sys/wait.h>

namespace isaac::lower {

namespace {

// $ISAAC_PTXAS, else ptxas on PATH, else the toolkit's default location.
const std::string& ptxas_command() {
  static const std::string command = [] {
    const char* env = std::getenv("ISAAC_PTXAS");
    if (env && *env) return std::string(env);
    if (std::system("command -v ptxas >/dev/null 2>&1") == 0) return std::string("ptxas");
    if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return std::string("/usr/local/cuda/bin/ptxas");
    return std::string("ptxas");
  }();
  return command;
}

// Runs a shell command, returning its exit status and its combined output.
int run(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw Error("cannot run '" + command + "'");
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int capture(const std::string& text, const std::regex& pattern) {
  std::smatch m;
  return std::regex_search(text, m, pattern) ? std::stoi(m[1]) : 0;
}

}  // namespace

bool ptxas_available() {
  static const bool available = [] {
    std::string out;
    return run(ptxas_command() + " --version", out) == 0;
  }();
  return available;
}

PtxasReport run_ptxas(const std::string& ptx, const Target& target, const std::string& kernel,
                      std::vector<char>* cubin) {
  auto dir = std::filesystem::temp_directory_path();
  std::string stem = "isaac-" + std::to_string(std::random_device{}()) + "-" + std::to_string(::getpid());
  auto ptx_path = dir / (stem + ".ptx");
  auto out_path = dir / (stem + ".cubin");
  std::ofstream(ptx_path) << ptx;
  PtxasReport report;
  // PTX that uses sm_90a's instructions (wgmma) says so in its .target and needs that -arch.
  Target arch = target;
  if (arch.sm == 90 && ptx.find(".target sm_90a") != std::string::npos) arch.arch_specific = true;
  int status = run(ptxas_command() + " -v -arch=" + arch.name() + " -o " + out_path.string() + " " + ptx_path.string(),
                   report.log);
  std::filesystem::remove(ptx_path);
  if (cubin && status == 0) {
    std::ifstream in(out_path, std::ios::binary);
    cubin->assign(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::remove(out_path);
  if (status == 127 || (report.log.find("not found") != std::string::npos && status != 0 && report.log.size() < 200))
    throw Error("cannot run ptxas ('" + ptxas_command() + "'): put the CUDA toolkit's bin on PATH or set ISAAC_PTXAS");
  report.ok = status == 0;
  // ptxas -v prints one block per function; keep the block of the requested kernel.
  std::string block = report.log;
  std::string header = "Compiling entry function '" + kernel;
  if (auto at = report.log.find(kernel.empty() ? std::string("Compiling entry function '") : header + "'");
      at != std::string::npos) {
    auto next = report.log.find("Compiling entry function", at + 1);
    block = report.log.substr(at, next == std::string::npos ? std::string::npos : next - at);
  }
  report.registers = capture(block, std::regex(R"(Used (\d+) registers)"));
  report.stack_bytes = capture(block, std::regex(R"((\d+) bytes stack frame)"));
  report.spill_stores = capture(block, std::regex(R"((\d+) bytes spill stores)"));
  report.spill_loads = capture(block, std::regex(R"((\d+) bytes spill loads)"));
  report.shared_bytes = capture(block, std::regex(R"((\d+) bytes smem)"));
  return report;
}

std::string assemble(const std::string& ptx, const Target& target, std::vector<char>& cubin) {
  cubin.clear();
  if (!ptxas_available()) return {};
  try {
    const PtxasReport report = run_ptxas(ptx, target, {}, &cubin);
    if (report.ok) return {};
    cubin.clear();
    return "ptxas: " + report.log;
  } catch (const std::exception& e) {
    cubin.clear();
    return std::string("ptxas: ") + e.what();
  }
}

}  // namespace isaac::lower
