// isaac-tune export (issue 8): GEMM kernels compiled ahead of time into one header.
//
//   isaac-tune export kernels.spec --out kernels.hpp [--namespace NAME] [--sm 90] [--gpu [--top K]]
//
// The spec lists, one per line, a function name of the user's, a dtype, a layout and either an exact
// shape or "generic" (docs/aot.md has the grammar). Each entry's parameters are fixed in the spec, or
// chosen here: with --gpu by choose_gemm (model + top-k re-benchmark, or the tuning database's
// decision); without a GPU by the model's top-1 for --device/--sm, else by heuristic_gemm. The header
// then holds the PTX (and a cubin where ptxas is installed), the parameters, and launch functions
// that check the shape, pick the kernel and launch it exactly as CompiledGemm::run does.
#include "export.hpp"
#include "files.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tuning.hpp>
#include <isaac/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

namespace isaac::tune::cli {

namespace {

struct ExportFlags {
  std::string spec, out, name_space = "isaac_aot", sm, device = "NVIDIA H100 80GB HBM3";
  int sm_count = 132, top = 10;
  bool gpu = false, no_cubin = false;
};

// One line of the spec.
struct Entry {
  std::string where;  // "spec:line", for messages
  std::string function;
  ir::DType dtype = ir::DType::f32;
  bool a_trans = false, b_trans = false;
  bool generic = false;
  ir::Gemm problem;  // exact entries: the shape (and leading dimensions) to choose parameters for
  std::optional<std::string> params;
  lower::SplitMode mode = lower::SplitMode::atomic;
};

std::string layout_name(bool a_trans, bool b_trans) { return {a_trans ? 'T' : 'N', b_trans ? 'T' : 'N'}; }

// ---- the spec ------------------------------------------------------------------------------------

std::int64_t parse_count(const std::string& token, const std::string& where, const char* what) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || end != token.data() + token.size() || value < 0)
    throw InvalidArgument(fmt::format("{}: {} '{}' is not a non-negative integer", where, what, token));
  return value;
}

Entry parse_line(const std::vector<std::string>& tokens, const std::string& where) {
  const std::string usage = "expected: FUNCTION DTYPE LAYOUT (M N K | generic) [lda=.. ldb=.. ldc=..] "
                            "[params=ML=..,NL=..,...] [split=atomic|deterministic]";
  if (tokens.size() < 4) throw InvalidArgument(fmt::format("{}: too few fields; {}", where, usage));
  Entry e;
  e.where = where;
  e.function = tokens[0];
  try {
    e.dtype = ir::parse_dtype(tokens[1]);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(fmt::format("{}: {}", where, error.what()));
  }
  const std::string& layout = tokens[2];
  if (layout.size() != 2 || layout.find_first_not_of("NT") != std::string::npos)
    throw InvalidArgument(fmt::format("{}: layout '{}': use NN, NT, TN or TT (BLAS transposition flags of A and B)",
                                      where, layout));
  e.a_trans = layout[0] == 'T', e.b_trans = layout[1] == 'T';
  size_t next = 3;
  if (tokens[3] == "generic") {
    e.generic = true;
    next = 4;
  } else {
    if (tokens.size() < 6) throw InvalidArgument(fmt::format("{}: a shape needs M N K; {}", where, usage));
    e.problem = ir::dense_gemm(e.dtype, parse_count(tokens[3], where, "M"), parse_count(tokens[4], where, "N"),
                               parse_count(tokens[5], where, "K"), e.a_trans, e.b_trans);
    next = 6;
  }
  std::set<std::string> seen;
  for (size_t i = next; i < tokens.size(); ++i) {
    const auto eq = tokens[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidArgument(fmt::format("{}: '{}' is not KEY=VALUE; {}", where, tokens[i], usage));
    const std::string key = tokens[i].substr(0, eq), value = tokens[i].substr(eq + 1);
    if (!seen.insert(key).second) throw InvalidArgument(fmt::format("{}: {} is given twice", where, key));
    if (key == "params") {
      e.params = value;
    } else if (key == "split") {
      try {
        e.mode = lower::parse_split_mode(value);
      } catch (const InvalidArgument& error) {
        throw InvalidArgument(fmt::format("{}: split={}: {}", where, value, error.what()));
      }
    } else if (key == "lda" || key == "ldb" || key == "ldc") {
      if (e.generic)
        throw InvalidArgument(fmt::format("{}: {} belongs to an exact shape; a generic entry takes every leading "
                                          "dimension its loads allow",
                                          where, key));
      const std::int64_t ld = parse_count(value, where, key.c_str());
      const std::int64_t rows = key == "lda" ? (e.a_trans ? e.problem.k : e.problem.m)
                                : key == "ldb" ? (e.b_trans ? e.problem.n : e.problem.k)
                                               : e.problem.m;
      if (ld < std::max<std::int64_t>(rows, 1))
        throw InvalidArgument(fmt::format("{}: {}={} is smaller than the {} rows of the operand as stored", where,
                                          key, ld, rows));
      (key == "lda" ? e.problem.lda : key == "ldb" ? e.problem.ldb : e.problem.ldc) = ld;
    } else {
      throw InvalidArgument(fmt::format("{}: unknown key '{}': use lda, ldb, ldc, params or split", where, key));
    }
  }
  return e;
}

// Names the header defines itself in the user's namespace, which a function may not take.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      "stream_t", "context_t", "device_t", "device_ptr", "cuda_result", "status", "to_string", "last_error",
      "driver_api", "driver", "kernel_info", "kernels", "kernel_count", "target_arch", "detail",
      // C++ keywords and alternative tokens
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return names;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// C++ reserves identifiers with a double underscore, or an underscore and a capital letter first.
bool reserved_identifier(const std::string& s) {
  return s.find("__") != std::string::npos || (s.size() > 1 && s[0] == '_' && std::isupper(static_cast<unsigned char>(s[1])));
}

void check_name(const std::string& name, const std::string& where, const char* what) {
  if (!is_identifier(name) || reserved_identifier(name) || reserved_names().count(name))
    throw InvalidArgument(fmt::format("{}: {} '{}' cannot be a C++ name in the header: use letters, digits and "
                                      "underscores, not a keyword, not one of the header's own names ({})",
                                      where, what, name, "stream_t, status, driver, kernels, detail, ..."));
}

// Every check that needs the whole spec: names, one dtype/layout/split per function, no shape twice.
void check_spec(const std::vector<Entry>& entries, const std::string& path) {
  if (entries.empty()) throw InvalidArgument(fmt::format("{}: no entries: list at least one GEMM", path));
  std::map<std::string, const Entry*> first;
  std::map<std::string, std::string> generated;  // every name the header defines -> its function
  for (const Entry& e : entries) {
    check_name(e.function, e.where, "function name");
    auto [it, inserted] = first.emplace(e.function, &e);
    const Entry& f = *it->second;
    if (inserted) {
      for (const std::string& name : {e.function, e.function + "_select", e.function + "_workspace_bytes"}) {
        if (reserved_names().count(name) || !generated.emplace(name, e.function).second)
          throw InvalidArgument(fmt::format("{}: function {} would define {}, which {} already defines", e.where,
                                            e.function, name,
                                            reserved_names().count(name) ? "the header" : "function " + generated[name]));
      }
      continue;
    }
    if (f.dtype != e.dtype || f.a_trans != e.a_trans || f.b_trans != e.b_trans || f.mode != e.mode)
      throw InvalidArgument(fmt::format(
          "{}: function {} is {} {} split={} here but {} {} split={} at {}: the entries of one function share their "
          "dtype, layout and split (use another function name)",
          e.where, e.function, ir::name(e.dtype), layout_name(e.a_trans, e.b_trans), lower::name(e.mode),
          ir::name(f.dtype), layout_name(f.a_trans, f.b_trans), lower::name(f.mode), f.where));
  }
  for (size_t i = 0; i < entries.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const Entry &a = entries[j], &b = entries[i];
      if (a.function == b.function && !a.generic && !b.generic && a.problem.m == b.problem.m &&
          a.problem.n == b.problem.n && a.problem.k == b.problem.k)
        throw InvalidArgument(fmt::format("{}: {} {}x{}x{} is already exported at {}: the second would never run",
                                          b.where, b.function, b.problem.m, b.problem.n, b.problem.k, a.where));
    }
}

std::vector<Entry> read_spec(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw InvalidArgument(fmt::format("the export spec {} is a directory: give the spec file", path));
  std::ifstream in(path);
  if (!in) throw InvalidArgument(fmt::format("cannot read the export spec {}", path));
  std::vector<Entry> entries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    if (!tokens.empty()) entries.push_back(parse_line(tokens, fmt::format("{}:{}", path, number)));
  }
  check_spec(entries, path);
  return entries;
}

