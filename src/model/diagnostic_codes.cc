#include "model/diagnostic_codes.h"

#include <cstddef>

namespace sightline {
namespace {

using enum DiagCode;
constexpr DiagnosticSeverity kInfo = DiagnosticSeverity::kInfo;
constexpr DiagnosticSeverity kWarning = DiagnosticSeverity::kWarning;

// In DiagCode order (checked at compile time below). Messages are the exact text reports have
// always printed for these codes; keep them stable, the golden reports hold them.
constexpr DiagnosticInfo kCatalogue[] = {
    // TraceBuilder.
    {kNegativeDuration, "negative_duration", kWarning,
     "events that end before they start (dropped; a clock or export problem)"},
    {kKernelWithoutLaunch, "kernel_without_launch", kWarning,
     "kernels whose launching API call is not in the trace (launched before capture, or API "
     "tracing off); they count for GPU time but not for NVTX projection"},
    {kMemopWithoutLaunch, "memop_without_launch", kWarning,
     "memory operations whose API call is not in the trace; they count for GPU time only"},
    {kAmbiguousCorrelation, "ambiguous_correlation", kWarning,
     "GPU events whose correlation id matches calls in several processes (left unlinked)"},
    {kLaunchesWithoutKernels, "launches_without_kernels", kWarning,
     "kernel launch calls, and not one kernel: the GPU side was not read (a kernel table renamed "
     "or of a layout this reader does not know); findings about the GPU are left out"},
    {kSharedLaunchCall, "shared_launch_call", kWarning,
     "kernels linked to a launch call that another kernel is linked to, not a CUDA graph's "
     "launch: the trace repeats correlation ids, so launch overheads and NVTX attribution of "
     "these kernels are doubtful"},
    {kRangeNotNested, "range_not_nested", kInfo,
     "ranges that overlap another range on the same thread without nesting (kept, treated as "
     "siblings)"},
    {kWholeGraphRuns, "whole_graph_runs", kInfo,
     "CUDA graph runs traced as whole graphs: each is one row named 'CUDA graph N (whole graph)' "
     "and its kernels are not in the trace; trace graphs per node to see them (nsys "
     "--cuda-graph-trace=node, sightline record --cuda-graph-trace node)"},
    {kAbsurdDuration, "absurd_duration", kWarning,
     "events longer than the trace can hold (more than twice the span of all start times plus "
     "a minute: a corrupt end time); dropped"},
    {kAbsurdTimestamp, "absurd_timestamp", kWarning,
     "events with a time beyond +-2^62 ns, or a start more than 2^49 ns (6.5 days) from the "
     "trace's median start (ends, instants such as memory events and samples: 2^51 ns); "
     "dropped, since spans, durations and their sums would overflow (a capture time that far "
     "off becomes unknown)"},
    {kAbsurdSize, "absurd_size", kWarning,
     "memory copies or sets, allocations, frees or allocator totals of more than 2^50 bytes (1 "
     "PiB), or copies of a negative size; dropped"},
    {kValueNotFinite, "value_not_finite", kWarning,
     "sampled values that are NaN or infinite; dropped, not averaged"},
    {kStringCut, "string_cut", kWarning,
     "strings longer than 64 KiB (names, frames, messages), cut to 64 KiB with a note of their "
     "length"},

    // Nsight Systems.
    {kGpuMetricsNotRead, "gpu_metrics_not_read", kInfo,
     "GPU metric samples not read: of metrics the export's GpuMetricsConfig does not list, or, "
     "without that config, other than the [Throughput %] metrics and the clock frequencies"},
    {kNsysMemoryEventUnusable, "nsys_memory_event_unusable", kWarning,
     "GPU memory usage events with NULLs in required columns, a negative size or an unknown "
     "operation; dropped"},
    {kNsysGpuMetricsConfigUnmatched, "nsys_gpu_metrics_config_unmatched", kWarning,
     "The export's GpuMetricsConfig has no metric set with every metric of the export: values read "
     "with the built-in scales (percent as stored, clocks Hz to MHz), other metrics not read"},
    {kNsysSchemaVersionUnknown, "nsys_schema_version_unknown", kWarning,
     "the export does not state its schema version (no EXPORT_SCHEMA_VERSION in "
     "META_DATA_EXPORT); read as the supported schema, checking each table and column"},
    {kNsysSchemaVersionUntested, "nsys_schema_version_untested", kInfo,
     "the export's schema version is outside the versions Sightline was checked on; tables and "
     "columns were checked before reading"},
    {kNsysApiRowOtherClass, "nsys_api_row_other_class", kInfo,
     "rows of CUPTI_ACTIVITY_KIND_RUNTIME that are neither CUDA runtime nor driver calls (e.g. "
     "CUDA backtraces); not imported"},
    {kNvtxRangeWithoutEnd, "nvtx_range_without_end", kWarning,
     "NVTX ranges still open when the capture stopped (no end time); dropped"},
    {kNvtxMarkIgnored, "nvtx_mark_ignored", kInfo, "NVTX marks (instants); not imported"},
    {kNvtxEventIgnored, "nvtx_event_ignored", kInfo,
     "NVTX events that are not ranges or marks (categories, thread names, payloads); not "
     "imported"},
    {kNsysUnknownStringId, "nsys_unknown_string_id", kWarning,
     "names whose id is missing from StringIds (shown as empty names)"},
    {kNsysNoGpuActivity, "nsys_no_gpu_activity", kWarning,
     "the export has CUDA API calls but no kernels or memory operations: GPU activity was not "
     "traced, or the capture ended before any GPU work. Only host-side analyses apply"},
    {kNsysGilRanges, "nsys_gil_ranges", kInfo,
     "GIL ranges (NVTX domain \"GIL Trace\") read into the GIL table, not as NVTX ranges"},
    {kNsysPySamples, "nsys_py_samples", kInfo,
     "Python call-stack samples (NVTX marks in the domain \"Python Periodic Sampling\") read into "
     "the Python sample table, not as NVTX marks"},
    {kNsysPySamplesWithoutStack, "nsys_py_samples_without_stack", kWarning,
     "Python samples without their stacks: the export left out the JSON payloads, so no hot "
     "Python frames can be shown; export again with `nsys export --type sqlite "
     "--include-json=true`"},
    {kNsysPySampleUnreadable, "nsys_py_sample_unreadable", kWarning,
     "Python samples whose JSON stack could not be read (not JSON, or frames without integer "
     "Function/File/Line); kept without a stack"},
    {kNsysOsCallOtherProcess, "nsys_os_call_other_process", kInfo,
     "OS runtime calls of processes with no CUDA or NVTX event in the capture; not imported"},
    {kNsysOsCallChains, "nsys_os_call_chains", kInfo,
     "OS runtime calls read with their call chains (OSRT_CALLCHAINS); nsys collects a chain only "
     "for calls longer than its backtrace threshold, so the others have none"},
    {kNsysOsCallChainMissing, "nsys_os_call_chain_missing", kWarning,
     "OS runtime calls whose callchainId names no rows of OSRT_CALLCHAINS; kept without a chain"},
    {kNsysSchedProfilerThreads, "nsys_sched_profiler_threads", kInfo,
     "profiler threads (nsys's own, such as \"NSys PySampling\") whose scheduling events were not "
     "read: no off-CPU time is shown for them"},
    {kNsysCaptureProblem, "nsys_capture_problem", kWarning,
     "warnings and errors Nsight Systems recorded about the capture itself (DIAGNOSTIC_EVENT): "
     "data it lost or could not collect"},
    {kNsysGpuMetricsSkipped, "nsys_gpu_metrics_skipped", kInfo,
     "GPU metrics the capture skipped (DIAGNOSTIC_EVENT: they need a counter this GPU or "
     "configuration does not offer, often NVLink's); absent from the GPU metrics, not zero"},
    {kNsysGpuMetricsGenericEvents, "nsys_gpu_metrics_generic_events", kWarning,
     "generic events of an export without a GPU_METRICS table: exports before schema 3.15 keep "
     "GPU metric samples there, as JSON; not read"},
    {kNsysValueWrongType, "nsys_value_wrong_type", kWarning,
     "rows with a value of the wrong type (text, a real, a blob or NULL where the export holds an "
     "integer); dropped, not read as 0"},
    {kNsysValueOutOfRange, "nsys_value_out_of_range", kWarning,
     "rows with an integer too large for what it is (a device or stream id, a grid or block size, "
     "registers, shared memory beyond 32 bits); dropped, not truncated into another value"},

    // Kineto.
    {kKinetoInvalidDevice, "kineto_invalid_device", kWarning,
     "deviceProperties entries without an integer id (ignored)"},
    {kKinetoInvalidEvent, "kineto_invalid_event", kWarning,
     "Kineto events of a mapped category without a usable ts, dur, name, pid or tid (or "
     "device/stream for GPU events), or with such a field of the wrong type; dropped"},
    {kKinetoGpuArgsMissing, "kineto_gpu_args_missing", kInfo,
     "Kineto GPU events without args.device/stream (taken from pid/tid) or args.bytes (size left "
     "0)"},
    {kKinetoGpuIdOutOfRange, "kineto_gpu_id_out_of_range", kWarning,
     "Kineto GPU events whose args.device or args.stream is not an integer that fits (beyond "
     "int64 or int32, or not a number); dropped, never taken as absent and given another device "
     "or stream"},
    {kKinetoSmemSplitUnknown, "kineto_smem_split_unknown", kInfo,
     "kernels with shared memory: Kineto records only static + dynamic together, so both are left "
     "unknown (-1)"},
    {kKinetoMemopNameUnknown, "kineto_memop_name_unknown", kInfo,
     "Kineto memory operations whose name does not say the copy kind or memory kinds (kept as "
     "kind other / memory unknown)"},
    {kKinetoUnmappedMetadata, "kineto_unmapped_metadata", kInfo,
     "Kineto display-only metadata (process/thread sort indices, the profiler's own rows) "
     "ignored"},
    {kKinetoShapesUnreadable, "kineto_shapes_unreadable", kInfo,
     "PyTorch operators recorded with shapes whose args 'Input Dims' or 'Input type' could not be "
     "read (not an array of integer arrays and strings); their shapes are left out (the floor "
     "from GEMM shapes does not count them)"},
    {kKinetoUnmappedGpuUserAnnotation, "kineto_unmapped_gpu_user_annotation", kInfo,
     "Kineto events of category 'gpu_user_annotation' (PyTorch 1.x: 'gpu_user_Annotation', "
     "'User') not mapped: GPU-side copies of "
     "record_function ranges; the host-side user_annotation is kept and projects onto the GPU "
     "through its launches"},
    {kKinetoUnmappedAc2g, "kineto_unmapped_ac2g", kInfo,
     "Kineto events of category 'ac2g' not mapped: flow arrows from a launch to its GPU event; "
     "the link comes from args.correlation"},
    {kKinetoUnmappedAsyncCpuToGpu, "kineto_unmapped_async_cpu_to_gpu", kInfo,
     "Kineto events of category 'async_cpu_to_gpu' (PyTorch 1.x: 'async_gpu', 'async') not "
     "mapped: flow arrows from a launch to its "
     "GPU event; the link comes from args.correlation"},
    {kKinetoUnmappedFwdbwd, "kineto_unmapped_fwdbwd", kInfo,
     "Kineto events of category 'fwdbwd' not mapped: flow arrows from forward to backward "
     "operators"},
    // Not snake_case: the code keeps Kineto's category name as reports have always printed it.
    {kKinetoUnmappedTrace, "kineto_unmapped_Trace", kInfo,
     "Kineto events of category 'Trace' not mapped: the profiler's own span of the capture window "
     "(pid \"Spans\")"},
    {kKinetoUnmappedOverhead, "kineto_unmapped_overhead", kInfo,
     "Kineto events of category 'overhead' not mapped: profiler overhead (CUPTI buffer requests, "
     "lazy function loading)"},
    {kKinetoUnmappedCpuInstantEvent, "kineto_unmapped_cpu_instant_event", kInfo,
     "Kineto events of category 'cpu_instant_event' not mapped: instant events other than the "
     "[memory] allocator records"},
    {kKinetoHostMemoryEvent, "kineto_host_memory_event", kInfo,
     "PyTorch [memory] events of host (CPU) memory (Device Type 0); only GPU memory is read"},
    {kKinetoMemoryEventUnusable, "kineto_memory_event_unusable", kWarning,
     "PyTorch [memory] events without a usable ts, Bytes, Device Id or Device Type, or of a "
     "device type other than CPU and CUDA; dropped"},
    {kKinetoUnmappedCudaSync, "kineto_unmapped_cuda_sync", kInfo,
     "Kineto events of category 'cuda_sync' not mapped: GPU-side synchronization spans; the "
     "host-side cuda_runtime call is kept"},
    {kKinetoUnmappedNoCategory, "kineto_unmapped_no_category", kInfo,
     "Kineto events without a category not mapped: markers such as Iteration Start and Record "
     "Window End"},
    {kKinetoUnmappedCategory, "kineto_unmapped_category", kInfo,
     "Kineto events of a category Sightline does not use; not mapped"},
    {kKinetoUnmappedPhase, "kineto_unmapped_phase", kInfo,
     "Kineto events of a mapped category with a phase other than complete (ph X); not mapped: "
     "only complete events of these categories are used"},

    // Recorder.
    {kRecorderDroppedRecords, "recorder_dropped_records", kWarning,
     "activity records lost while recording; raise `sightline record --buffer-size`"},
    {kRecorderTruncatedChunks, "recorder_truncated_chunks", kWarning,
     "the recording ends in a cut-off or damaged chunk: the process probably died while "
     "recording; everything before it was imported"},
    {kRecorderNotFinished, "recorder_not_finished", kWarning,
     "the recording has no end record: the process exited without running its exit handlers "
     "(crash, kill or _exit); up to the last second of activity may be missing"},
    {kRecorderMalformedRecords, "recorder_malformed_records", kWarning,
     "records whose size overruns their chunk; skipped"},
    {kRecorderReservedStringId, "recorder_reserved_string_id", kWarning,
     "string records with id 0 (the empty string) or 0xFFFFFFFF, ids the recorder never writes; "
     "skipped, and what names them is unnamed"},
    {kRecorderUnpairedRanges, "recorder_unpaired_ranges", kInfo,
     "NVTX ranges whose start or end fell outside the recording (or the capture window)"},
    {kRecorderUnknownRecords, "recorder_unknown_records", kInfo,
     "records of kinds this version does not map; skipped"},
    {kRecorderMissingStrings, "recorder_missing_strings", kWarning,
     "names that refer to a string the file does not hold"},
    {kRecorderSyncRecords, "recorder_sync_records", kInfo,
     "CUPTI synchronization records, not mapped: the host-side synchronize calls are in the API "
     "table"},
    {kRecorderGpuMetricsNotSampled, "recorder_gpu_metrics_not_sampled", kInfo,
     "GPU metrics the recorder asked for but the GPU could not sample (a counter the chip lacks, "
     "or not fitting PM sampling's single pass); absent from the GPU metrics, not zero"},
    {kRecorderGpuMetricsFailed, "recorder_gpu_metrics_failed", kWarning,
     "devices on which PM sampling could not run; no GPU metrics for them"},
    {kRecorderGpuMetricsLost, "recorder_gpu_metrics_lost", kWarning,
     "GPU metric samples lost: the hardware buffer overflowed, or CUPTI could not evaluate them"},
    {kRecorderGpuMetricsAligned, "recorder_gpu_metrics_aligned", kInfo,
     "GPU metric samples checked against the kernels: the shift that best matches GR Active with "
     "the device's kernels and copies, applied when it fits clearly better than none"},
    {kRecorderGpuMetricsNotAligned, "recorder_gpu_metrics_not_aligned", kWarning,
     "GPU metric samples placed by the host's real-time clock, unchecked (too few changes of GR "
     "Active to compare them with the kernels)"},
    {kGraphKernelsWithoutCapture, "graph_kernels_without_capture", kWarning,
     "CUDA graph kernels (traced per node) whose node has no creation record (nsys "
     "CUDA_GRAPH_NODE_EVENTS, the recorder's graph_node records): the graph was captured before "
     "the recording began, or the records were lost; they are not credited to the NVTX ranges "
     "open at their capture (the cuda_graphs section matches them with an eager run instead, "
     "where the trace has one)"},
    {kRecorderSampledGraphTrace, "recorder_sampled_graph_trace", kInfo,
     "CUDA graphs traced by sample (--cuda-graph-trace sampled:N): some replays have their "
     "kernels, the others are whole-graph rows; per-replay figures rest on the sampled ones"},
    {kRecorderRunProcessesUnreadable, "recorder_run_processes_unreadable", kWarning,
     "the run's process tree beside the recording (NAME.processes.json, written by `sightline "
     "record`) names this recording but could not be read; the processes section is left out"},

    // PyTorch memory snapshot.
    {kTorchSnapshotEntryUnusable, "torch_snapshot_entry_unusable", kWarning,
     "memory snapshot history entries or blocks without a usable action, address, size, device or "
     "time (dropped)"},
    {kTorchSnapshotNoTime, "torch_snapshot_no_time", kWarning,
     "memory snapshot history entries without time_us (older PyTorch): placed 1 us apart in their "
     "order, so times are not real"},
    {kTorchSnapshotNoHistory, "torch_snapshot_no_history", kInfo,
     "devices whose memory snapshot has no allocation history: only the blocks alive at the dump "
     "are shown, all at time 0"},
    {kTorchSnapshotOom, "torch_snapshot_oom", kWarning,
     "out-of-memory events in the memory snapshot's history: the program failed to allocate"},
    {kTorchSnapshotTotalsInconsistent, "torch_snapshot_totals_inconsistent", kWarning,
     "devices whose memory snapshot history frees more than the dump's segments explain: the "
     "allocated and reserved totals are clamped at zero"},

    // Nsight Compute.
    {kNcuLinesSkipped, "ncu_lines_skipped", kInfo,
     "lines before the ncu table (ncu's ==PROF== messages and the application's output), "
     "skipped"},

    // TensorRT engine exports.
    {kTrtFieldWrongType, "trt_field_wrong_type", kWarning,
     "fields of a TensorRT export (trtexec, Trex) whose JSON type is not the format's; dropped, "
     "not "
     "converted (the detail names the file kind and field)"},
    {kTrtRecordIncomplete, "trt_record_incomplete", kWarning,
     "profile rows, timing records or layers of a TensorRT export without a required field, or "
     "with a negative or non-finite time; dropped"},
    {kTrtProfileLayerNotInGraph, "trt_profile_layer_not_in_graph", kWarning,
     "profiled layers whose name is not in the engine graph (profile and graph of different "
     "builds?); their time counts in the totals, with no type or precision"},
    // Serving benchmark results.
    {kServingRecordSkipped, "serving_record_skipped", kWarning,
     "per-request records of a benchmark's results left out of the serving figures: another "
     "benchmark phase (warm-up), or no TTFT, latency or output length (the detail says which)"},
    {kServingRunsSkipped, "serving_runs_skipped", kInfo,
     "earlier benchmark runs appended to the same results file (SGLang writes one line per run); "
     "the last run with per-request lists is read"},
};

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kCatalogue); ++i) {
    if (static_cast<size_t>(kCatalogue[i].id) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kCatalogue must list every DiagCode once, in enum order");
static_assert(static_cast<size_t>(kServingRunsSkipped) + 1 == std::size(kCatalogue),
              "a DiagCode after the last catalogue entry has no entry");

}  // namespace

const DiagnosticInfo& Info(DiagCode code) { return kCatalogue[static_cast<size_t>(code)]; }

std::span<const DiagnosticInfo> DiagnosticCatalogue() { return kCatalogue; }

}  // namespace sightline
