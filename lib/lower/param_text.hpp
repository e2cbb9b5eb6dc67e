#pragma once
// The KEY=VALUE,... text form of a template's parameter set (GemmParams, ConvParams), driven by a
// table of (key, int member) pairs that gives the keys, their order and the fields they name.
#include <isaac/error.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace isaac::lower {

template <class P>
using ParamField = std::pair<const char*, int P::*>;

// Each field's value, mapped through show(field, value) (the text may differ from the stored int).
template <class P, class Show>
std::string params_to_text(const P& p, std::span<const ParamField<P>> fields, Show show) {
  std::string out;
  for (auto [key, field] : fields) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, show(field, p.*field));
  return out;
}

template <class P>
std::string params_to_text(const P& p, std::span<const ParamField<P>> fields) {
  return params_to_text(p, fields, [](int P::*, int value) { return value; });
}

// Keys written only where set (non-zero), after the others, so that the sets without them keep their
// text (caches, CSVs, models); and the table of every key that parsing accepts.
template <class P, std::size_t M>
std::string optional_params_text(const P& p, const ParamField<P> (&optional)[M]) {
  std::string out;
  for (auto [key, field] : optional)
    if (p.*field) out += fmt::format(",{}={}", key, p.*field);
  return out;
}

template <class P, std::size_t N, std::size_t M>
constexpr std::array<ParamField<P>, N + M> all_param_fields(const ParamField<P> (&fields)[N],
                                                            const ParamField<P> (&optional)[M]) {
  std::array<ParamField<P>, N + M> all{};
  for (std::size_t i = 0; i < N; ++i) all[i] = fields[i];
  for (std::size_t i = 0; i < M; ++i) all[N + i] = optional[i];
  return all;
}

// Fields not named keep their defaults; read(field, number) gives the value to store (and may
// throw). `what` names the template in the error messages ("GEMM", "CONV"). A key given twice, or an
// empty item (a trailing comma), is refused: which of two values was meant is not for isaac to guess.
template <class P, class Read>
P params_from_text(std::string_view text, const char* what, std::span<const ParamField<P>> fields, Read read) {
  P p;
  std::string seen = ",";
  const std::string_view whole = text;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) item = {};  // "ML=64," ends in an empty item
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InvalidArgument(fmt::format("malformed {} parameter '{}' in '{}': expected KEY=VALUE,KEY=VALUE,...", what,
                                        item, whole));
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (seen.find(fmt::format(",{},", key)) != std::string::npos)
      throw InvalidArgument(fmt::format("{} parameter {} is given twice in '{}'", what, key, whole));
    seen += fmt::format("{},", key);
    int number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc::result_out_of_range)
      throw InvalidArgument(fmt::format("{} parameter {}={} is out of range: values are 32-bit integers", what, key,
                                        value));
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size())
      throw InvalidArgument(fmt::format("{} parameter {} has a non-integer value '{}'", what, key, value));
    bool known = false;
    for (auto [name, field] : fields)
      if (key == name) known = true, p.*field = read(field, number);
    if (!known) {
      std::string keys;
      for (auto [name, field] : fields) keys += std::string(keys.empty() ? "" : ", ") + name;
      throw InvalidArgument(fmt::format("unknown {} parameter '{}': the keys are {}", what, key, keys));
    }
  }
  return p;
}

template <class P>
P params_from_text(std::string_view text, const char* what, std::span<const ParamField<P>> fields) {
  return params_from_text(text, what, fields, [](int P::*, int number) { return number; });
}

}  // namespace isaac::lower