// ---- choosing parameters -------------------------------------------------------------------------

// What legality needs about an architecture that no GPU is there to report: the opt-in shared
// memory per block of each compute capability (CUDA C Programming Guide, "Compute Capabilities").
lower::DeviceLimits limits_for(int sm) {
  lower::DeviceLimits limits;
  limits.sm = sm;
  limits.max_shared_per_block = sm >= 90 ? 227 * 1024
                                : sm == 80 || sm == 87 ? 163 * 1024
                                : sm == 86 || sm == 89 ? 99 * 1024
                                : sm == 75 ? 64 * 1024
                                           : 96 * 1024;
  return limits;
}

// A generic entry serves every shape: its parameters are chosen for a large square problem whose
// operands are only element-aligned, so that they use scalar loads (VA = VB = 1), and without a K
// split (KG = 1), so that nothing depends on the shape but the checks every kernel makes anyway.
ir::Gemm representative(const Entry& e) {
  ir::Gemm g = ir::dense_gemm(e.dtype, 1024, 1024, 1024, e.a_trans, e.b_trans);
  g.align_a = g.align_b = g.align_c = static_cast<int>(ir::size_of(e.dtype));
  return g;
}

struct Choice {
  lower::GemmParams params;
  std::string how;
};

struct Chooser {
  const ExportFlags& flags;
  lower::DeviceLimits limits;
  std::string device;  // the GPU's name with --gpu, else --device

  Choice fixed(const Entry& e) const {
    lower::GemmParams p;
    try {
      p = lower::parse_gemm_params(*e.params);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(fmt::format("{}: params={}: {}", e.where, *e.params, error.what()));
    }
    auto check = [&](const lower::GemmParams& q) {
      return e.generic ? lower::check_gemm_params(e.dtype, e.a_trans, e.b_trans, q, limits)
                       : lower::check_gemm(e.problem, q, limits);
    };
    std::string how = "fixed in the spec", no_layout;
    if (p.la == 0 || p.lb == 0) {
      // The widest load layouts first (fit_load_layouts), then narrower ones until the set is legal.
      const lower::GemmParams given = p;
      fit_load_layouts(e.generic ? representative(e) : e.problem, p);
      const int widest_a = given.la ? given.la : p.la, widest_b = given.lb ? given.lb : p.lb;
      bool found = false;
      for (int la = widest_a; la >= 1 && !found; la = given.la ? 0 : la / 2)
        for (int lb = widest_b; lb >= 1 && !found; lb = given.lb ? 0 : lb / 2) {
          lower::GemmParams q = p;
          q.la = la, q.lb = lb;
          if (check(q)) p = q, found = true;
        }
      if (!found) {  // reported below with the widest layouts
        p.la = widest_a, p.lb = widest_b;
        no_layout = " with any LA and LB";
      }
      how += " (LA/LB fitted)";
    }
    const lower::Legality legal = check(p);
    if (!legal)
      throw InvalidArgument(fmt::format("{}: {} cannot run {}{}: {}", e.where, p.str(),
                                        e.generic ? "at all for " + std::string(ir::name(e.dtype)) + " " +
                                                        layout_name(e.a_trans, e.b_trans)
                                                  : ir::to_string(e.problem),
                                        no_layout, legal.reason));
    return {p, how};
  }

  std::optional<ModelChoice> model(ir::DType dtype) const {
    return find_model("gemm", dtype, device, limits.sm);
  }

  std::string no_model(ir::DType dtype) const {
    return fmt::format("no GEMM {} performance model for {} (sm_{}); export with --gpu to tune, or train one with "
                       "isaac-tune train",
                       ir::name(dtype), device, limits.sm);
  }

  Choice exact(const Entry& e) const {
    if (flags.gpu) {
      TuningOptions options;
      options.top_k = flags.top;
      options.mode = e.mode;
      const GemmDecision d = choose_gemm(e.problem, options);
      return {d.params, fmt::format("tuned on {}: {}{}", device, d.how,
                                    d.measured_ms >= 0 ? fmt::format(", {:.4f} ms", d.measured_ms) : "")};
    }
    if (const auto m = model(e.dtype)) {
      const auto ranked = rank_gemm_space(e.problem, limits, m->model, 1);
      if (ranked.empty()) throw InvalidArgument(fmt::format("no legal parameters for {}", ir::to_string(e.problem)));
      return {ranked[0].params, fmt::format("model top-1 without a GPU ({}, predicted {:.2f} TFLOP/s, not measured)",
                                            m->source, ranked[0].predicted_tflops)};
    }
    return {heuristic_gemm(e.problem, limits), "heuristic: " + no_model(e.dtype)};
  }

  Choice generic(const Entry& e) const {
    const ir::Gemm g = representative(e);
    const std::string restriction = "generic: chosen for 1024x1024x1024 with VA=VB=1 and KG=1, so that it takes any shape";
    if (const auto m = model(e.dtype)) {
      for (const Ranked& r : rank_gemm_space(g, limits, m->model, 1000))
        if (r.params.kg == 1)
          return {r.params, fmt::format("model top-1 without a GPU ({}; {}, not measured)", restriction, m->source)};
    }
    lower::GemmParams p = heuristic_gemm(g, limits);
    p.kg = 1;
    return {p, fmt::format("heuristic ({}): {}", restriction, no_model(e.dtype))};
  }

  Choice choose(const Entry& e) const {
    if (e.params) return fixed(e);
    try {
      return e.generic ? generic(e) : exact(e);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(fmt::format("{}: {}", e.where, error.what()));
    }
  }
};

// ---- compiling ----------------------------------------------------------------------------------

struct Kernel {
  ir::Gemm problem;  // one problem it serves (the code depends only on dtype, layout, params and split)
  lower::GemmParams params;
  lower::SplitMode mode;
  std::vector<std::string> how;  // each distinct way an entry chose it
  lower::GemmKernel code;
  int registers = -1, spill_bytes = -1;
};

void compile(Kernel& k, const lower::Target& target, bool cubin) {
  // The generated launcher passes no tensor maps.
  if (k.params.tma)
    throw InvalidArgument(fmt::format("{}: TMA=1 kernels cannot be exported yet (their launch builds tensor maps); use "
                                      "TMA=0",
                                      k.params.str()));
  k.code = lower::emit_gemm(k.problem, k.params, target, k.mode);
  if (!cubin) return;
  const lower::PtxasReport report = lower::run_ptxas(k.code.ptx, target, k.code.main_name, &k.code.cubin);
  if (!report.ok)
    throw Error(fmt::format("ptxas rejected the {} kernel {} for {}:\n{}", ir::to_string(k.problem), k.params.str(),
                            target.name(), report.log));
  k.registers = report.registers;
  k.spill_bytes = report.spill_stores + report.spill_loads;
}

