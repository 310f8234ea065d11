// The all-reduce strategies' and fusions' names, as the sweep CSV, the harness's options
// (cuda/allreduce), the runtime library's override (SIGHTLINE_ALLREDUCE_STRATEGY) and the reports
// spell them: one table, indexed by the numeric codes every enum of them shares (nccl 0, oneshot
// 1, twoshot 2, lamport 3; none 0 .. residual_rmsnorm_nvfp4 4, those of
// include/sightline/allreduce.h). Header-only and standard C++ alone, so that the runtime library
// and the GPU harness, which compile without the importers stage, can include it; each user
// static_asserts its enum's values against these indices.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace sightline::allreduce_names {

inline constexpr std::array<std::string_view, 4> kStrategies = {"nccl", "oneshot", "twoshot",
                                                                "lamport"};
inline constexpr std::array<std::string_view, 5> kFusions = {
    "none", "residual_rmsnorm", "residual_rmsnorm_fp8", "residual_rmsnorm_fp8_per_token",
    "residual_rmsnorm_nvfp4"};

// The name of code i, or "?" outside the table.
template <size_t N>
constexpr std::string_view NameAt(const std::array<std::string_view, N>& names, int i) {
  return i >= 0 && static_cast<size_t>(i) < N ? names[static_cast<size_t>(i)] : "?";
}
// The code of `name`, or -1.
template <size_t N>
constexpr int IndexOf(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}
// "a, b, c or d" (`before_last` between the last two), for messages that list what is accepted.
template <size_t N>
std::string Listed(const std::array<std::string_view, N>& names,
                   std::string_view before_last = " or ") {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? before_last : std::string_view(", ");
    out += names[i];
  }
  return out;
}

}  // namespace sightline::allreduce_names
