#include <isaac/error.hpp>
#include <isaac/lower/conv.hpp>

#include <fmt/format.h>

#include <charconv>
#include <utility>

namespace isaac::lower {

namespace {

// One table gives the text form's keys, their order and the fields they name.
constexpr std::pair<const char*, int ConvParams::*> fields[] = {
    {"PL", &ConvParams::pl}, {"KL", &ConvParams::kl}, {"PS", &ConvParams::ps}, {"KS", &ConvParams::ks},
    {"U", &ConvParams::u},   {"CS", &ConvParams::cs}, {"CL", &ConvParams::cl}, {"CG", &ConvParams::cg},
    {"VI", &ConvParams::vi}, {"VF", &ConvParams::vf}, {"LI", &ConvParams::li}, {"LF", &ConvParams::lf},
    {"DB", &ConvParams::db},
};

}  // namespace

std::string ConvParams::str() const {
  std::string out;
  for (auto [key, field] : fields) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, this->*field);
  return out;
}

ConvParams parse_conv_params(std::string_view text) {
  ConvParams p;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InvalidArgument(fmt::format("malformed CONV parameter '{}': expected KEY=VALUE", item));
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    int number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size())
      throw InvalidArgument(fmt::format("CONV parameter {} has a non-integer value '{}'", key, value));
    bool known = false;
    for (auto [name, field] : fields)
      if (key == name) known = true, p.*field = number;
    if (!known) {
      std::string keys;
      for (auto [name, field] : fields) keys += std::string(keys.empty() ? "" : ", ") + name;
      throw InvalidArgument(fmt::format("unknown CONV parameter '{}': the keys are {}", key, keys));
    }
  }
  return p;
}

std::string to_string(const ConvEpilogue& e) {
  if (e.bias && e.relu) return "bias+relu";
  if (e.bias) return "bias";
  if (e.relu) return "relu";
  return "none";
}

}  // namespace isaac::lower