// ---- the header ---------------------------------------------------------------------------------

// Before the user's namespace: the includes and the driver's handle types.
constexpr std::string_view header_globals = R"isaac_rt(
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>
#ifndef ISAAC_AOT_LINK_LIBCUDA
#include <dlfcn.h>
#endif

// The driver's handle types, declared as cuda.h declares them: the header needs no CUDA toolkit, and
// a CUstream or cudaStream_t from cuda.h or cuda_runtime.h is a stream_t as it is.
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;

#ifdef ISAAC_AOT_LINK_LIBCUDA
// Linked with -lcuda: the one driver symbol taken by name (it hands out every other entry point),
// declared under a name of its own so that it cannot clash with cuda.h's declaration.
extern "C" int isaac_aot_cuGetProcAddress_v2(const char* symbol, void** function, int cuda_version,
                                             unsigned long long flags, int* symbol_status) __asm__("cuGetProcAddress_v2");
#endif
)isaac_rt";

// Inside the namespace, before the kernels: the public types.
constexpr std::string_view header_types = R"isaac_rt(
using stream_t = CUstream_st*;          // a CUstream or cudaStream_t; nullptr is the legacy default stream
using context_t = CUctx_st*;            // CUcontext
using device_t = int;                   // CUdevice
using device_ptr = unsigned long long;  // CUdeviceptr
using cuda_result = int;                // CUresult; 0 is CUDA_SUCCESS

enum class status : int {
  success = 0,
  invalid_argument,  // a size, leading dimension, pointer or workspace that no GEMM can take
  not_exported,      // no kernel of this header takes the shape, leading dimensions and alignment
  no_driver,         // libcuda cannot be loaded, is older than CUDA 12.0, or cuInit failed
  no_context,        // no CUDA context is current on the calling thread
  load_failed,       // the driver refused the kernel on this GPU (architecture, shared memory)
  launch_failed,     // cuLaunchKernel failed
};

inline const char* to_string(status s) noexcept {
  switch (s) {
    case status::success: return "success";
    case status::invalid_argument: return "invalid argument";
    case status::not_exported: return "no exported kernel for this shape";
    case status::no_driver: return "no CUDA driver";
    case status::no_context: return "no current CUDA context";
    case status::load_failed: return "kernel load failed";
    case status::launch_failed: return "kernel launch failed";
  }
  return "unknown status";
}

namespace detail {
constexpr std::size_t error_capacity = 4096;
inline char* error_text() noexcept {
  thread_local char text[error_capacity] = "";
  return text;
}
}  // namespace detail

// Why the last call that failed on this thread failed: the function, the argument or the driver's
// error, and what is allowed. Empty until a call fails; a call that succeeds leaves it as it was.
inline const char* last_error() noexcept { return detail::error_text(); }

// The driver functions the header loads (cuGetProcAddress at the CUDA 12.0 ABI). A program with no
// other access to the driver may use them too, e.g. to allocate and copy its operands.
struct driver_api {
  cuda_result (*init)(unsigned flags);                                     // cuInit
  cuda_result (*get_error_name)(cuda_result, const char**);                // cuGetErrorName
  cuda_result (*get_error_string)(cuda_result, const char**);              // cuGetErrorString
  cuda_result (*device_get_count)(int*);                                   // cuDeviceGetCount
  cuda_result (*device_get)(device_t*, int ordinal);                       // cuDeviceGet
  cuda_result (*device_get_name)(char*, int length, device_t);             // cuDeviceGetName
  cuda_result (*device_get_attribute)(int*, int attribute, device_t);      // cuDeviceGetAttribute
  cuda_result (*primary_ctx_retain)(context_t*, device_t);                 // cuDevicePrimaryCtxRetain
  cuda_result (*primary_ctx_release)(device_t);                            // cuDevicePrimaryCtxRelease
  cuda_result (*ctx_set_current)(context_t);                               // cuCtxSetCurrent
  cuda_result (*ctx_get_current)(context_t*);                              // cuCtxGetCurrent
  cuda_result (*ctx_get_id)(context_t, unsigned long long*);               // cuCtxGetId
  cuda_result (*ctx_synchronize)();                                        // cuCtxSynchronize
  cuda_result (*stream_synchronize)(stream_t);                             // cuStreamSynchronize
  cuda_result (*mem_alloc)(device_ptr*, std::size_t);                      // cuMemAlloc
  cuda_result (*mem_free)(device_ptr);                                     // cuMemFree
  cuda_result (*memcpy_htod)(device_ptr, const void*, std::size_t);        // cuMemcpyHtoD
  cuda_result (*memcpy_dtoh)(void*, device_ptr, std::size_t);              // cuMemcpyDtoH
  cuda_result (*memset_d8)(device_ptr, unsigned char, std::size_t);        // cuMemsetD8
  cuda_result (*module_load_data)(CUmod_st**, const void*);                // cuModuleLoadData
  cuda_result (*module_load_data_ex)(CUmod_st**, const void*, unsigned, int*, void**);  // cuModuleLoadDataEx
  cuda_result (*module_unload)(CUmod_st*);                                 // cuModuleUnload
  cuda_result (*module_get_function)(CUfunc_st**, CUmod_st*, const char*); // cuModuleGetFunction
  cuda_result (*func_set_attribute)(CUfunc_st*, int attribute, int value); // cuFuncSetAttribute
  cuda_result (*launch_kernel)(CUfunc_st*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned shared_bytes, stream_t, void** arguments, void** extra);  // cuLaunchKernel
};

// One compiled kernel: its parameters (isaac's GEMM template, lower/gemm.hpp) and launch geometry.
struct kernel_info {
  const char* params;     // isaac's text form, "ML=64,NL=64,..."
  const char* chosen_by;  // how the export chose the parameters
  const char* dtype;      // "f16", "bf16", "f32" or "f64"
  bool a_trans, b_trans;  // the layout, as BLAS transposition flags
  bool deterministic;     // with KG > 1: partial sums in a workspace, reduced by a second kernel
  int ml, nl, ms, ns, u, ks, kl, kg, va, vb, la, lb, db, sw, acc32, tc;
  int elem_bytes;
  int threads;            // block of the main kernel
  int shared_bytes;       // its dynamic shared memory
  int helper_threads;     // block of the prepare or reduce kernel
  const char* main_name;
  const char* prepare_name;  // "" unless KG > 1 with atomics: scales C by beta before the main kernel
  const char* reduce_name;   // "" unless KG > 1 deterministic: sums the workspace into C
  int registers;             // per thread, as ptxas reported them for the target; -1 without a cubin
  int spill_bytes;           // spill stores + loads; -1 without a cubin
  const char* const* ptx;    // the module's PTX, in pieces to concatenate
  int ptx_pieces;
  const unsigned char* cubin;  // the module assembled for target_arch; nullptr without ptxas
  std::size_t cubin_bytes;
};
)isaac_rt";

// Inside the namespace, after the kernels: the driver, the module cache, the checks and the launch.
constexpr std::string_view header_runtime = R"isaac_rt(
namespace detail {

constexpr int driver_abi = 12000;  // the CUDA version whose ABI driver_api declares

// Sets the calling thread's error message and returns `s`.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline status fail(status s, const char* format, ...) noexcept {
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(error_text(), error_capacity, format, args);
  va_end(args);
  return s;
}

