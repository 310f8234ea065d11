// RecorderMapper::Finish (recorder_mapper.h): what needs every record of the file read first.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "importers/recorder/gpu_metrics_align.h"
#include "importers/recorder/recorder_mapper.h"

namespace sightline {

void RecorderMapper::Finish(const std::string& path, const recfmt::ReadSummary& summary) {
  AddGraphNodeKernels();
  AddGraphCreations();
  AddMetricSamples();
  SetSource(path, summary);
  NoteRecordDiagnostics(summary);
  NoteGpuMetricsDiagnostics();
}

// Graphs created, cloned and instantiated into Trace::graph_creations, under the ids the records
// of their runs carry. CUPTI gives a whole-graph run (and a graph kernel) the id of the executable
// graph, which is also the id of the graph the driver creates for it at instantiation (seen on an
// H200 with CUDA 13.0: a capture creates graph 1, instantiating it creates graphs 2 and 3 and
// executable graph 2, and the runs say graph 2; nsys's export shows them as graphExecId 2 of
// graphId 1). So an executable graph's id takes the creation of the graph it was instantiated
// from, and a graph cloned from another (cudaGraphClone) its original's: their work is that
// capture's. Chains are followed at most 16 steps; an id created twice keeps its first record.
// Ids and threads are cast as the API calls' are, so that they compare equal.
void RecorderMapper::AddGraphCreations() {
  std::unordered_map<uint32_t, const recfmt::GraphEventBody*> created;
  for (const recfmt::GraphEventBody& e : graphs_created_) created.try_emplace(e.graph_id, &e);
  std::unordered_map<uint32_t, uint32_t> origin_of;  // executable or clone -> its graph
  for (const recfmt::GraphEventBody& e : graphs_derived_) {
    const uint32_t id = e.graph_exec_id != 0 ? e.graph_exec_id : e.graph_id;
    const uint32_t from = e.graph_exec_id != 0 ? e.graph_id : e.original_graph_id;
    if (id != 0 && from != 0 && from != id) origin_of.try_emplace(id, from);
  }
  // The creation a derived id leads to: follow executables and clones to a graph that was created
  // and is not itself derived (the driver's own creation of an executable's graph is no capture).
  auto origin = [&](uint32_t id) -> const recfmt::GraphEventBody* {
    for (int hops = 0; hops < 16; ++hops) {
      const auto up = origin_of.find(id);
      if (up == origin_of.end()) {
        const auto c = created.find(id);
        return hops > 0 && c != created.end() ? c->second : nullptr;
      }
      id = up->second;
    }
    return nullptr;
  };
  auto add = [&](uint32_t id, const recfmt::GraphEventBody& c) {
    b_.AddGraphCreation({id, c.time_ns, static_cast<int32_t>(c.pid), static_cast<int32_t>(c.tid)});
  };
  std::unordered_set<uint32_t> added;
  for (const recfmt::GraphEventBody& e : graphs_created_) {
    if (origin_of.count(e.graph_id) == 0 && added.insert(e.graph_id).second) add(e.graph_id, e);
  }
  for (const recfmt::GraphEventBody& e : graphs_derived_) {  // in file order: a stable result
    const uint32_t id = e.graph_exec_id != 0 ? e.graph_exec_id : e.graph_id;
    if (added.count(id) != 0) continue;
    const recfmt::GraphEventBody* c = origin(id);
    if (c != nullptr && added.insert(id).second) add(id, *c);
  }
}

// GPU metric samples into the counters, per device shifted onto the kernels' clock when the
// data pins the shift down.
void RecorderMapper::AddMetricSamples() {
  Diagnostics& d = b_.diagnostics();
  std::map<uint32_t, DurationNs> shift;
  for (const auto& [device, names] : metric_names_) {
    const StringId gr_name = b_.Intern("GR Active [Throughput %]");
    const size_t gr =
        static_cast<size_t>(std::find(names.begin(), names.end(), gr_name) - names.begin());
    std::vector<MetricAlignSample> fit;
    for (const PendingSample& p : samples_) {
      if (p.device == device && gr < p.count) {
        fit.push_back({p.start_ns, p.end_ns, sample_values_[p.first + gr]});
      }
    }
    if (fit.empty()) continue;
    const MetricAlignment a = AlignMetricSamples(busy_[device], fit);
    if (a.checked) {
      shift[device] = a.shift_ns;
      d.Add(DiagCode::kRecorderGpuMetricsAligned, static_cast<int64_t>(fit.size()),
            fmt::format("device {}: best-fitting shift {:+.1f} us, applied {:+.1f} us ({} samples "
                        "at changes of GR Active; mismatch {:.4f} -> {:.4f})",
                        device, static_cast<double>(a.best_ns) / 1e3,
                        static_cast<double>(a.shift_ns) / 1e3, a.transitions, a.error_before,
                        a.error_after));
    } else {
      d.Add(DiagCode::kRecorderGpuMetricsNotAligned, static_cast<int64_t>(fit.size()),
            fmt::format("device {}: {} samples at changes of GR Active", device, a.transitions));
    }
  }
  for (const PendingSample& p : samples_) {
    const auto names = metric_names_.find(p.device);
    const auto sh = shift.find(p.device);
    const DurationNs by = sh == shift.end() ? 0 : sh->second;
    for (uint32_t i = 0; i < p.count; ++i) {
      if (names->second[i].value == 0) continue;  // an index no metric record named
      b_.AddCounter(p.start_ns + by, static_cast<int32_t>(p.device), names->second[i],
                    sample_values_[p.first + i]);
    }
  }
}

// Graph kernels with the capture of their node (model/graph_nodes.h), counting those whose
// node has no creation record.
void RecorderMapper::AddGraphNodeKernels() {
  int64_t without = 0;
  std::unordered_set<int64_t> missing_nodes;
  for (KernelRow& row : graph_node_kernels_) {
    if (!graph_nodes_.FillCapture(row)) {
      ++without;
      missing_nodes.insert(row.graph_node);
    }
    b_.AddKernel(row);
  }
  if (without > 0) {
    b_.diagnostics().Add(
        DiagCode::kGraphKernelsWithoutCapture, without,
        fmt::format("{} of {} graph kernels, {} distinct nodes; the file has {} node records{}",
                    without, graph_node_kernels_.size(), missing_nodes.size(), graph_nodes_.size(),
                    drops_.graph_node_dropped_records > 0
                        ? fmt::format(", {} were dropped while recording",
                                      drops_.graph_node_dropped_records)
                        : std::string()));
  }
  graph_node_kernels_.clear();
}

void RecorderMapper::SetSource(const std::string& path, const recfmt::ReadSummary& summary) {
  TraceSource& src = b_.source();
  src.path = path;
  src.format = "sightline-recorder";
  src.format_version = std::to_string(summary.version);
  src.producer = "sightline record (CUPTI)";
  if (!have_process_) return;
  src.rank = process_.rank;
  src.world_size = process_.world_size;
  // The host a rank ran on: ranks of one host share a clock (analyses/ranks/ranks.h).
  src.host = std::string(Text(process_.hostname_string));
  src.producer =
      fmt::format("sightline record (CUPTI API {}), capture range {}", process_.cupti_version,
                  process_.capture_range == 1 ? "cudaProfilerApi" : "none");
  if (process_.capture_range == 1) src.producer += fmt::format(", {} window(s)", windows_);
}

// What was lost or left out while recording and reading, and how graphs were traced.
void RecorderMapper::NoteRecordDiagnostics(const recfmt::ReadSummary& summary) {
  Diagnostics& d = b_.diagnostics();
  const int64_t dropped =
      static_cast<int64_t>(drops_.cupti_dropped_records + drops_.queue_dropped_records);
  if (dropped > 0) {
    d.Add(DiagCode::kRecorderDroppedRecords, dropped,
          fmt::format("{} CUPTI had no buffer for, {} the writer could not keep up with",
                      drops_.cupti_dropped_records, drops_.queue_dropped_records));
  }
  if (summary.bad_chunks > 0) {
    d.Add(DiagCode::kRecorderTruncatedChunks, static_cast<int64_t>(summary.bad_chunks),
          fmt::format("{} bytes not read", summary.unread_bytes));
  } else if (!have_end_) {
    d.Add(DiagCode::kRecorderNotFinished);
  }
  if (summary.malformed_records + malformed_ > 0) {
    d.Add(DiagCode::kRecorderMalformedRecords,
          static_cast<int64_t>(summary.malformed_records + malformed_));
  }
  if (drops_.unpaired_ranges > 0) {
    d.Add(DiagCode::kRecorderUnpairedRanges, static_cast<int64_t>(drops_.unpaired_ranges));
  }
  if (drops_.unknown_records + unknown_types_ > 0) {
    d.Add(DiagCode::kRecorderUnknownRecords,
          static_cast<int64_t>(drops_.unknown_records + unknown_types_));
  }
  if (missing_strings_ > 0) d.Add(DiagCode::kRecorderMissingStrings, missing_strings_);
  if (reserved_string_ids_ > 0) {
    d.Add(DiagCode::kRecorderReservedStringId, static_cast<int64_t>(reserved_string_ids_));
  }
  NoteWholeGraphRuns(d, whole_graphs_);
  if (process_.graph_trace_sample > 0) {
    // Which replays were traced node by node is told by the records themselves: a launch whose
    // kernels are in the file (graph id set) was; one with a whole-graph record was not.
    d.Add(DiagCode::kRecorderSampledGraphTrace, static_cast<int64_t>(node_traced_launches_.size()),
          fmt::format("sampled:{}: {} graph launches traced node by node, {} as whole graphs",
                      process_.graph_trace_sample, node_traced_launches_.size(),
                      whole_graph_launches_.size()));
  }
  if (sync_records_ > 0) d.Add(DiagCode::kRecorderSyncRecords, sync_records_);
}

// GPU metrics not sampled, failed or lost, per device.
void RecorderMapper::NoteGpuMetricsDiagnostics() {
  Diagnostics& d = b_.diagnostics();
  for (const std::string& m : not_sampled_) d.Add(DiagCode::kRecorderGpuMetricsNotSampled, 1, m);
  for (const auto& [device, status] : metrics_status_) {
    const recfmt::GpuMetricsStatusBody& st = status.first;
    if (!status.second.empty()) {
      d.Add(DiagCode::kRecorderGpuMetricsFailed, 1,
            fmt::format("device {}: {}", device, status.second));
    }
    if (st.overflows + st.failed_samples > 0) {
      d.Add(DiagCode::kRecorderGpuMetricsLost,
            static_cast<int64_t>(st.overflows + st.failed_samples),
            fmt::format("device {}: {} hardware buffer overflow(s), {} sample(s) not evaluated",
                        device, st.overflows, st.failed_samples));
    }
  }
}

}  // namespace sightline
