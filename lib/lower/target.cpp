#include <isaac/error.hpp>
#include <isaac/lower/target.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace isaac::lower {

namespace {
constexpr std::array supported_sm{70, 72, 75, 80, 86, 87, 89, 90};
}

std::string Target::name() const {
  return "sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
}

Target parse_target(const std::string& text) {
  std::string_view s = text;
  if (s.starts_with("sm_")) s.remove_prefix(3);
  Target t;
  t.arch_specific = s.ends_with("a");
  if (t.arch_specific) s.remove_suffix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), t.sm);
  bool known = ec == std::errc{} && end == s.data() + s.size() &&
               std::ranges::find(supported_sm, t.sm) != supported_sm.end();
  if (!known || (t.arch_specific && t.sm != 90))
    throw InvalidArgument("unknown target '" + text +
                          "': expected sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a");
  return t;
}

Target target_for_compute_capability(int cc) {
  Target t;
  t.sm = supported_sm.front();
  for (int sm : supported_sm)
    if (sm <= cc) t.sm = sm;
  return t;
}

}  // namespace isaac::lower