// Appends to the calling thread's error message.
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline void append(const char* format, ...) noexcept {
  char* text = error_text();
  const std::size_t used = std::strlen(text);
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(text + used, error_capacity - used, format, args);
  va_end(args);
}

struct loaded_driver {
  driver_api api{};
  char error[512] = "";  // empty when the driver is usable
};

// Loads the driver once per process (a function-local static is initialised once, thread-safely);
// a failure is kept, to be reported by every call.
inline const loaded_driver& load_driver() noexcept {
  static const loaded_driver loaded = [] {
    loaded_driver d;
    using get_proc_t = int (*)(const char*, void**, int, unsigned long long, int*);
#ifdef ISAAC_AOT_LINK_LIBCUDA
    const get_proc_t get_proc = &isaac_aot_cuGetProcAddress_v2;
#else
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      std::snprintf(d.error, sizeof d.error,
                    "no CUDA driver found: %s (install the NVIDIA driver, or put libcuda.so.1 on the loader path)",
                    why ? why : "libcuda.so.1 cannot be loaded");
      library = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);  // the unversioned name of a development install
    }
    if (!library) return d;
    d.error[0] = '\0';
    const auto get_proc = reinterpret_cast<get_proc_t>(dlsym(library, "cuGetProcAddress_v2"));
    if (!get_proc) {
      std::snprintf(d.error, sizeof d.error,
                    "no usable CUDA driver: libcuda has no cuGetProcAddress_v2 (the driver is older than CUDA 12.0, "
                    "which this header needs)");
      return d;
    }
#endif
    bool complete = true;
    auto get = [&](const char* name, auto& slot) {
      void* function = nullptr;
      int found = 0;
      if (complete && (get_proc(name, &function, driver_abi, 0, &found) != 0 || !function)) {
        std::snprintf(d.error, sizeof d.error,
                      "no usable CUDA driver: it lacks %s at the CUDA 12.0 ABI (update the NVIDIA driver)", name);
        complete = false;
      }
      if (complete) slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(function);
    };
    get("cuInit", d.api.init);
    get("cuGetErrorName", d.api.get_error_name);
    get("cuGetErrorString", d.api.get_error_string);
    get("cuDeviceGetCount", d.api.device_get_count);
    get("cuDeviceGet", d.api.device_get);
    get("cuDeviceGetName", d.api.device_get_name);
    get("cuDeviceGetAttribute", d.api.device_get_attribute);
    get("cuDevicePrimaryCtxRetain", d.api.primary_ctx_retain);
    get("cuDevicePrimaryCtxRelease", d.api.primary_ctx_release);
    get("cuCtxSetCurrent", d.api.ctx_set_current);
    get("cuCtxGetCurrent", d.api.ctx_get_current);
    get("cuCtxGetId", d.api.ctx_get_id);
    get("cuCtxSynchronize", d.api.ctx_synchronize);
    get("cuStreamSynchronize", d.api.stream_synchronize);
    get("cuMemAlloc", d.api.mem_alloc);
    get("cuMemFree", d.api.mem_free);
    get("cuMemcpyHtoD", d.api.memcpy_htod);
    get("cuMemcpyDtoH", d.api.memcpy_dtoh);
    get("cuMemsetD8", d.api.memset_d8);
    get("cuModuleLoadData", d.api.module_load_data);
    get("cuModuleLoadDataEx", d.api.module_load_data_ex);
    get("cuModuleUnload", d.api.module_unload);
    get("cuModuleGetFunction", d.api.module_get_function);
    get("cuFuncSetAttribute", d.api.func_set_attribute);
    get("cuLaunchKernel", d.api.launch_kernel);
    if (!complete) return d;
    if (const cuda_result result = d.api.init(0); result != 0) {
      const char* name = nullptr;
      const char* text = nullptr;
      d.api.get_error_name(result, &name);
      d.api.get_error_string(result, &text);
      std::snprintf(d.error, sizeof d.error,
                    "the CUDA driver is installed but cuInit failed: %s: %s (is a GPU visible to this process?)",
                    name ? name : "unknown error", text ? text : "no message");
    }
    return d;
  }();
  return loaded;
}

inline const char* result_name(const driver_api& cu, cuda_result result) noexcept {
  const char* name = nullptr;
  return cu.get_error_name(result, &name) == 0 && name ? name : "an unknown CUDA error";
}

}  // namespace detail

// The loaded driver, or nullptr when there is none (last_error() says why).
inline const driver_api* driver() noexcept {
  const detail::loaded_driver& d = detail::load_driver();
  if (d.error[0]) {
    detail::fail(status::no_driver, "%s", d.error);
    return nullptr;
  }
  return &d.api;
}

