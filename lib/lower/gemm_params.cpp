#include "lower/param_text.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace isaac::lower {

namespace {

// One table gives the text form's keys, their order and the fields they name.
constexpr ParamField<GemmParams> fields[] = {
    {"ML", &GemmParams::ml}, {"NL", &GemmParams::nl}, {"MS", &GemmParams::ms}, {"NS", &GemmParams::ns},
    {"U", &GemmParams::u},   {"KS", &GemmParams::ks}, {"KL", &GemmParams::kl}, {"KG", &GemmParams::kg},
    {"VA", &GemmParams::va}, {"VB", &GemmParams::vb}, {"LA", &GemmParams::la}, {"LB", &GemmParams::lb},
    {"DB", &GemmParams::db}, {"SW", &GemmParams::sw}, {"ACC", &GemmParams::acc32}, {"TC", &GemmParams::tc},
};
constexpr ParamField<GemmParams> optional_fields[] = {{"TMA", &GemmParams::tma}, {"ST", &GemmParams::st}};
constexpr auto all_fields = all_param_fields(fields, optional_fields);

}  // namespace

// ACC is stored as acc32 (1 or 0) and written as the accumulator's width, 32 or 16.
std::string GemmParams::str() const {
  std::string text = params_to_text<GemmParams>(*this, fields, [](int GemmParams::*field, int value) {
    return field == &GemmParams::acc32 ? (value ? 32 : 16) : value;
  });
  return text + optional_params_text(*this, optional_fields);
}

GemmParams parse_gemm_params(std::string_view text) {
  return params_from_text<GemmParams>(text, "GEMM", std::span<const ParamField<GemmParams>>(all_fields), [](int GemmParams::*field, int number) {
    if (field != &GemmParams::acc32) return number;
    if (number != 16 && number != 32)
      throw InvalidArgument(fmt::format("ACC={} is not allowed: ACC is 32 or 16 (f16 accumulation)", number));
    return number == 32 ? 1 : 0;
  });
}

std::string_view name(SplitMode mode) { return mode == SplitMode::atomic ? "atomic" : "deterministic"; }

SplitMode parse_split_mode(std::string_view text) {
  for (SplitMode mode : {SplitMode::atomic, SplitMode::deterministic})
    if (text == name(mode)) return mode;
  throw InvalidArgument(fmt::format("unknown split mode '{}': use atomic or deterministic", text));
}

}  // namespace isaac::lower
