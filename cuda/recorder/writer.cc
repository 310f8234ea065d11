#include "writer.h"

#include <cupti.h>
#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sightline::recorder {
namespace {

using recfmt::RecordType;

constexpr size_t kChunkFlushBytes = 1 << 20;         // a chunk is written once it holds this much
constexpr int64_t kFlushIntervalNs = 1'000'000'000;  // or when it is this old

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Activity buffers: CUPTI needs 8-byte alignment.
uint8_t* NewBuffer(size_t bytes) { return static_cast<uint8_t*>(std::aligned_alloc(8, bytes)); }

}  // namespace

Writer::Writer(int fd, size_t buffer_bytes, size_t max_queued_buffers, size_t prefaulted_buffers)
    : fd_(fd), buffer_bytes_(buffer_bytes), max_queued_(max_queued_buffers) {
  for (size_t i = 0; i < prefaulted_buffers; ++i) {
    uint8_t* b = NewBuffer(buffer_bytes_);
    if (b == nullptr) break;
    std::memset(b, 0, buffer_bytes_);
    pool_.push_back(b);
  }
  const std::string header = recfmt::FileHeaderBytes();
  if (!WriteAll(fd_, header.data(), header.size())) StopWriting();
}

// A failed write (disk full, I/O error) ends the recording, said once; the program runs on with its
// own exit status, and what was written before stays readable (docs/reliability.md).
void Writer::StopWriting() {
  std::fprintf(stderr,
               "sightline-recorder: cannot write the recording: %s; recording stops here, what "
               "was written before stays readable, the program runs on\n",
               std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
}

uint8_t* Writer::AcquireBuffer(size_t* size) {
  *size = buffer_bytes_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      uint8_t* b = pool_.back();
      pool_.pop_back();
      return b;
    }
  }
  uint8_t* b = NewBuffer(buffer_bytes_);
  if (b != nullptr) std::memset(b, 0, buffer_bytes_);
  return b;
}

// Buffers go back to the pool zeroed (only the part CUPTI wrote), as they were first handed out.
void Writer::ReleaseBuffer(uint8_t* buffer, size_t used) {
  std::memset(buffer, 0, std::min(used, buffer_bytes_));
  std::lock_guard<std::mutex> lock(mu_);
  pool_.push_back(buffer);
}

void Writer::AddCuptiDropped(uint64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(drop_mu_);
  cupti_dropped_ += n;
  drops_changed_ = true;
}

void Writer::Post(uint8_t* buffer, size_t valid_bytes) {
  if (buffer == nullptr) return;
  if (valid_bytes == 0) {
    ReleaseBuffer(buffer, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!finished_ && queue_.size() < max_queued_) {
      Item item;
      item.buffer = buffer;
      item.valid = valid_bytes;
      queue_.push_back(std::move(item));
      cv_.notify_one();
      return;
    }
  }
  // Queue full (the writer cannot keep up) or already finished: count what is lost.
  uint64_t n = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) ++n;
  {
    std::lock_guard<std::mutex> lock(drop_mu_);
    queue_dropped_ += n;
    drops_changed_ = true;
  }
  ReleaseBuffer(buffer, valid_bytes);
}

void Writer::AddGraphNode(const recfmt::GraphNodeBody& node) {
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    if (pending_nodes_.size() < kMaxPendingGraphNodes) {
      pending_nodes_.push_back(node);
      return;
    }
    ++node_dropped_;
  }
  std::lock_guard<std::mutex> lock(drop_mu_);
  drops_changed_ = true;
}

void Writer::AddGraphNodeDropped() {
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    ++node_dropped_;
  }
  std::lock_guard<std::mutex> lock(drop_mu_);
  drops_changed_ = true;
}

// The pending list is swapped with an empty one of the same capacity, so appending stays
// allocation-free after the first captures.
void Writer::DrainGraphNodes() {
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    if (pending_nodes_.empty()) return;
    pending_nodes_.swap(draining_nodes_);
  }
  for (const recfmt::GraphNodeBody& n : draining_nodes_) {
    if (gate_ranges_) capture_ranges_.AddNode(n.tid, n.time_ns);
    NoteThread(n.pid, n.tid);
    chunk_.Add(RecordType::kGraphNode, n);
    if (chunk_.payload_bytes() >= kChunkFlushBytes) WriteChunk();
  }
  draining_nodes_.clear();
}

bool Writer::KeepRange(const recfmt::RangeBody& range) {
  if (!gate_ranges_) return true;
  const CaptureRangeFilter::Verdict v =
      capture_ranges_.Judge(window_gate_, range.tid, range.start_ns, range.end_ns);
  if (v == CaptureRangeFilter::Verdict::kKeep) return true;
  if (v == CaptureRangeFilter::Verdict::kUnpaired) {
    ++unpaired_ranges_;  // as when the markers were switched at the window's edge
    std::lock_guard<std::mutex> lock(drop_mu_);
    drops_changed_ = true;
  }
  return false;
}

void Writer::PostRecord(RecordType type, const void* body, size_t n,
                        std::vector<StringField> strings) {
  Item item;
  item.type = type;
  item.record.assign(static_cast<const char*>(body), n);
  item.strings = std::move(strings);
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  queue_.push_back(std::move(item));
  cv_.notify_one();
}