namespace detail {

// A GEMM call's sizes and operands, BLAS column-major.
struct gemm_call {
  std::int64_t m, n, k, lda, ldb, ldc;
  const void* a;
  const void* b;
  void* c;
};

struct entry {
  int kernel;            // index into kernels
  std::int64_t m, n, k;  // the shape it was exported for; m < 0: any shape (a generic entry)
};

struct function_info {
  const char* name;
  const char* dtype;
  bool a_trans, b_trans;
  const entry* entries;  // exact shapes first, then the generic entries
  int entry_count;
};

constexpr std::int64_t int32_max = 2147483647;

inline std::size_t accumulator_bytes(const kernel_info& k) noexcept {
  return k.elem_bytes == 8 ? 8 : k.elem_bytes == 2 && !k.acc32 ? 2 : 4;
}

// The workspace kernel k needs for an M x N result (KG > 1 deterministic only).
inline std::size_t workspace_need(const kernel_info& k, std::int64_t m, std::int64_t n) noexcept {
  if (!k.deterministic || k.kg == 1 || m <= 0 || n <= 0) return 0;
  return accumulator_bytes(k) * std::size_t(m) * std::size_t(n) * std::size_t(k.kg);
}

// Whether kernel k can compute the call (the checks of isaac's check_gemm that depend on the shape and
// the operands); if not, why, into `why`.
inline bool accepts(const kernel_info& k, const gemm_call& x, char* why, std::size_t size) noexcept {
  const std::int64_t k_tiles = (x.k + k.u - 1) / k.u;
  if (k.kg > 1 && k.kg > k_tiles) {
    std::snprintf(why, size, "KG=%d splits K=%lld into more pieces than its %lld tiles of U=%d", k.kg,
                  static_cast<long long>(x.k), static_cast<long long>(k_tiles), k.u);
    return false;
  }
  struct operand {
    char name;
    int vector;
    std::int64_t contiguous;
    char extent;
    std::int64_t ld;
    const void* pointer;
  };
  const operand operands[] = {{'A', k.va, k.a_trans ? x.k : x.m, k.a_trans ? 'K' : 'M', x.lda, x.a},
                              {'B', k.vb, k.b_trans ? x.n : x.k, k.b_trans ? 'N' : 'K', x.ldb, x.b}};
  for (const operand& o : operands) {
    if (o.vector == 1) continue;
    const int bytes = o.vector * k.elem_bytes;
    if (o.contiguous % o.vector) {
      std::snprintf(why, size, "V%c=%d vector loads need %c=%lld (contiguous in %c) to be a multiple of %d", o.name,
                    o.vector, o.extent, static_cast<long long>(o.contiguous), o.name, o.vector);
      return false;
    }
    if (o.ld % o.vector) {
      std::snprintf(why, size, "V%c=%d vector loads need ld%c=%lld to be a multiple of %d", o.name, o.vector,
                    o.name + 32, static_cast<long long>(o.ld), o.vector);
      return false;
    }
    if (reinterpret_cast<std::uintptr_t>(o.pointer) % bytes) {
      std::snprintf(why, size, "V%c=%d vector loads need %c (%p) aligned to %d bytes", o.name, o.vector, o.name,
                    o.pointer, bytes);
      return false;
    }
  }
  const std::int64_t tiles = ((x.m + k.ml - 1) / k.ml) * ((x.n + k.nl - 1) / k.nl);
  if (tiles > int32_max) {
    std::snprintf(why, size, "%lld tiles of %dx%d exceed the grid's limit of 2^31 - 1 blocks",
                  static_cast<long long>(tiles), k.ml, k.nl);
    return false;
  }
  if (k.kg > 1 && (x.m * x.n + 255) / 256 > int32_max) {
    std::snprintf(why, size, "M x N = %lld exceeds what the KG > 1 helper kernel's grid covers",
                  static_cast<long long>(x.m * x.n));
    return false;
  }
  if (k.deterministic && k.kg > 1 &&
      std::uint64_t(x.m) * std::uint64_t(x.n) > ~std::uint64_t(0) / (accumulator_bytes(k) * std::uint64_t(k.kg))) {
    std::snprintf(why, size, "the workspace of M x N x KG partial sums exceeds 2^64 bytes");
    return false;
  }
  return true;
}

inline bool shape_matches(const entry& e, const gemm_call& x) noexcept {
  return e.m < 0 || (e.m == x.m && e.n == x.n && e.k == x.k);
}

// The kernel that runs the call: the first entry (exact shapes first) whose shape matches and whose
// kernel accepts the operands. Null when none does, with the reasons in last_error().
inline const kernel_info* select(const function_info& f, const gemm_call& x, int* index) noexcept {
  char why[256];
  for (int i = 0; i < f.entry_count; ++i) {
    const entry& e = f.entries[i];
    if (shape_matches(e, x) && accepts(kernels[e.kernel], x, why, sizeof why)) {
      if (index) *index = e.kernel;
      return &kernels[e.kernel];
    }
  }
  fail(status::not_exported, "%s (%s %c%c): no exported kernel takes M=%lld N=%lld K=%lld with lda=%lld ldb=%lld.",
       f.name, f.dtype, f.a_trans ? 'T' : 'N', f.b_trans ? 'T' : 'N', static_cast<long long>(x.m),
       static_cast<long long>(x.n), static_cast<long long>(x.k), static_cast<long long>(x.lda),
       static_cast<long long>(x.ldb));
  bool generic = false, listed = false;
  for (int i = 0; i < f.entry_count; ++i) {
    const entry& e = f.entries[i];
    generic = generic || e.m < 0;
    if (!shape_matches(e, x)) {
      append("%s %lldx%lldx%lld", listed ? "," : " Exported shapes (M x N x K):", static_cast<long long>(e.m),
             static_cast<long long>(e.n), static_cast<long long>(e.k));
      listed = true;
    }
  }
  if (listed) append(".");
  for (int i = 0; i < f.entry_count; ++i) {
    const entry& e = f.entries[i];
    if (!shape_matches(e, x)) continue;
    accepts(kernels[e.kernel], x, why, sizeof why);
    append(" The %s kernel %d (%s) cannot: %s.", e.m < 0 ? "generic" : "exact-shape", e.kernel,
           kernels[e.kernel].params, why);
  }
  if (!generic) append(" There is no generic entry for other shapes.");
  append(" Add the shape, or a generic entry, to the spec and export again (isaac-tune export).");
  return nullptr;
}

// The workspace the call may need: the most that any kernel of the function for this shape needs.
inline std::size_t workspace_bytes(const function_info& f, std::int64_t m, std::int64_t n, std::int64_t k) noexcept {
  std::size_t most = 0;
  for (int i = 0; i < f.entry_count; ++i) {
    const entry& e = f.entries[i];
    const std::size_t need = workspace_need(kernels[e.kernel], m, n);
    if (shape_matches(e, {m, n, k, 0, 0, 0, nullptr, nullptr, nullptr}) && need > most) most = need;
  }
  return most;
}

struct loaded_kernel {
  CUfunc_st* main = nullptr;
  CUfunc_st* helper = nullptr;  // prepare or reduce
};

// A kernel is loaded into each context that calls it, once, and stays for the context's life.
// Contexts are told apart by their unique ID: a destroyed context's handle may come back.
struct context_kernels {
  unsigned long long id;
  loaded_kernel kernels[kernel_count];
};

inline status load_module(const driver_api& cu, const char* function, int index, loaded_kernel& slot) noexcept {
  const kernel_info& k = kernels[index];
  CUmod_st* module = nullptr;
  cuda_result cubin_result = 0;
  if (k.cubin) cubin_result = cu.module_load_data(&module, k.cubin);
  if (!module) {  // no cubin, or one for another architecture: the driver compiles the PTX
    std::string ptx;
    try {
      for (int i = 0; i < k.ptx_pieces; ++i) ptx += k.ptx[i];
    } catch (...) {
      return fail(status::load_failed, "%s: out of memory", function);
    }
    char log[2048] = "";
    int options[] = {5, 6};  // CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
    void* values[] = {log, reinterpret_cast<void*>(sizeof log)};
    if (const cuda_result result = cu.module_load_data_ex(&module, ptx.c_str(), 2, options, values); result != 0) {
      fail(status::load_failed, "%s: the driver cannot load kernel %d (%s) on this GPU: ", function, index, k.params);
      if (k.cubin) append("its %s cubin was refused (%s) and ", target_arch, result_name(cu, cubin_result));
      append("its %s PTX does not compile (%s): %s", target_arch, result_name(cu, result), log);
      return status::load_failed;
    }
  }
  loaded_kernel loaded;
  const char* helper = k.prepare_name[0] ? k.prepare_name : k.reduce_name;
  cuda_result result = cu.module_get_function(&loaded.main, module, k.main_name);
  if (result == 0 && helper[0]) result = cu.module_get_function(&loaded.helper, module, helper);
  if (result != 0) {
    cu.module_unload(module);
    return fail(status::load_failed, "%s: kernel %d's module lacks %s or %s: %s", function, index, k.main_name,
                helper[0] ? helper : "(no helper)", result_name(cu, result));
  }
  // Above 48 KB, dynamic shared memory needs an opt-in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  if (k.shared_bytes > 48 * 1024) {
    if ((result = cu.func_set_attribute(loaded.main, 8, k.shared_bytes)) != 0) {
      cu.module_unload(module);
      return fail(status::load_failed,
                  "%s: kernel %d (%s) needs %d bytes of shared memory per block, more than this GPU allows (%s)",
                  function, index, k.params, k.shared_bytes, result_name(cu, result));
    }
  }
  slot = loaded;
  return status::success;
}

// The driver and kernel `index` loaded into the calling thread's current context.
inline status acquire(const char* function, int index, const driver_api*& api, loaded_kernel& out) noexcept {
  const driver_api* cu = driver();
  if (!cu) return fail(status::no_driver, "%s: %s", function, load_driver().error);
  context_t context = nullptr;
  if (const cuda_result result = cu->ctx_get_current(&context); result != 0 || !context)
    return fail(status::no_context,
                "%s: no CUDA context is current on the calling thread (%s): make one current first, with "
                "cuCtxSetCurrent or any CUDA runtime call (cudaSetDevice, cudaFree(0))",
                function, result ? result_name(*cu, result) : "none");
  unsigned long long id = 0;
  if (const cuda_result result = cu->ctx_get_id(context, &id); result != 0)
    return fail(status::no_context, "%s: cuCtxGetId failed on the current context: %s", function,
                result_name(*cu, result));
  static std::mutex mutex;
  static std::vector<context_kernels> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  context_kernels* loaded = nullptr;
  for (context_kernels& c : contexts)
    if (c.id == id) loaded = &c;
  if (!loaded) {
    try {
      contexts.push_back(context_kernels{id, {}});
    } catch (...) {
      return fail(status::load_failed, "%s: out of memory", function);
    }
    loaded = &contexts.back();
  }
  loaded_kernel& slot = loaded->kernels[index];
  if (!slot.main)
    if (const status s = load_module(*cu, function, index, slot); s != status::success) return s;
  api = cu;
  out = slot;
  return status::success;
}

