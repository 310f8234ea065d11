#include "analyses/floor/gpu_peaks.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sightline {
namespace {

// NVIDIA's datasheets give tensor throughput with 2:4 sparsity; the dense figures here are half.
constexpr const char kH100[] = "NVIDIA H100 Tensor Core GPU datasheet";
constexpr const char kH200[] = "NVIDIA H200 Tensor Core GPU datasheet";
constexpr const char kGh200[] = "NVIDIA GH200 Grace Hopper Superchip datasheet";
constexpr const char kB200[] = "NVIDIA HGX B200 specifications, per GPU (180 GB HBM3E, 7.7 TB/s)";
constexpr const char kGb200[] = "NVIDIA GB200 NVL72 datasheet (per GPU: the superchip's / 2)";
constexpr const char kA100[] = "NVIDIA A100 Tensor Core GPU datasheet";
constexpr const char kL40s[] = "NVIDIA L40S datasheet";
constexpr const char kL4[] = "NVIDIA L4 Tensor Core GPU datasheet";
constexpr const char kA10[] = "NVIDIA A10 Tensor Core GPU datasheet";

struct Entry {
  std::vector<std::string_view> key;  // words the device name must hold
  GpuPeaks peaks;
};

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> kEntries = {
      {{"GB200"}, {"GB200 (B200 GPU)", 8000, 1250, 2500, 5000, kGb200}},
      // 7.7 TB/s: NVIDIA's current per-GPU figure (the first HGX B200 sheets said 64 TB/s per
      // board, 8 per GPU); the driver's 7680-bit bus at 3996 MHz DDR gives 7.67 TB/s.
      {{"B200"}, {"B200", 7700, 1100, 2250, 4500, kB200}},
      {{"GH200", "144G"}, {"GH200 144 GB HBM3e", 4900, 494.5, 989.5, 1979, kGh200}},
      {{"GH200"}, {"GH200 96 GB HBM3", 4000, 494.5, 989.5, 1979, kGh200}},
      {{"H200", "NVL"}, {"H200 NVL", 4800, 417.5, 835.5, 1670.5, kH200}},
      {{"H200"}, {"H200 SXM", 4800, 494.5, 989.5, 1979, kH200}},
      {{"H100", "NVL"}, {"H100 NVL", 3900, 417.5, 835.5, 1670.5, kH100}},
      {{"H100", "PCIE"}, {"H100 PCIe", 2000, 378, 756.5, 1513, kH100}},
      {{"H100"}, {"H100 SXM", 3350, 494.5, 989.5, 1979, kH100}},
      {{"A100", "80GB", "PCIE"}, {"A100 80GB PCIe", 1935, 156, 312, 0, kA100}},
      {{"A100", "80GB"}, {"A100 80GB SXM", 2039, 156, 312, 0, kA100}},
      {{"A100"}, {"A100 40GB", 1555, 156, 312, 0, kA100}},
      {{"L40S"}, {"L40S", 864, 183, 362, 733, kL40s}},
      {{"L4"}, {"L4", 300, 60, 121, 242.5, kL4}},
      {{"A10"}, {"A10", 600, 62.5, 125, 0, kA10}},
  };
  return kEntries;
}

std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : name) {
    if (ch == ' ' || ch == '-' || ch == '_') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(ch))));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

}  // namespace

const std::vector<GpuPeaks>& GpuPeaksTable() {
  static const std::vector<GpuPeaks> kTable = [] {
    std::vector<GpuPeaks> t;
    for (const Entry& e : Entries()) t.push_back(e.peaks);
    return t;
  }();
  return kTable;
}

const GpuPeaks* FindGpuPeaks(std::string_view device_name) {
  const std::vector<std::string> words = Words(device_name);
  const std::vector<GpuPeaks>& table = GpuPeaksTable();
  const std::vector<Entry>& entries = Entries();
  for (size_t i = 0; i < entries.size(); ++i) {
    const bool all = std::all_of(entries[i].key.begin(), entries[i].key.end(), [&](auto k) {
      return std::find(words.begin(), words.end(), k) != words.end();
    });
    if (all) return &table[i];
  }
  return nullptr;
}

double TensorTflops(const GpuPeaks& peaks, int64_t bytes) {
  if (bytes <= 1) return peaks.fp8_tflops > 0 ? peaks.fp8_tflops : peaks.bf16_tflops;
  if (bytes == 2) return peaks.bf16_tflops;
  return peaks.tf32_tflops;
}

}  // namespace sightline
