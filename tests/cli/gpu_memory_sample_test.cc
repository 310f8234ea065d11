// The shipped H200 recording of examples/gpu_memory/gpu_memory.py (examples/samples/README.md):
// what `sightline analyze` reports against what the program measured itself
// (examples/samples/gpu_memory_h200.truth.json: torch.cuda.max_memory_allocated/reserved, the
// device's total memory, the iterations whose reserved memory grew, the bandwidth timed with CUDA
// events). Tolerances are stated where the figures are not exact by construction.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_io.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

std::string Sample(const char* name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/" + name;
}

// The element of report[list] whose `field` is `value`; false when none.
bool FindIn(simdjson::dom::element report, const char* list, const char* field,
            std::string_view value, simdjson::dom::element* out) {
  simdjson::dom::array items;
  if (report[list].get_array().get(items) != simdjson::SUCCESS) return false;
  for (simdjson::dom::element e : items) {
    std::string_view k;
    if (e[field].get_string().get(k) == simdjson::SUCCESS && k == value) {
      *out = e;
      return true;
    }
  }
  return false;
}
bool SectionOf(simdjson::dom::element report, std::string_view key, simdjson::dom::element* out) {
  return FindIn(report, "sections", "key", key, out);
}
bool FindingOf(simdjson::dom::element report, std::string_view id, simdjson::dom::element* out) {
  return FindIn(report, "findings", "id", id, out);
}

int64_t Int(simdjson::dom::element e) {
  int64_t v = 0;
  EXPECT_EQ(e.get_int64().get(v), simdjson::SUCCESS);
  return v;
}
double Num(simdjson::dom::element e) {
  double v = 0;
  EXPECT_EQ(e.get_double().get(v), simdjson::SUCCESS);  // integers convert too
  return v;
}

class GpuMemorySample : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> truth = ReadFileToString(Sample("gpu_memory_h200.truth.json"));
    ASSERT_TRUE(truth.ok()) << truth.status().ToString();
    truth_text_ = *truth;
    ASSERT_EQ(truth_parser_.parse(truth_text_).get(truth_), simdjson::SUCCESS);
  }
  // `sightline analyze --format json` of a shipped sample, parsed into `parser`.
  simdjson::dom::element Analyze(const char* name, simdjson::dom::parser& parser) {
    testing::CliResult r = testing::RunSightline("analyze --format json " + Sample(name));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    outputs_.push_back(r.out);
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(outputs_.back()).get(doc), simdjson::SUCCESS);
    return doc;
  }
  // The memory section's one device row.
  static bool DeviceRow(simdjson::dom::element report, simdjson::dom::element* out) {
    simdjson::dom::element mem;
    simdjson::dom::array rows;
    if (!SectionOf(report, "memory", &mem)) return false;
    if (mem["tables"]["devices"]["rows"].get_array().get(rows) != simdjson::SUCCESS) return false;
    if (rows.size() != 1u) return false;
    return rows.at(0).get(*out) == simdjson::SUCCESS;
  }
  // The iterations after the first whose reserved memory grew (the program's own account).
  int64_t GrowthIterationsAfterFirst(const char* mode, int64_t* bytes) {
    int64_t n = 0;
    *bytes = 0;
    simdjson::dom::array iters;
    EXPECT_EQ(truth_[mode]["memory"]["per_iteration"].get_array().get(iters), simdjson::SUCCESS);
    for (simdjson::dom::element it : iters) {
      if (Int(it["iteration"]) == 0) continue;
      const int64_t g = Int(it["reserved_growth_bytes"]);
      if (g > 0) {
        ++n;
        *bytes += g;
      }
    }
    return n;
  }

  std::string truth_text_;
  simdjson::dom::parser truth_parser_;
  simdjson::dom::element truth_;
  std::vector<std::string> outputs_;
};

// nsys --cuda-memory-usage sees the caching allocator's cudaMalloc calls: its peak is PyTorch's
// reserved memory. Besides the allocator, the capture holds a few small allocations of CUDA's own
// (1,267 B on the shipped export): within 1 MiB, and never below what the allocator reserved.
TEST_F(GpuMemorySample, NsysPeakIsTheReservedMemory) {
  simdjson::dom::parser p;
  simdjson::dom::element report = Analyze("gpu_memory_h200.nsys.sqlite", p);
  simdjson::dom::element d;
  ASSERT_TRUE(DeviceRow(report, &d));
  const int64_t reserved = Int(truth_["nsys"]["memory"]["max_memory_reserved_bytes_at_exit"]);
  const int64_t peak = Int(d["peak_bytes"]);
  EXPECT_GE(peak, reserved);
  EXPECT_LE(peak - reserved, int64_t{1} << 20);
  EXPECT_EQ(Int(d["frees"]), 0);  // the program never calls empty_cache
  const int64_t total = Int(truth_["nsys"]["device_total_memory_bytes"]);
  EXPECT_EQ(Int(d["total_bytes"]), total);
  EXPECT_EQ(Int(d["headroom_bytes"]), total - peak);

  // alloc_in_loop: one cudaMalloc in each iteration after the first whose reserved memory grew.
  int64_t growth_bytes = 0;
  const int64_t grew = GrowthIterationsAfterFirst("nsys", &growth_bytes);
  ASSERT_GT(grew, 0);
  simdjson::dom::element f;
  ASSERT_TRUE(FindingOf(report, "alloc_in_loop", &f));
  EXPECT_EQ(Int(f["evidence"]["iterations"]), grew);
  EXPECT_EQ(Int(f["evidence"]["calls"]), grew);
}