// Checks the call, picks its kernel and launches it as isaac's CompiledGemm::run does: the same
// arguments, grid, block and dynamic shared memory (lower/gemm.hpp documents the argument order).
inline status gemm(const function_info& f, stream_t stream, const gemm_call& x, void* alpha, void* beta,
                   void* workspace, std::size_t workspace_size) noexcept {
  if (x.m < 0 || x.n < 0 || x.k < 0)
    return fail(status::invalid_argument, "%s: M=%lld, N=%lld and K=%lld may not be negative", f.name,
                static_cast<long long>(x.m), static_cast<long long>(x.n), static_cast<long long>(x.k));
  if (x.m == 0 || x.n == 0) return status::success;  // an empty C: nothing to compute, as in BLAS
  if (x.m > int32_max || x.n > int32_max || x.k > int32_max)
    return fail(status::invalid_argument, "%s: M=%lld, N=%lld and K=%lld must each be below 2^31", f.name,
                static_cast<long long>(x.m), static_cast<long long>(x.n), static_cast<long long>(x.k));
  struct leading {
    char name;
    std::int64_t ld, rows;
    char extent;
  };
  const leading lds[] = {{'a', x.lda, f.a_trans ? x.k : x.m, f.a_trans ? 'K' : 'M'},
                         {'b', x.ldb, f.b_trans ? x.n : x.k, f.b_trans ? 'N' : 'K'},
                         {'c', x.ldc, x.m, 'M'}};
  for (const leading& l : lds)
    if (l.ld < (l.rows > 1 ? l.rows : 1))
      return fail(status::invalid_argument, "%s: ld%c=%lld must be at least %c=%lld (and at least 1): the rows of %c as stored",
                  f.name, l.name, static_cast<long long>(l.ld), l.extent, static_cast<long long>(l.rows), l.name - 32);
  if (!x.c || (x.k > 0 && (!x.a || !x.b)))
    return fail(status::invalid_argument, "%s: a null operand (C %p, A %p, B %p); only A and B may be null, when K = 0",
                f.name, x.c, x.a, x.b);
  int index = -1;
  const kernel_info* k = select(f, x, &index);
  if (!k) return status::not_exported;
  const std::size_t need = workspace_need(*k, x.m, x.n);
  if (need && (!workspace || workspace_size < need || reinterpret_cast<std::uintptr_t>(workspace) % 8))
    return fail(status::invalid_argument,
                "%s: kernel %d (%s) needs an 8-byte aligned workspace of %zu bytes for M=%lld N=%lld (%s_workspace_bytes "
                "tells); %zu bytes at %p were given",
                f.name, index, k->params, need, static_cast<long long>(x.m), static_cast<long long>(x.n), f.name,
                workspace_size, workspace);

  const driver_api* cu = nullptr;
  loaded_kernel functions;
  if (const status s = acquire(f.name, index, cu, functions); s != status::success) return s;

  std::int32_t m = static_cast<std::int32_t>(x.m), n = static_cast<std::int32_t>(x.n),
               kk = static_cast<std::int32_t>(x.k);
  std::int64_t lda = x.lda, ldb = x.ldb, ldc = x.ldc;
  std::int64_t stride = 0;  // one matrix: the batch strides are multiplied by batch index 0
  device_ptr c = reinterpret_cast<std::uintptr_t>(x.c), a = reinterpret_cast<std::uintptr_t>(x.a),
             b = reinterpret_cast<std::uintptr_t>(x.b), w = need ? reinterpret_cast<std::uintptr_t>(workspace) : 0;
  const unsigned tiles = static_cast<unsigned>(((x.m + k->ml - 1) / k->ml) * ((x.n + k->nl - 1) / k->nl));
  // lower::gemm_grid: prepare scales a chunk of 16 bytes down a column per thread, reduce one element.
  const long long chunk = 16 / k->elem_bytes;
  const unsigned prepare_blocks = static_cast<unsigned>(((x.m + chunk - 1) / chunk * x.n + 255) / 256);
  const unsigned reduce_blocks = static_cast<unsigned>((x.m * x.n + 255) / 256);
  const unsigned helper_threads = static_cast<unsigned>(k->helper_threads);
  auto launched = [&](cuda_result result, const char* name) {
    if (result == 0) return true;
    fail(status::launch_failed, "%s: cuLaunchKernel of %s (kernel %d, %s) failed: %s", f.name, name, index, k->params,
         result_name(*cu, result));
    return false;
  };
  if (k->prepare_name[0]) {
    void* args[] = {&c, beta, &m, &n, &ldc, &stride};
    if (!launched(cu->launch_kernel(functions.helper, prepare_blocks, 1, 1, helper_threads, 1, 1, 0, stream, args, nullptr),
                  k->prepare_name))
      return status::launch_failed;
  }
  void* args[] = {&c, &a, &b, &w, alpha, beta, &m, &n, &kk, &lda, &ldb, &ldc, &stride, &stride, &stride};
  if (!launched(cu->launch_kernel(functions.main, tiles, static_cast<unsigned>(k->kg), 1,
                                  static_cast<unsigned>(k->threads), 1, 1, static_cast<unsigned>(k->shared_bytes),
                                  stream, args, nullptr),
                k->main_name))
    return status::launch_failed;
  if (k->reduce_name[0]) {
    void* reduce_args[] = {&c, &w, alpha, beta, &m, &n, &ldc, &stride};
    if (!launched(cu->launch_kernel(functions.helper, reduce_blocks, 1, 1, helper_threads, 1, 1, 0, stream, reduce_args,
                                    nullptr),
                  k->reduce_name))
      return status::launch_failed;
  }
  return status::success;
}

}  // namespace detail
)isaac_rt";

std::string element_type(ir::DType t) {
  return t == ir::DType::f64 ? "double" : t == ir::DType::f32 ? "float" : "std::uint16_t";
}
// alpha and beta travel as the kernels declare them: f64 for f64 problems, f32 otherwise.
std::string scalar_type(ir::DType t) { return t == ir::DType::f64 ? "double" : "float"; }

// C++ string literal text (the "how" strings may hold quotes or backslashes).
std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

// The PTX as raw string literals of at most ~32 kB each, split after a newline: C++ compilers need
// only accept literals of 64 kB (GCC's -Wpedantic says so above that).
std::vector<std::string> ptx_pieces(const std::string& ptx) {
  const std::string delimiter = ")isaac_ptx\"";
  if (ptx.find(delimiter) != std::string::npos) throw Error("the PTX contains the raw-string delimiter " + delimiter);
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < ptx.size()) {
    size_t end = std::min(ptx.size(), start + 32000);
    if (end < ptx.size()) {
      const size_t newline = ptx.rfind('\n', end - 1);
      end = newline != std::string::npos && newline >= start ? newline + 1 : end;
    }
    pieces.push_back(ptx.substr(start, end - start));
    start = end;
  }
  return pieces;
}

struct Function {
  std::string name;
  const Entry* first;
  std::vector<std::pair<const Entry*, int>> entries;  // with their kernel index; exact shapes first
};

std::string shape_text(const Entry& e) {
  return e.generic ? std::string("any shape") : fmt::format("M={} N={} K={}", e.problem.m, e.problem.n, e.problem.k);
}

