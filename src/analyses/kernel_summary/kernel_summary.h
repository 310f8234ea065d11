// Kernel summary: time per kernel name, equal to `nsys stats --report cuda_gpu_kern_sum` (grouped
// by the full demangled name, over all devices), plus a category per kernel (kernel_category.h)
// and a per-category summary. Input: one Trace. Units: ns. docs/analyses/kernel_summary.md.
#pragma once

#include <vector>

#include "analyses/common/analysis.h"
#include "base/stats.h"
#include "base/status.h"
#include "facts/kernel_category.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct KernelSummaryOptions {
  enum class GroupBy {
    kFullName,   // nsys cuda_gpu_kern_sum default: the demangled name with template arguments
    kShortName,  // nsys cuda_gpu_kern_sum:base: the base name
  };
  GroupBy group_by = GroupBy::kFullName;
  int32_t device = -1;  // only this CUDA device; -1 = all devices (as nsys)
};

struct KernelSummaryRow {
  StringId name;        // the group key: full name (or short name with GroupBy::kShortName)
  StringId short_name;  // display name
  KernelCategory category = KernelCategory::kOther;
  DurationStats stats;  // over kernel durations (end - start), ns
  double time_pct = 0;  // stats.total / KernelSummaryResult::total_ns * 100
};

struct KernelCategoryRow {
  KernelCategory category = KernelCategory::kOther;
  int64_t instances = 0;
  int64_t distinct_kernels = 0;  // rows of the kernel table in this category
  DurationNs total_ns = 0;
  double time_pct = 0;
};

struct KernelSummaryResult {
  int64_t instances = 0;
  DurationNs total_ns = 0;  // sum of kernel durations (overlapping kernels count twice)
  // Sorted as nsys: total time descending, then instances ascending, then name.
  std::vector<KernelSummaryRow> rows;
  // Non-empty categories, total time descending.
  std::vector<KernelCategoryRow> categories;
};

StatusOr<KernelSummaryResult> ComputeKernelSummary(AnalysisContext& context,
                                                   const KernelSummaryOptions& options);

// Section "kernel_summary": facts, the kernel table and the category table.
Status RunKernelSummarySection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
