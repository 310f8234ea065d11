// The catalogue of diagnostic codes: every code that the builder, an importer or a reader may
// report, with its severity and fixed message. Diagnostics::Add takes only these, and
// docs/diagnostics.md lists exactly these (tests/reporters/diagnostic_codes_test.cc checks both
// ways).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sightline {

// kInfo: an expected drop that does not change results (flow arrows, display-only metadata).
// kWarning: data that may change results (unlinked kernels, lost records).
enum class DiagnosticSeverity { kInfo, kWarning };

// Grouped by who reports them. Add a code here, in diagnostic_codes.cc (same order) and in
// docs/diagnostics.md.
enum class DiagCode : uint16_t {
  // TraceBuilder: any input format.
  kNegativeDuration,
  kKernelWithoutLaunch,
  kMemopWithoutLaunch,
  kAmbiguousCorrelation,
  kLaunchesWithoutKernels,
  kSharedLaunchCall,
  kRangeNotNested,
  kWholeGraphRuns,
  kAbsurdDuration,
  kAbsurdTimestamp,
  kAbsurdSize,
  kValueNotFinite,
  kStringCut,
  kGpuMetricsNotRead,
  kNsysMemoryEventUnusable,
  kNsysGpuMetricsConfigUnmatched,
  // Nsight Systems SQLite importer.
  kNsysSchemaVersionUnknown,
  kNsysSchemaVersionUntested,
  kNsysApiRowOtherClass,
  kNvtxRangeWithoutEnd,
  kNvtxMarkIgnored,
  kNvtxEventIgnored,
  kNsysUnknownStringId,
  kNsysNoGpuActivity,
  kNsysGilRanges,
  kNsysPySamples,
  kNsysPySamplesWithoutStack,
  kNsysPySampleUnreadable,
  kNsysOsCallOtherProcess,
  kNsysOsCallChains,
  kNsysOsCallChainMissing,
  kNsysSchedProfilerThreads,
  kNsysCaptureProblem,
  kNsysGpuMetricsSkipped,
  kNsysGpuMetricsGenericEvents,
  kNsysValueWrongType,
  kNsysValueOutOfRange,
  // Kineto (PyTorch profiler) JSON importer.
  kKinetoInvalidDevice,
  kKinetoInvalidEvent,
  kKinetoGpuArgsMissing,
  kKinetoGpuIdOutOfRange,
  kKinetoSmemSplitUnknown,
  kKinetoMemopNameUnknown,
  kKinetoUnmappedMetadata,
  kKinetoShapesUnreadable,
  // Kineto categories that are not mapped, one code per category Sightline knows to skip.
  kKinetoUnmappedGpuUserAnnotation,
  kKinetoUnmappedAc2g,
  kKinetoUnmappedAsyncCpuToGpu,
  kKinetoUnmappedFwdbwd,
  kKinetoUnmappedTrace,
  kKinetoUnmappedOverhead,
  kKinetoUnmappedCpuInstantEvent,
  kKinetoHostMemoryEvent,
  kKinetoMemoryEventUnusable,
  kKinetoUnmappedCudaSync,
  kKinetoUnmappedNoCategory,
  kKinetoUnmappedCategory,  // any other category; the detail names it
  kKinetoUnmappedPhase,     // a mapped category with a phase other than X; the detail names both
  // Sightline recorder (.slrec) importer.
  kRecorderDroppedRecords,
  kRecorderTruncatedChunks,
  kRecorderNotFinished,
  kRecorderMalformedRecords,
  kRecorderReservedStringId,
  kRecorderUnpairedRanges,
  kRecorderUnknownRecords,
  kRecorderMissingStrings,
  kRecorderSyncRecords,
  kRecorderGpuMetricsNotSampled,
  kRecorderGpuMetricsFailed,
  kRecorderGpuMetricsLost,
  kRecorderGpuMetricsAligned,
  kRecorderGpuMetricsNotAligned,
  kGraphKernelsWithoutCapture,
  kRecorderSampledGraphTrace,
  kRecorderRunProcessesUnreadable,
  // PyTorch memory snapshot importer.
  kTorchSnapshotEntryUnusable,
  kTorchSnapshotNoTime,
  kTorchSnapshotNoHistory,
  kTorchSnapshotOom,
  kTorchSnapshotTotalsInconsistent,
  // Nsight Compute CSV reader.
  kNcuLinesSkipped,
  // TensorRT engine exports (trtexec, Trex).
  kTrtFieldWrongType,
  kTrtRecordIncomplete,
  kTrtProfileLayerNotInGraph,
  // Serving benchmark results (--requests).
  kServingRecordSkipped,
  kServingRunsSkipped,  // last: diagnostic_codes.cc checks the catalogue's size against it
};

struct DiagnosticInfo {
  DiagCode id;
  std::string_view code;  // stable snake_case key in every report, e.g. "kernel_without_launch"
  DiagnosticSeverity severity;
  std::string_view message;  // what it means for the user; a Diagnostic's detail may follow it
};

// The catalogue entry of `code`.
const DiagnosticInfo& Info(DiagCode code);

// Every entry, in DiagCode order.
std::span<const DiagnosticInfo> DiagnosticCatalogue();

}  // namespace sightline
