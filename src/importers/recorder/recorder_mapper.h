// RecorderMapper: the records of one recorder file (recording/recorder_format.h) into a
// TraceBuilder, one function per record type (recorder_mapper.cc); then, once every record is read,
// what needs them all: graph kernels with their capture, GPU metric samples on the kernels' clock,
// the trace's source and the diagnostics (recorder_mapper_finish.cc). Internal to the recorder
// importer (recorder_importer.h says what maps to what).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/graph_nodes.h"
#include "model/trace_builder.h"
#include "shared/recorder_format.h"

namespace sightline {

class RecorderMapper {
 public:
  explicit RecorderMapper(TraceBuilder& b) : b_(b) {}

  // One record, in file order; a type this reader does not know is counted.
  void Visit(recfmt::RecordType type, std::string_view body);
  // After the last record.
  void Finish(const std::string& path, const recfmt::ReadSummary& summary);
  // The file's process record; null when it had none.
  const recfmt::ProcessBody* process() const { return have_process_ ? &process_ : nullptr; }
  // The file's end record; null when it had none (the process did not finish).
  const recfmt::EndBody* end() const { return have_end_ ? &end_ : nullptr; }

 private:
  // One per record type (recorder_mapper.cc).
  void MapString(std::string_view body);
  void MapProcess(std::string_view body);
  void MapDevice(std::string_view body);
  void MapKernel(std::string_view body);
  void MapGraph(std::string_view body);
  void MapMemcpy(std::string_view body);
  void MapMemset(std::string_view body);
  void MapApiCall(std::string_view body);
  void MapRange(std::string_view body);
  void MapThread(std::string_view body);
  void MapGpuMetric(std::string_view body);
  void MapGpuMetricSample(std::string_view body);
  void MapGpuMetricsStatus(std::string_view body);
  void MapMemory(std::string_view body);
  void MapMemoryPool(std::string_view body);
  void MapGraphNode(std::string_view body);
  void MapGraphEvent(std::string_view body);

  // Finish's parts (recorder_mapper_finish.cc).
  void AddGraphNodeKernels();
  void AddGraphCreations();
  void AddMetricSamples();
  void SetSource(const std::string& path, const recfmt::ReadSummary& summary);
  void NoteRecordDiagnostics(const recfmt::ReadSummary& summary);
  void NoteGpuMetricsDiagnostics();

  // The writer numbers strings 1, 2, 3, ...: those ids index a dense table. An id far beyond the
  // strings seen so far (a damaged or hostile file) goes to a map, so that no id sizes memory.
  struct FileString {
    std::string_view text;
    StringId id;
  };
  void PutString(uint32_t id, std::string_view text);
  const FileString* FindString(uint32_t id) const;
  // The text of a file string id; empty when the file has none.
  std::string_view Text(uint32_t id) const;
  // The interned string of a file string id; `fallback` (counted as missing unless the id is
  // kNoString) when the file has none or it is empty.
  StringId Id(uint32_t id, std::string_view fallback);

  TraceBuilder& b_;
  std::vector<FileString> strings_;  // by file string id; texts are views into the file's bytes
  std::unordered_map<uint32_t, FileString> sparse_strings_;
  size_t strings_seen_ = 0;
  int32_t pid_ = -1;
  recfmt::ProcessBody process_{};
  bool have_process_ = false;
  recfmt::DropsBody drops_{};
  recfmt::EndBody end_{};
  bool have_end_ = false;
  int64_t sync_records_ = 0, windows_ = 0, missing_strings_ = 0;
  uint64_t malformed_ = 0, unknown_types_ = 0;
  uint64_t reserved_string_ids_ = 0;  // string records of id 0 or 0xFFFFFFFF
  int64_t whole_graphs_ = 0;
  // Correlation ids of graph launches traced node by node (their kernels carry a graph id) and as
  // whole graphs.
  std::unordered_set<uint32_t> node_traced_launches_, whole_graph_launches_;
  int64_t pool_records_ = 0;
  // Graph kernels wait for the node records (which may follow them) to learn their capture.
  GraphNodeIndex graph_nodes_;
  std::vector<KernelRow> graph_node_kernels_;
  // Graphs created, and graphs cloned or instantiated from another (graph_event records), turned
  // into Trace::graph_creations in Finish().
  std::vector<recfmt::GraphEventBody> graphs_created_, graphs_derived_;
  // GPU metrics: per device, the sampled metrics by index; what was not sampled; the last status.
  static constexpr uint32_t kMaxMetricsPerDevice = 4096;
  std::map<uint32_t, std::vector<StringId>> metric_names_;
  std::vector<std::string> not_sampled_;
  struct PendingSample {
    TimeNs start_ns = 0, end_ns = 0;
    uint32_t device = 0, count = 0;
    size_t first = 0;  // in sample_values_
  };
  std::vector<PendingSample> samples_;
  std::vector<double> sample_values_;
  std::map<uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> busy_;  // kernels, copies by device
  std::map<uint32_t, std::pair<recfmt::GpuMetricsStatusBody, std::string>> metrics_status_;
};

}  // namespace sightline