// The PyTorch profiler's [memory] events carry the allocator's totals: the peak is
// max_memory_allocated and the most reserved max_memory_reserved, exactly.
TEST_F(GpuMemorySample, PytorchPeakAndReservedAreTheAllocatorsOwn) {
  simdjson::dom::parser p;
  simdjson::dom::element report = Analyze("gpu_memory_h200.pytorch.json.gz", p);
  simdjson::dom::element d;
  ASSERT_TRUE(DeviceRow(report, &d));
  simdjson::dom::element mem = truth_["torch"]["memory"];
  EXPECT_EQ(Int(d["peak_bytes"]), Int(mem["max_memory_allocated_bytes_at_exit"]));
  EXPECT_EQ(Int(d["max_reserved_bytes"]), Int(mem["max_memory_reserved_bytes_at_exit"]));
  EXPECT_EQ(Int(d["end_bytes"]), Int(mem["memory_allocated_bytes_at_exit"]));
  const int64_t total = Int(truth_["torch"]["device_total_memory_bytes"]);
  EXPECT_EQ(Int(d["total_bytes"]), total);
  EXPECT_EQ(Int(d["headroom_bytes"]), total - Int(d["reserved_at_peak_bytes"]));

  int64_t growth_bytes = 0;
  const int64_t grew = GrowthIterationsAfterFirst("torch", &growth_bytes);
  ASSERT_GT(grew, 0);
  simdjson::dom::element f;
  ASSERT_TRUE(FindingOf(report, "alloc_in_loop", &f));
  EXPECT_EQ(Int(f["evidence"]["iterations"]), grew);
  EXPECT_EQ(Int(f["evidence"]["reserved_growths"]), grew);
  EXPECT_EQ(Int(f["evidence"]["reserved_growth_bytes"]), growth_bytes);
}

// DRAM read + write over the copy phase, as a share of the device's peak bandwidth (memory clock x
// bus width from the program's device properties), against the bandwidth the program timed with
// CUDA events over the same kernels: within 5% of the measured figure (0.5% on the shipped export).
TEST_F(GpuMemorySample, CopyPhaseDramThroughputMatchesTheMeasuredBandwidth) {
  simdjson::dom::parser p;
  simdjson::dom::element report = Analyze("gpu_memory_h200.nsys.sqlite", p);
  simdjson::dom::element metrics, copy;
  ASSERT_TRUE(SectionOf(report, "gpu_metrics", &metrics));
  simdjson::dom::element per_range;
  ASSERT_EQ(metrics["tables"]["per_range"].get(per_range), simdjson::SUCCESS);
  ASSERT_TRUE(FindIn(per_range, "rows", "range", "copy_phase", &copy));
  EXPECT_GE(Int(copy["samples"]), 100);  // 10 kHz over ~50 ms
  const double dram_pct =
      Num(copy["dram_read_bandwidth_pct"]) + Num(copy["dram_write_bandwidth_pct"]);
  simdjson::dom::element bw = truth_["nsys"]["bandwidth"];
  const double peak_gbps = Num(bw["theoretical_peak_GBps"]);
  const double measured_gbps = Num(bw["achieved_GBps"]);
  ASSERT_GT(peak_gbps, 0);
  const double reported_gbps = dram_pct / 100 * peak_gbps;
  EXPECT_NEAR(reported_gbps, measured_gbps, 0.05 * measured_gbps)
      << "DRAM " << dram_pct << "% of " << peak_gbps << " GB/s";
  // A plain read-one-write-one kernel: reads and writes about equal (within 5 points).
  EXPECT_NEAR(Num(copy["dram_read_bandwidth_pct"]), Num(copy["dram_write_bandwidth_pct"]), 5.0);
  // And the memory_bound_phase finding names it.
  simdjson::dom::element f;
  EXPECT_TRUE(FindingOf(report, "memory_bound_phase", &f));
}

}  // namespace
}  // namespace sightline
