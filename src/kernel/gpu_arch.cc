// The limit table. Each value's source is in docs/kernel/occupancy.md: the CUDA C++ Programming
// Guide's "Technical Specifications per Compute Capability", the architecture tuning guides
// (carveouts), and the CUDA 13.0 toolkit's cuda_occupancy.h (allocation granularities, blocks per
// SM, carveout lists, the 1 KiB driver reservation from sm_80 on).
#include "kernel/gpu_arch.h"

#include <algorithm>
#include <cctype>

namespace sightline {
namespace {

constexpr int64_t kKiB = 1024;

std::vector<int64_t> KiBs(std::initializer_list<int64_t> kib) {
  std::vector<int64_t> out;
  for (int64_t k : kib) out.push_back(k * kKiB);
  return out;
}

GpuArch Arch(int major, int minor, const char* family, const char* examples, int warps, int blocks,
             int64_t smem_sm_kib, int64_t optin_kib, std::vector<int64_t> configs, int sms,
             const char* sms_of) {
  GpuArch a;
  a.name = "sm_" + std::to_string(major * 10 + minor);
  a.cc_major = major;
  a.cc_minor = minor;
  a.family = family;
  a.examples = examples;
  a.max_warps_per_sm = warps;
  a.max_blocks_per_sm = blocks;
  a.shared_mem_per_sm = smem_sm_kib * kKiB;
  a.shared_mem_per_block_optin = optin_kib * kKiB;
  a.shared_mem_configs = std::move(configs);
  // Volta and Turing allocate shared memory in 256-byte units with no driver reservation; from
  // Ampere on the unit is 128 bytes and the driver reserves 1 KiB per block.
  a.shared_mem_alloc_unit = major >= 8 ? 128 : 256;
  a.reserved_shared_mem_per_block = major >= 8 ? 1024 : 0;
  a.default_sm_count = sms;
  a.sm_count_of = sms_of;
  return a;
}

std::vector<GpuArch> BuildTable() {
  const std::vector<int64_t> volta = KiBs({0, 8, 16, 32, 64, 96});
  const std::vector<int64_t> turing = KiBs({32, 64});
  const std::vector<int64_t> ga100 = KiBs({0, 8, 16, 32, 64, 100, 132, 164});
  const std::vector<int64_t> ga10x = KiBs({0, 8, 16, 32, 64, 100});
  const std::vector<int64_t> gh100 = KiBs({0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
  return {
      Arch(7, 0, "Volta", "V100", 64, 32, 96, 96, volta, 80, "V100"),
      Arch(7, 2, "Volta", "Jetson AGX Xavier", 64, 32, 96, 96, volta, 8, "Jetson AGX Xavier"),
      Arch(7, 5, "Turing", "T4, RTX 2080 Ti", 32, 16, 64, 64, turing, 40, "T4"),
      Arch(8, 0, "Ampere", "A100, A30", 64, 32, 164, 163, ga100, 108, "A100"),
      Arch(8, 6, "Ampere", "A10, A40, RTX 3090, RTX A6000", 48, 16, 100, 99, ga10x, 72, "A10"),
      Arch(8, 7, "Ampere", "Jetson AGX Orin", 48, 16, 164, 163, ga100, 16, "Jetson AGX Orin"),
      Arch(8, 9, "Ada", "L4, L40, L40S, RTX 4090", 48, 24, 100, 99, ga10x, 142, "L40S"),
      Arch(9, 0, "Hopper", "H100, H200, GH200, H800, H20", 64, 32, 228, 227, gh100, 132,
           "H100 SXM"),
      Arch(10, 0, "Blackwell", "B200, GB200", 64, 32, 228, 227, gh100, 148, "B200"),
      Arch(10, 3, "Blackwell", "B300, GB300", 64, 32, 228, 227, gh100, 148,
           "B300 (SM count unverified)"),
      Arch(11, 0, "Blackwell", "Jetson Thor", 48, 24, 228, 227, gh100, 20, "Jetson AGX Thor"),
      Arch(12, 0, "Blackwell", "RTX 5090, RTX PRO 6000", 48, 24, 100, 99, ga10x, 170, "RTX 5090"),
      Arch(12, 1, "Blackwell", "DGX Spark (GB10)", 48, 24, 100, 99, ga10x, 48, "GB10"),
  };
}

struct NamedGpu {
  const char* key;  // lower case, no spaces, dashes or underscores
  const char* display;
  int sm_version;  // 90 for sm_90
  int sm_count;
};

constexpr NamedGpu kNamedGpus[] = {
    {"v100", "V100", 70, 80},
    {"t4", "T4", 75, 40},
    {"rtx2080ti", "RTX 2080 Ti", 75, 68},
    {"a100", "A100", 80, 108},
    {"a30", "A30", 80, 56},
    {"a10", "A10", 86, 72},
    {"a40", "A40", 86, 84},
    {"rtx3090", "RTX 3090", 86, 82},
    {"rtxa6000", "RTX A6000", 86, 84},
    {"orin", "Jetson AGX Orin", 87, 16},
    {"l4", "L4", 89, 58},
    {"l40", "L40", 89, 142},
    {"l40s", "L40S", 89, 142},
    {"rtx4090", "RTX 4090", 89, 128},
    {"h100", "H100 SXM", 90, 132},
    {"h100sxm", "H100 SXM", 90, 132},
    {"h100pcie", "H100 PCIe", 90, 114},
    {"h200", "H200", 90, 132},
    {"gh200", "GH200", 90, 132},
    {"h800", "H800", 90, 132},
    {"h20", "H20", 90, 78},
    {"b200", "B200", 100, 148},
    {"gb200", "GB200", 100, 148},
    {"thor", "Jetson AGX Thor", 110, 20},
    {"rtx5090", "RTX 5090", 120, 170},
    {"rtxpro6000", "RTX PRO 6000", 120, 188},
    {"gb10", "GB10 (DGX Spark)", 121, 48},
};

std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

const GpuArch* FindBySmVersion(int version) {
  for (const GpuArch& a : KnownGpuArchs()) {
    if (a.cc_major * 10 + a.cc_minor == version) return &a;
  }
  return nullptr;
}

// "sm90", "sm90a", "compute90", "90", "9.0" -> 90; -1 when not of that shape.
int ParseSmVersion(const std::string& n) {
  std::string digits = n;
  for (const char* prefix : {"sm", "compute"}) {
    if (digits.rfind(prefix, 0) == 0) {
      digits = digits.substr(std::string(prefix).size());
      break;
    }
  }
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.pop_back();
  const size_t dot = digits.find('.');
  if (dot != std::string::npos) {
    const std::string major = digits.substr(0, dot), minor = digits.substr(dot + 1);
    if (major.empty() || minor.size() != 1) return -1;
    digits = major + minor;
  }
  if (digits.empty() || digits.size() > 3) return -1;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stoi(digits);
}

}  // namespace

const std::vector<GpuArch>& KnownGpuArchs() {
  static const std::vector<GpuArch>* table = new std::vector<GpuArch>(BuildTable());
  return *table;
}

StatusOr<ResolvedGpu> ResolveGpu(std::string_view name) {
  const std::string n = Normalize(name);
  for (const NamedGpu& g : kNamedGpus) {
    if (n == g.key) {
      const GpuArch* a = FindBySmVersion(g.sm_version);
      if (a == nullptr) break;
      return ResolvedGpu{*a, g.display, g.sm_count};
    }
  }
  const int version = ParseSmVersion(n);
  if (version >= 0) {
    if (const GpuArch* a = FindBySmVersion(version)) {
      return ResolvedGpu{*a, a->sm_count_of, a->default_sm_count};
    }
  }
  std::string archs;
  for (const GpuArch& a : KnownGpuArchs()) archs += (archs.empty() ? "" : ", ") + a.name;
  return NotFoundError("unknown GPU or architecture '" + std::string(name) +
                       "'; known architectures: " + archs + "; known GPUs: " + KnownGpuNames());
}

std::string KnownGpuNames() {
  std::string out;
  for (const NamedGpu& g : kNamedGpus) {
    if (!out.empty()) out += ", ";
    out += g.key;
  }
  return out;
}

}  // namespace sightline
