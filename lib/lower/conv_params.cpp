#include "lower/param_text.hpp"

#include <isaac/lower/conv.hpp>

#include <fmt/format.h>

namespace isaac::lower {

namespace {

// One table gives the text form's keys, their order and the fields they name.
constexpr ParamField<ConvParams> fields[] = {
    {"PL", &ConvParams::pl}, {"KL", &ConvParams::kl}, {"PS", &ConvParams::ps}, {"KS", &ConvParams::ks},
    {"U", &ConvParams::u},   {"CS", &ConvParams::cs}, {"CL", &ConvParams::cl}, {"CG", &ConvParams::cg},
    {"VI", &ConvParams::vi}, {"VF", &ConvParams::vf}, {"LI", &ConvParams::li}, {"LF", &ConvParams::lf},
    {"DB", &ConvParams::db}, {"TC", &ConvParams::tc},
};
constexpr ParamField<ConvParams> optional_fields[] = {{"WG", &ConvParams::wg}};
constexpr auto all_fields = all_param_fields(fields, optional_fields);

}  // namespace

std::string ConvParams::str() const {
  std::string text = params_to_text<ConvParams>(*this, fields);
  return text + optional_params_text(*this, optional_fields);
}

ConvParams parse_conv_params(std::string_view text) {
  return params_from_text<ConvParams>(text, "CONV", std::span<const ParamField<ConvParams>>(all_fields));
}

std::string to_string(const ConvEpilogue& e) {
  if (e.bias && e.relu) return "bias+relu";
  if (e.bias) return "bias";
  if (e.relu) return "relu";
  return "none";
}

}  // namespace isaac::lower
