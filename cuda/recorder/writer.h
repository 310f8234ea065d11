// The recorder's writer: CUPTI hands completed activity buffers to Post() on its own thread; a
// writer thread translates them into recorder-format records (src/shared/recorder_format.h)
// and appends chunks to the output file, so the application's threads never format or write.
// The queue between them is bounded: when it is full a buffer's records are counted as dropped.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture_ranges.h"
#include "capture_window_gate.h"
#include "nested_driver_filter.h"
#include "shared/recorder_format.h"
#include "thread_names.h"

namespace sightline::recorder {

class Writer {
 public:
  // Takes ownership of fd (open for writing, file header not yet written). `prefaulted_buffers`
  // buffers are allocated and touched now, on the starting thread, so that CUPTI filling them later
  // on the application's threads takes no first-touch page faults.
  Writer(int fd, size_t buffer_bytes, size_t max_queued_buffers, size_t prefaulted_buffers = 0);

  // Set before Start(): only the driver API's launch calls are recorded, so a driver record nested
  // in a runtime call with the same correlation id is left out (the runtime record stands for it).
  void DropNestedDriverLaunches(bool on) { nested_driver_launches_ = on; }
  // Set before Start(): with a capture range, driver API records (enabled for the whole run: the
  // launch calls) are kept only when they start inside a window that WindowOpened/WindowClosed
  // (any thread, in time order) have reported (capture_window_gate.h).
  void GateDriverRecordsByWindow(bool on) { gate_driver_records_ = on; }
  // Set before Start(): with a capture range, whole-graph records (GRAPH_TRACE, enabled for the
  // whole run: State::graph_trace_whole_run) are kept only when they start inside a window.
  void GateGraphRecordsByWindow(bool on) { gate_graph_records_ = on; }
  // Set before Start(): with a capture range and graph node records, NVTX markers stay enabled for
  // the whole run, and the writer keeps a range when both its ends lie in windows (as when the
  // markers were switched with the windows) or when a graph node was created inside it on its
  // thread (the ranges open while a graph was captured, usually before the first window; without
  // them the graph's kernels could not be given to the layers that captured them). Others are
  // left out as before (counted unpaired when one end is in a window).
  void GateRangesByWindow(bool on) { gate_ranges_ = on; }
  void WindowOpened(int64_t start_ns) { window_gate_.Open(start_ns); }
  void WindowClosed(int64_t end_ns) { window_gate_.Close(end_ns); }

  // CUPTI buffer management (any thread).
  uint8_t* AcquireBuffer(size_t* size);
  // A completed buffer; Post takes it back (to the queue, or to the pool when dropped).
  void Post(uint8_t* buffer, size_t valid_bytes);
  void AddCuptiDropped(uint64_t n);

  // A record made outside CUPTI buffers (process info, capture windows); strings are interned by
  // the writer thread: `strings` lists (field offset in body, text) pairs to fill in.
  struct StringField {
    size_t offset;
    std::string text;
  };
  void PostRecord(recfmt::RecordType type, const void* body, size_t n,
                  std::vector<StringField> strings = {});

  // A CUDA graph node created or cloned, from CUPTI's resource callback on the application's
  // thread: one short lock and an append to a pending list the writer thread drains (no
  // allocation once the list has grown). Beyond kMaxPendingGraphNodes pending the record is
  // counted as dropped. Never gated by capture windows.
  void AddGraphNode(const recfmt::GraphNodeBody& node);
  // A graph node the recorder could not record (CUPTI gave no id): counted with the dropped ones.
  void AddGraphNodeDropped();
  static constexpr size_t kMaxPendingGraphNodes = 1 << 20;  // 48 MiB of bodies

  void Start();
  // Drains the queue, writes the drop counts and the end record, closes the file. Idempotent.
  void Finish(uint32_t capture_windows);

  uint64_t records_written() const { return records_written_; }

  // One CUPTI activity record into the file's next chunk: the writer thread's work, and a test's
  // on a writer never started (Finish then writes what it added).
  void TranslateOne(const void* record);

 private:
  struct Item {
    uint8_t* buffer = nullptr;
    size_t valid = 0;
    std::string record;  // a ready record body when buffer == nullptr
    recfmt::RecordType type{};
    std::vector<StringField> strings;
  };
  void AppendPosted(Item& item);
  void CloseMarker(const void* marker);

  void Run();
  void Translate(uint8_t* buffer, size_t valid);
  uint32_t Intern(const char* s, bool demangle);
  uint32_t InternKernelName(const char* s);
  uint32_t InternApiName(uint32_t domain, uint32_t cbid);
  // Writes a thread record (its name) the first time (pid, tid) is seen.
  void NoteThread(uint32_t pid, uint32_t tid);
  void WriteChunk();
  void StopWriting();  // after a failed write: one message, the file closed, nothing more written
  void WriteDrops();
  void ReleaseBuffer(uint8_t* buffer, size_t used);
  void DrainGraphNodes();  // writer thread (or Finish, after it)
  // Whether a finished range is written (gate_ranges_: CaptureRangeFilter); counts it unpaired
  // when it is not and one end lay in a window.
  bool KeepRange(const recfmt::RangeBody& range);

  int fd_;
  const size_t buffer_bytes_;
  const size_t max_queued_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::vector<uint8_t*> pool_;
  bool stopping_ = false;
  bool finished_ = false;
  std::thread thread_;

  // Any thread (internally locked).
  CaptureWindowGate window_gate_;

  // Owned by the writer thread.
  bool nested_driver_launches_ = false;
  bool gate_driver_records_ = false;
  bool gate_graph_records_ = false;
  bool gate_ranges_ = false;
  CaptureRangeFilter capture_ranges_;  // gate_ranges_: graph node creation times per thread
  NestedDriverLaunchFilter nested_filter_;
  ThreadNamer thread_namer_;
  recfmt::ChunkBuilder chunk_;
  uint64_t records_written_ = 0;
  int64_t last_write_ns_ = 0;
  std::unordered_map<std::string, uint32_t> strings_;
  // Kernel names are pointers CUPTI shares between records of one kernel: a cheap first lookup,
  // checked against the text in case an unloaded module's memory was reused.
  std::unordered_map<const char*, uint32_t> kernel_name_ptrs_;
  std::vector<const std::string*> texts_;             // by string id, pointing into strings_' keys
  std::unordered_map<uint64_t, uint32_t> api_names_;  // (domain << 32 | cbid) -> string id
  struct OpenRange {
    recfmt::RangeBody body;
  };
  std::unordered_map<uint32_t, OpenRange> open_ranges_;                // by CUPTI marker id
  std::unordered_map<uint32_t, std::vector<uint32_t>> thread_stacks_;  // tid -> open marker ids
  uint32_t next_string_ = 1;
  uint64_t unpaired_ranges_ = 0, unknown_records_ = 0;

  // Graph node creations (any thread), swapped out by the writer thread.
  std::mutex node_mu_;
  std::vector<recfmt::GraphNodeBody> pending_nodes_, draining_nodes_;
  uint64_t node_dropped_ = 0;  // under node_mu_

  // Any thread.
  std::mutex drop_mu_;
  uint64_t cupti_dropped_ = 0, queue_dropped_ = 0;
  bool drops_changed_ = false;
};

}  // namespace sightline::recorder
