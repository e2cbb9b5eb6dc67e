#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>

#include <fmt/format.h>

#include <charconv>
#include <utility>

namespace isaac::lower {

namespace {

// One table gives the text form's keys, their order and the fields they name.
constexpr std::pair<const char*, int GemmParams::*> fields[] = {
    {"ML", &GemmParams::ml}, {"NL", &GemmParams::nl}, {"MS", &GemmParams::ms}, {"NS", &GemmParams::ns},
    {"U", &GemmParams::u},   {"KS", &GemmParams::ks}, {"KL", &GemmParams::kl}, {"KG", &GemmParams::kg},
    {"VA", &GemmParams::va}, {"VB", &GemmParams::vb}, {"LA", &GemmParams::la}, {"LB", &GemmParams::lb},
    {"DB", &GemmParams::db}, {"SW", &GemmParams::sw}, {"ACC", &GemmParams::acc32},
};

}  // namespace

std::string GemmParams::str() const {
  std::string out;
  for (auto [key, field] : fields) {
    int value = this->*field;
    if (field == &GemmParams::acc32) value = value ? 32 : 16;
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, value);
  }
  return out;
}

GemmParams parse_gemm_params(std::string_view text) {
  GemmParams p;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InvalidArgument(fmt::format("malformed GEMM parameter '{}': expected KEY=VALUE", item));
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    int number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc{} || end != value.data() + value.size())
      throw InvalidArgument(fmt::format("GEMM parameter {} has a non-integer value '{}'", key, value));
    bool known = false;
    for (auto [name, field] : fields) {
      if (key != name) continue;
      known = true;
      if (field == &GemmParams::acc32) {
        if (number != 16 && number != 32)
          throw InvalidArgument(fmt::format("ACC={} is not allowed: ACC is 32 or 16 (f16 accumulation)", number));
        number = number == 32;
      }
      p.*field = number;
    }
    if (!known) {
      std::string keys;
      for (auto [name, field] : fields) keys += std::string(keys.empty() ? "" : ", ") + name;
      throw InvalidArgument(fmt::format("unknown GEMM parameter '{}': the keys are {}", key, keys));
    }
  }
  return p;
}

}  // namespace isaac::lower