std::string write_header(const ExportFlags& flags, const lower::Target& target, const std::vector<Kernel>& kernels,
                         const std::vector<Function>& functions) {
  std::string out;
  auto w = std::back_inserter(out);
  const std::string file = std::filesystem::path(flags.out).filename().string();
  fmt::format_to(w,
                 "// {}: GEMM kernels compiled ahead of time for {} by isaac {} (isaac-tune export {}).\n"
                 "// Generated; do not edit: change the spec and export again.\n"
                 "//\n"
                 "// Include it from C++17 or later. It needs no isaac, no LLVM and no CUDA toolkit: at run time it\n"
                 "// loads the NVIDIA driver (CUDA 12.0 or newer) with dlopen (link with -ldl on glibc < 2.34), or,\n"
                 "// with ISAAC_AOT_LINK_LIBCUDA defined before the include, takes it from -lcuda. isaac's\n"
                 "// docs/aot.md describes the flow and the API.\n"
                 "//\n"
                 "// Every function computes C = alpha op(A) op(B) + beta C, BLAS column-major, on the stream given,\n"
                 "// asynchronously, with the operands in device memory of the current context; beta = 0 does not\n"
                 "// read C. It returns status::success or the failure, which last_error() explains.\n"
                 "//\n",
                 file, target.name(), isaac::version(), std::filesystem::path(flags.spec).filename().string());
  for (const Function& f : functions) {
    const Entry& e = *f.first;
    const bool workspace = e.mode == lower::SplitMode::deterministic;
    fmt::format_to(w, "//   status {}(stream, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc{})   {} {}{}\n", f.name,
                   workspace ? ", workspace, workspace_bytes" : "", ir::name(e.dtype), layout_name(e.a_trans, e.b_trans),
                   workspace ? ", deterministic K split" : "");
    for (auto [entry, index] : f.entries)
      fmt::format_to(w, "//     {:<24} kernel {}: {}\n", shape_text(*entry), index, kernels[index].params.str());
  }
  fmt::format_to(w, "//\n// Kernels (how each was chosen; registers and spills as ptxas reports them for {}):\n",
                 target.name());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    fmt::format_to(w, "//   {}: {} {} {}{}\n", i, ir::name(k.problem.dtype), layout_name(k.problem.a_trans, k.problem.b_trans),
                   k.params.str(), k.params.kg > 1 ? ", split " + std::string(lower::name(k.mode)) : "");
    fmt::format_to(w, "//      {} threads, {} bytes of shared memory, ", k.code.threads, k.code.shared_bytes);
    if (k.registers >= 0)
      fmt::format_to(w, "{} registers, {} bytes spilled; cubin and PTX\n", k.registers, k.spill_bytes);
    else
      fmt::format_to(w, "PTX only (no ptxas at export)\n");
    for (const std::string& how : k.how) fmt::format_to(w, "//      how: {}\n", how);
  }
  out += "#pragma once\n";
  out += header_globals;
  fmt::format_to(w, "\nnamespace {} {{\n", flags.name_space);
  out += header_types;

  fmt::format_to(w, "\n// The architecture the cubins are for; the PTX also runs on later ones.\n"
                    "inline constexpr const char target_arch[] = \"{}\";\n"
                    "inline constexpr int kernel_count = {};\n\nnamespace detail {{\n",
                 target.name(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    fmt::format_to(w, "\n// Kernel {}: {} {} {}\ninline constexpr const char* ptx_{}[] = {{\n", i, ir::name(k.problem.dtype),
                   layout_name(k.problem.a_trans, k.problem.b_trans), k.params.str(), i);
    const auto pieces = ptx_pieces(k.code.ptx);
    for (const std::string& piece : pieces) fmt::format_to(w, "R\"isaac_ptx({})isaac_ptx\",\n", piece);
    out += "};\n";
    if (!k.code.cubin.empty()) {
      fmt::format_to(w, "alignas(8) inline constexpr unsigned char cubin_{}[] = {{", i);
      for (size_t b = 0; b < k.code.cubin.size(); ++b)
        fmt::format_to(w, "{}{}", b % 24 ? "," : (b ? ",\n" : "\n"), static_cast<unsigned>(static_cast<unsigned char>(k.code.cubin[b])));
      out += "};\n";
    }
  }
  out += "\n}  // namespace detail\n\n";
  out += "// ml, nl, ms, ns, u, ks, kl, kg, va, vb, la, lb, db, sw, acc32, tc are isaac's GEMM parameters (lower/gemm.hpp).\n";
  out += "inline constexpr kernel_info kernels[kernel_count] = {\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    const lower::GemmParams& p = k.params;
    std::string how;
    for (const std::string& h : k.how) how += (how.empty() ? "" : "; ") + h;
    const auto pieces = ptx_pieces(k.code.ptx);
    fmt::format_to(w,
                   "    {{{}, {}, \"{}\", {}, {}, {},\n"
                   "     {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},\n"
                   "     {}, {}, {}, {}, \"{}\", \"{}\", \"{}\", {}, {}, detail::ptx_{}, {}, {}, {}}},\n",
                   string_literal(p.str()), string_literal(how), ir::name(k.problem.dtype), k.problem.a_trans, k.problem.b_trans,
                   p.kg > 1 && k.mode == lower::SplitMode::deterministic, p.ml, p.nl, p.ms, p.ns, p.u, p.ks, p.kl, p.kg,
                   p.va, p.vb, p.la, p.lb, p.db, p.sw, p.acc32, p.tc, ir::size_of(k.problem.dtype), k.code.threads,
                   k.code.shared_bytes, k.code.helper_threads, k.code.main_name, k.code.prepare_name,
                   k.code.reduce_name, k.registers, k.spill_bytes, i, pieces.size(),
                   k.code.cubin.empty() ? "nullptr" : fmt::format("detail::cubin_{}", i),
                   k.code.cubin.empty() ? "0" : fmt::format("sizeof detail::cubin_{}", i));
  }
  out += "};\n";
  out += header_runtime;

  for (const Function& f : functions) {
    const Entry& e = *f.first;
    const std::string t = element_type(e.dtype), s = scalar_type(e.dtype);
    const bool workspace = e.mode == lower::SplitMode::deterministic;
    out += "\nnamespace detail {\n";
    fmt::format_to(w, "inline constexpr entry {}_entries[] = {{", f.name);
    for (size_t i = 0; i < f.entries.size(); ++i) {
      const Entry& x = *f.entries[i].first;
      fmt::format_to(w, "{}{{{}, {}, {}, {}}}", i ? ", " : "", f.entries[i].second, x.generic ? -1 : x.problem.m,
                     x.generic ? -1 : x.problem.n, x.generic ? -1 : x.problem.k);
    }
    fmt::format_to(w, "}};\ninline constexpr function_info {0}_function = {{\"{0}\", \"{1}\", {2}, {3}, {0}_entries, {4}}};\n",
                   f.name, ir::name(e.dtype), e.a_trans, e.b_trans, f.entries.size());
    out += "}  // namespace detail\n\n";
    fmt::format_to(w, "// {}: {} {}: C (M x N) = alpha op(A) op(B) + beta C with A stored {} and B stored {}.\n", f.name,
                   ir::name(e.dtype), layout_name(e.a_trans, e.b_trans), e.a_trans ? "K x M" : "M x K",
                   e.b_trans ? "N x K" : "K x N");
    for (auto [entry, index] : f.entries)
      fmt::format_to(w, "//   {:<24} kernel {}\n", shape_text(*entry), index);
    if (workspace)
      fmt::format_to(w, "// A kernel with KG > 1 sums K's pieces in `workspace` (device memory of at least\n"
                        "// {}_workspace_bytes(m, n, k) bytes, 8-byte aligned), which no other call may use meanwhile.\n",
                     f.name);
    fmt::format_to(w,
                   "inline status {0}(stream_t stream, std::int64_t m, std::int64_t n, std::int64_t k, {1} alpha,\n"
                   "    const {2}* A, std::int64_t lda, const {2}* B, std::int64_t ldb, {1} beta, {2}* C, std::int64_t ldc{3}) noexcept {{\n"
                   "  return detail::gemm(detail::{0}_function, stream, {{m, n, k, lda, ldb, ldc, A, B, C}}, &alpha, &beta, {4});\n"
                   "}}\n",
                   f.name, s, t, workspace ? ",\n    void* workspace, std::size_t workspace_bytes" : "",
                   workspace ? "workspace, workspace_bytes" : "nullptr, 0");
    fmt::format_to(w,
                   "// The kernel {0} runs for this shape and these operands, or nullptr (last_error() says why).\n"
                   "inline const kernel_info* {0}_select(std::int64_t m, std::int64_t n, std::int64_t k, const {1}* A,\n"
                   "    std::int64_t lda, const {1}* B, std::int64_t ldb) noexcept {{\n"
                   "  return detail::select(detail::{0}_function, {{m, n, k, lda, ldb, 0, A, B, nullptr}}, nullptr);\n"
                   "}}\n",
                   f.name, t);
    if (workspace)
      fmt::format_to(w,
                     "// The workspace {0} needs for an M x N x K problem (0 when its kernels do not split K).\n"
                     "inline std::size_t {0}_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k) noexcept {{\n"
                     "  return detail::workspace_bytes(detail::{0}_function, m, n, k);\n"
                     "}}\n",
                     f.name);
  }
  fmt::format_to(w, "\n}}  // namespace {}\n", flags.name_space);
  return out;
}

