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

void Writer::Translate(uint8_t* buffer, size_t valid) {
  // Nodes first: a node created inside a range was added before the range's end marker was
  // recorded, so before this buffer was completed; the ranges below can ask about it.
  DrainGraphNodes();
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    TranslateOne(record);
  }
  nested_filter_.Flush([this](const recfmt::ApiBody& api) { chunk_.Add(RecordType::kApi, api); });
}

void Writer::TranslateOne(const void* raw) {
  const auto* rec = static_cast<const CUpti_Activity*>(raw);
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = static_cast<const CUpti_ActivityKernel10*>(raw);
      recfmt::KernelBody b{};
      b.start_ns = static_cast<int64_t>(k->start);
      b.end_ns = static_cast<int64_t>(k->end);
      b.graph_node_id = k->graphNodeId;
      b.device = k->deviceId;
      b.context = k->contextId;
      b.stream = k->streamId;
      b.correlation = k->correlationId;
      b.grid_x = k->gridX;
      b.grid_y = k->gridY;
      b.grid_z = k->gridZ;
      b.block_x = k->blockX;
      b.block_y = k->blockY;
      b.block_z = k->blockZ;
      b.registers_per_thread = k->registersPerThread;
      b.static_smem_bytes = k->staticSharedMemory;
      b.dynamic_smem_bytes = k->dynamicSharedMemory;
      b.name_string = InternKernelName(k->name);
      b.graph_id = k->graphId;
      b.launch_type = k->launchType;
      chunk_.Add(RecordType::kKernel, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      const auto* g = static_cast<const CUpti_ActivityGraphTrace2*>(raw);
      recfmt::GraphBody b{};
      b.start_ns = static_cast<int64_t>(g->start);
      b.end_ns = static_cast<int64_t>(g->end);
      b.device = g->deviceId;
      b.context = g->contextId;
      b.stream = g->streamId;
      b.correlation = g->correlationId;
      b.graph_id = g->graphId;
      b.end_device = g->endDeviceId;
      chunk_.Add(RecordType::kGraph, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = static_cast<const CUpti_ActivityMemcpy6*>(raw);
      recfmt::MemcpyBody b{};
      b.start_ns = static_cast<int64_t>(m->start);
      b.end_ns = static_cast<int64_t>(m->end);
      b.bytes = m->bytes;
      b.graph_node_id = m->graphNodeId;
      b.device = m->deviceId;
      b.context = m->contextId;
      b.stream = m->streamId;
      b.correlation = m->correlationId;
      b.graph_id = m->graphId;
      b.src_device = b.dst_device = m->deviceId;
      b.copy_kind = m->copyKind;
      b.src_kind = m->srcKind;
      b.dst_kind = m->dstKind;
      b.flags = m->flags;
      chunk_.Add(RecordType::kMemcpy, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = static_cast<const CUpti_ActivityMemcpyPtoP4*>(raw);
      recfmt::MemcpyBody b{};
      b.start_ns = static_cast<int64_t>(m->start);
      b.end_ns = static_cast<int64_t>(m->end);
      b.bytes = m->bytes;
      b.graph_node_id = m->graphNodeId;
      b.device = m->deviceId;
      b.context = m->contextId;
      b.stream = m->streamId;
      b.correlation = m->correlationId;
      b.graph_id = m->graphId;
      b.src_device = m->srcDeviceId;
      b.dst_device = m->dstDeviceId;
      b.copy_kind = m->copyKind;
      b.src_kind = m->srcKind;
      b.dst_kind = m->dstKind;
      b.flags = m->flags;
      chunk_.Add(RecordType::kMemcpy, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = static_cast<const CUpti_ActivityMemset4*>(raw);
      recfmt::MemsetBody b{};
      b.start_ns = static_cast<int64_t>(m->start);
      b.end_ns = static_cast<int64_t>(m->end);
      b.bytes = m->bytes;
      b.graph_node_id = m->graphNodeId;
      b.device = m->deviceId;
      b.context = m->contextId;
      b.stream = m->streamId;
      b.correlation = m->correlationId;
      b.graph_id = m->graphId;
      b.value = m->value;
      b.memory_kind = m->memoryKind;
      b.flags = m->flags;
      chunk_.Add(RecordType::kMemset, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = static_cast<const CUpti_ActivityAPI*>(raw);
      if (rec->kind == CUPTI_ACTIVITY_KIND_DRIVER && gate_driver_records_ &&
          !window_gate_.Contains(static_cast<int64_t>(a->start))) {
        return;  // a launch call outside every capture window
      }
      const auto domain = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? recfmt::ApiDomain::kRuntime
                                                                   : recfmt::ApiDomain::kDriver;
      recfmt::ApiBody b{};
      b.start_ns = static_cast<int64_t>(a->start);
      b.end_ns = static_cast<int64_t>(a->end);
      b.pid = a->processId;
      b.tid = a->threadId;
      b.correlation = a->correlationId;
      b.cbid = a->cbid;
      b.domain = static_cast<uint32_t>(domain);
      b.name_string = InternApiName(b.domain, a->cbid);
      b.return_value = a->returnValue;
      NoteThread(b.pid, b.tid);
      if (nested_driver_launches_) {
        nested_filter_.Add(
            b, [this](const recfmt::ApiBody& api) { chunk_.Add(RecordType::kApi, api); });
      } else {
        chunk_.Add(RecordType::kApi, b);
      }
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = static_cast<const CUpti_ActivitySynchronization2*>(raw);
      recfmt::SyncBody b{};
      b.start_ns = static_cast<int64_t>(s->start);
      b.end_ns = static_cast<int64_t>(s->end);
      b.correlation = s->correlationId;
      b.context = s->contextId;
      b.stream = s->streamId;
      b.type = s->type;
      b.cuda_event_id = s->cudaEventId;
      chunk_.Add(RecordType::kSync, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      CloseMarker(raw);
      return;
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = static_cast<const CUpti_ActivityDevice5*>(raw);
      recfmt::DeviceBody b{};
      b.total_memory_bytes = static_cast<int64_t>(d->globalMemorySize);
      b.clock_rate_hz = int64_t{d->coreClockRate} * 1000;  // CUPTI: kHz
      b.memory_bandwidth_bytes_per_s = static_cast<int64_t>(d->globalMemoryBandwidth) * 1000;
      b.shared_memory_per_sm_bytes = d->maxSharedMemoryPerMultiprocessor;
      // shared_memory_per_block_optin_bytes stays 0 (unknown): CUPTI reports only the default
      // limit.
      b.l2_cache_bytes = d->l2CacheSize;
      b.id = static_cast<int32_t>(d->id);
      b.sm_count = static_cast<int32_t>(d->numMultiprocessors);
      b.cc_major = static_cast<int32_t>(d->computeCapabilityMajor);
      b.cc_minor = static_cast<int32_t>(d->computeCapabilityMinor);
      b.max_threads_per_sm = static_cast<int32_t>(d->maxWarpsPerMultiprocessor * 32);
      b.max_blocks_per_sm = static_cast<int32_t>(d->maxBlocksPerMultiprocessor);
      b.registers_per_sm = static_cast<int32_t>(d->maxRegistersPerMultiprocessor);
      b.name_string = Intern(d->name, false);
      chunk_.Add(RecordType::kDevice, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = static_cast<const CUpti_ActivityMemory4*>(raw);
      recfmt::MemoryBody b{};
      b.time_ns = static_cast<int64_t>(m->timestamp);
      b.address = m->address;
      b.bytes = m->bytes;
      b.pid = m->processId;
      b.device = m->deviceId;
      b.context = m->contextId;
      b.stream = m->streamId;
      b.correlation = m->correlationId;
      b.operation = static_cast<uint32_t>(m->memoryOperationType);
      b.memory_kind = static_cast<uint32_t>(m->memoryKind);
      b.pool_type = static_cast<uint32_t>(m->memoryPoolConfig.memoryPoolType);
      if (b.pool_type != 0) {
        b.pool_address = m->memoryPoolConfig.address;
        if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
          b.pool_size = m->memoryPoolConfig.pool.size;
          b.pool_used = m->memoryPoolConfig.utilizedSize;
          b.pool_release_threshold = m->memoryPoolConfig.releaseThreshold;
        }
      }
      b.name_string = Intern(m->name, false);  // kNoString when CUPTI gives none
      b.source_string = Intern(m->source, false);
      chunk_.Add(RecordType::kMemory, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      const auto* p = static_cast<const CUpti_ActivityMemoryPool3*>(raw);
      recfmt::MemoryPoolBody b{};
      b.time_ns = static_cast<int64_t>(p->timestamp);
      b.address = p->address;
      b.size = p->size;
      b.used = p->utilizedSize;
      b.release_threshold = p->releaseThreshold;
      b.min_bytes_to_keep = p->minBytesToKeep;
      b.pid = p->processId;
      b.device = p->deviceId;
      b.correlation = p->correlationId;
      b.operation = static_cast<uint32_t>(p->memoryPoolOperationType);
      b.pool_type = static_cast<uint32_t>(p->memoryPoolType);
      b.managed = p->isManagedPool;
      chunk_.Add(RecordType::kMemoryPool, b);
      return;
    }
    default:
      ++unknown_records_;
      std::lock_guard<std::mutex> lock(drop_mu_);
      drops_changed_ = true;
      return;
  }
}

void Writer::NoteThread(uint32_t pid, uint32_t tid) {
  const std::string name = thread_namer_.NameIfNew(pid, tid);
  if (name.empty()) return;
  recfmt::ThreadBody t{};
  t.pid = pid;
  t.tid = tid;
  t.name_string = Intern(name.c_str(), false);
  chunk_.Add(RecordType::kThread, t);
}

// CUPTI reports an NVTX range as a start marker and an end marker with the same id. A range whose
// end comes on its own thread and closes the innermost open range there is a push/pop range; any
// other is a start/end range. Instantaneous markers (nvtxMark) become zero-length ranges.
void Writer::CloseMarker(const void* raw) {
  const auto* m = static_cast<const CUpti_ActivityMarker2*>(raw);
  const uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                               m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                           ? m->objectId.pt.threadId
                           : 0;
  const uint32_t pid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                               m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                           ? m->objectId.pt.processId
                           : 0;
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    if (gate_ranges_ && !window_gate_.Contains(static_cast<int64_t>(m->timestamp))) return;
    recfmt::RangeBody b{};
    b.start_ns = b.end_ns = static_cast<int64_t>(m->timestamp);
    b.pid = pid;
    b.tid = b.end_tid = tid;
    b.name_string = Intern(m->name, false);
    b.domain_string = Intern(m->domain, false);
    b.kind = static_cast<uint32_t>(recfmt::RangeKind::kMark);
    NoteThread(pid, tid);
    chunk_.Add(RecordType::kRange, b);
    return;
  }
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    OpenRange& r = open_ranges_[m->id];
    r.body = recfmt::RangeBody{};
    r.body.start_ns = static_cast<int64_t>(m->timestamp);
    r.body.pid = pid;
    r.body.tid = tid;
    r.body.name_string = Intern(m->name, false);
    r.body.domain_string = Intern(m->domain, false);
    thread_stacks_[tid].push_back(m->id);
    NoteThread(pid, tid);
    return;
  }
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(m->id);
    if (it == open_ranges_.end()) {
      ++unpaired_ranges_;
      std::lock_guard<std::mutex> lock(drop_mu_);
      drops_changed_ = true;
      return;
    }
    recfmt::RangeBody b = it->second.body;
    open_ranges_.erase(it);
    std::vector<uint32_t>& stack = thread_stacks_[b.tid];
    const bool lifo = !stack.empty() && stack.back() == m->id && tid == b.tid;
    for (size_t i = stack.size(); i-- > 0;) {
      if (stack[i] == m->id) {
        stack.erase(stack.begin() + static_cast<ptrdiff_t>(i));
        break;
      }
    }
    b.end_ns = static_cast<int64_t>(m->timestamp);
    b.end_tid = tid;
    b.kind =
        static_cast<uint32_t>(lifo ? recfmt::RangeKind::kPushPop : recfmt::RangeKind::kStartEnd);
    if (KeepRange(b)) chunk_.Add(RecordType::kRange, b);
  }
}

}  // namespace sightline::recorder