void Writer::Start() {
  last_write_ns_ = SteadyNs();
  thread_ = std::thread([this] { Run(); });
}

void Writer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(500),
                 [this] { return stopping_ || !queue_.empty(); });
    while (!queue_.empty()) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      if (item.buffer != nullptr) {
        Translate(item.buffer, item.valid);
        ReleaseBuffer(item.buffer, item.valid);
      } else {
        AppendPosted(item);
      }
      if (chunk_.payload_bytes() >= kChunkFlushBytes) WriteChunk();
      lock.lock();
    }
    const bool stop = stopping_;
    lock.unlock();
    DrainGraphNodes();
    WriteDrops();
    if (!chunk_.empty() && (stop || SteadyNs() - last_write_ns_ >= kFlushIntervalNs)) WriteChunk();
    lock.lock();
    if (stop && queue_.empty()) return;
  }
}

void Writer::AppendPosted(Item& item) {
  for (const StringField& f : item.strings) {
    const uint32_t id = Intern(f.text.c_str(), false);
    if (f.offset + sizeof id <= item.record.size()) {
      std::memcpy(item.record.data() + f.offset, &id, sizeof id);
    }
  }
  chunk_.AddRaw(item.type, item.record.data(), item.record.size());
}

void Writer::WriteDrops() {
  recfmt::DropsBody d{};
  {
    std::lock_guard<std::mutex> lock(drop_mu_);
    if (!drops_changed_) return;
    drops_changed_ = false;
    d.cupti_dropped_records = cupti_dropped_;
    d.queue_dropped_records = queue_dropped_;
  }
  d.unpaired_ranges = unpaired_ranges_;
  d.unknown_records = unknown_records_;
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    d.graph_node_dropped_records = node_dropped_;
  }
  chunk_.Add(RecordType::kDrops, d);
}

void Writer::WriteChunk() {
  if (chunk_.empty()) return;
  records_written_ += chunk_.record_count();
  const std::string bytes = chunk_.Finish();
  if (fd_ >= 0 && !WriteAll(fd_, bytes.data(), bytes.size())) StopWriting();
  last_write_ns_ = SteadyNs();
}

void Writer::Finish(uint32_t capture_windows) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  DrainGraphNodes();  // nodes added while the thread was ending
  // Ranges still open at exit are counted, not invented (with whole-run markers, those that
  // started in a window).
  for (const auto& [id, open] : open_ranges_) {
    if (!gate_ranges_ || window_gate_.Contains(open.body.start_ns)) ++unpaired_ranges_;
  }
  {
    std::lock_guard<std::mutex> lock(drop_mu_);
    drops_changed_ = true;
  }
  WriteDrops();
  recfmt::EndBody end{};
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  end.end_cupti_ns = static_cast<int64_t>(ts);
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  end.end_realtime_ns = t.tv_sec * 1'000'000'000LL + t.tv_nsec;
  clock_gettime(CLOCK_MONOTONIC, &t);
  end.end_monotonic_ns = t.tv_sec * 1'000'000'000LL + t.tv_nsec;
  end.records_written = records_written_ + chunk_.record_count();
  end.capture_windows = capture_windows;
  chunk_.Add(RecordType::kEnd, end);
  WriteChunk();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

uint32_t Writer::Intern(const char* s, bool demangle) {
  if (s == nullptr || *s == '\0') return recfmt::kNoString;
  auto it = strings_.find(s);
  if (it != strings_.end()) return it->second;
  const uint32_t id = next_string_++;
  std::string text = s;
  if (demangle && text.size() > 2 && text[0] == '_' && text[1] == 'Z') {
    int status = 0;
    char* d = abi::__cxa_demangle(s, nullptr, nullptr, &status);
    if (status == 0 && d != nullptr) text = d;
    std::free(d);
  }
  chunk_.AddString(id, text);
  auto inserted = strings_.emplace(s, id).first;
  texts_.resize(id + 1, nullptr);
  texts_[id] = &inserted->first;
  return id;
}

uint32_t Writer::InternKernelName(const char* s) {
  if (s == nullptr) return recfmt::kNoString;
  auto it = kernel_name_ptrs_.find(s);
  if (it != kernel_name_ptrs_.end() && std::strcmp(texts_[it->second]->c_str(), s) == 0) {
    return it->second;
  }
  const uint32_t id = Intern(s, true);
  kernel_name_ptrs_[s] = id;
  return id;
}

uint32_t Writer::InternApiName(uint32_t domain, uint32_t cbid) {
  const uint64_t key = (uint64_t{domain} << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const char* name = nullptr;
  cuptiGetCallbackName(domain == static_cast<uint32_t>(recfmt::ApiDomain::kRuntime)
                           ? CUPTI_CB_DOMAIN_RUNTIME_API
                           : CUPTI_CB_DOMAIN_DRIVER_API,
                       cbid, &name);
  std::string text = name ? name : "cbid_" + std::to_string(cbid);
  const size_t v = text.find("_v");  // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"
  if (v != std::string::npos && v + 2 < text.size() &&
      text.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    text.resize(v);
  }
  const uint32_t id = Intern(text.c_str(), false);
  api_names_.emplace(key, id);
  return id;
}

}  // namespace sightline::recorder