bool valid_namespace(const std::string& ns) {
  size_t start = 0;
  while (true) {
    const size_t end = ns.find("::", start);
    const std::string part = ns.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!is_identifier(part) || reserved_identifier(part) || reserved_names().count(part)) return false;
    if (end == std::string::npos) return true;
    start = end + 2;
  }
}

int run_export(const ExportFlags& flags) {
  if (!valid_namespace(flags.name_space))
    throw InvalidArgument(fmt::format("--namespace {}: use C++ identifiers separated by ::, not keywords", flags.name_space));
  check_output_path(flags.out);  // before minutes of compiling
  const std::vector<Entry> entries = read_spec(flags.spec);

  Chooser chooser{flags, {}, flags.device};
  lower::Target target;
  if (flags.gpu) {
    const runtime::DeviceInfo info = runtime::device_info(0);
    target = lower::target_for_compute_capability(info.compute_capability());
    if (!flags.sm.empty() && lower::parse_target(flags.sm).sm != target.sm)
      throw InvalidArgument(fmt::format("--gpu tunes on a {} ({}), but --sm {} was asked: leave out --sm, or export on "
                                        "a GPU of that architecture",
                                        info.name, target.name(), flags.sm));
    chooser.limits = device_limits(info);
    chooser.device = info.name;
  } else {
    target = lower::parse_target(flags.sm.empty() ? "90" : flags.sm);
    chooser.limits = limits_for(target.sm);
    chooser.limits.sm_count = flags.sm_count;
  }
  chooser.limits.f32_tensor_cores = false;  // as isaac::compile chooses by default (TuningOptions)

  // Exact shapes first in each function: the header tries its entries in order.
  std::vector<Function> functions;
  std::vector<Kernel> kernels;
  std::map<std::string, int> kernel_of;  // dtype, layout, params and split -> kernel index
  for (const Entry& e : entries) {
    const Choice choice = chooser.choose(e);
    const lower::SplitMode mode = choice.params.kg > 1 ? e.mode : lower::SplitMode::atomic;
    const std::string key = fmt::format("{} {} {} {}", ir::name(e.dtype), layout_name(e.a_trans, e.b_trans),
                                        choice.params.str(), lower::name(mode));
    auto [it, inserted] = kernel_of.emplace(key, static_cast<int>(kernels.size()));
    if (inserted) kernels.push_back({e.generic ? representative(e) : e.problem, choice.params, mode, {}, {}});
    Kernel& k = kernels[it->second];
    if (std::find(k.how.begin(), k.how.end(), choice.how) == k.how.end()) k.how.push_back(choice.how);
    auto f = std::find_if(functions.begin(), functions.end(), [&](const Function& x) { return x.name == e.function; });
    if (f == functions.end()) f = functions.insert(functions.end(), {e.function, &e, {}});
    f->entries.emplace_back(&e, it->second);
    fmt::print("{:<20} {} {} {:<24} kernel {}: {}  ({})\n", e.function, ir::name(e.dtype),
               layout_name(e.a_trans, e.b_trans), shape_text(e), it->second, choice.params.str(), choice.how);
  }
  for (Function& f : functions)
    std::stable_partition(f.entries.begin(), f.entries.end(), [](const auto& x) { return !x.first->generic; });

  const bool cubin = !flags.no_cubin && lower::ptxas_available();
  if (!flags.no_cubin && !cubin)
    fmt::print(stderr, "isaac-tune export: no ptxas (PATH, $ISAAC_PTXAS or /usr/local/cuda/bin): the header carries PTX "
                       "only, which the driver compiles at first use\n");
  std::vector<std::future<void>> compiling;
  for (Kernel& k : kernels) compiling.push_back(std::async(std::launch::async, [&] { compile(k, target, cubin); }));
  for (auto& c : compiling) c.wait();
  for (auto& c : compiling) c.get();

  const std::string header = write_header(flags, target, kernels, functions);
  write_file_atomically(flags.out, header);
  fmt::print("wrote {}: {} functions, {} kernels for {} ({}), {} kB\n", flags.out, functions.size(), kernels.size(),
             target.name(), cubin ? "cubin and PTX" : "PTX only", header.size() / 1024);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ExportFlags>();
  auto* cmd = app.add_subcommand("export", "compile the GEMMs of a spec file ahead of time into one self-contained "
                                           "C++17 header (no isaac, LLVM or CUDA toolkit needed to use it)");
  cmd->add_option("spec", flags->spec, "the spec: one GEMM per line, FUNCTION DTYPE LAYOUT (M N K | generic) "
                                       "[lda= ldb= ldc=] [params=...] [split=...] (docs/aot.md)")
      ->required();
  cmd->add_option("--out", flags->out, "the header to write")->required();
  cmd->add_option("--namespace", flags->name_space, "C++ namespace of the header's API")->capture_default_str();
  cmd->add_option("--sm", flags->sm, "target architecture, e.g. 90, 80 or sm_90a (default 90; with --gpu, the GPU's)");
  cmd->add_option("--device", flags->device, "without --gpu: the GPU whose performance model chooses the parameters")
      ->capture_default_str();
  cmd->add_option("--sm-count", flags->sm_count, "without --gpu: that GPU's SMs, for the heuristic's K split and the TMA pipelines' depth")
      ->capture_default_str();
  cmd->add_flag("--gpu", flags->gpu, "tune each exact shape on GPU 0 (the model's top k re-benchmarked, or the tuning "
                                     "database's decision)");
  cmd->add_option("--top", flags->top, "with --gpu: candidates to re-benchmark (0 trusts the model)")->capture_default_str();
  cmd->add_flag("--no-cubin", flags->no_cubin, "PTX only, even where ptxas is installed");
  cmd->callback([flags, &exit_code] { exit_code = run_export(*flags); });
}

}  // namespace isaac::tune::cli
