// The Writer's translation of CUPTI activity records into the recording's records (writer.h):
// one record kind per case, NVTX markers paired into ranges, threads named when first seen.
#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "writer.h"

namespace sightline::recorder {
namespace {

using recfmt::RecordType;

// What a copy record of either kind (host/device: CUpti_ActivityMemcpy6, peer to peer:
// CUpti_ActivityMemcpyPtoP4) says alike; the caller sets the source and destination devices.
template <typename CuptiMemcpy>
recfmt::MemcpyBody MemcpyOf(const CuptiMemcpy& m) {
  recfmt::MemcpyBody b{};
  b.start_ns = static_cast<int64_t>(m.start);
  b.end_ns = static_cast<int64_t>(m.end);
  b.bytes = m.bytes;
  b.graph_node_id = m.graphNodeId;
  b.device = m.deviceId;
  b.context = m.contextId;
  b.stream = m.streamId;
  b.correlation = m.correlationId;
  b.graph_id = m.graphId;
  b.copy_kind = m.copyKind;
  b.src_kind = m.srcKind;
  b.dst_kind = m.dstKind;
  b.flags = m.flags;
  return b;
}

}  // namespace

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
      if (gate_graph_records_ && !window_gate_.Contains(static_cast<int64_t>(g->start))) {
        return;  // a replay outside every capture window
      }
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
      recfmt::MemcpyBody b = MemcpyOf(*m);
      b.src_device = b.dst_device = m->deviceId;
      chunk_.Add(RecordType::kMemcpy, b);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = static_cast<const CUpti_ActivityMemcpyPtoP4*>(raw);
      recfmt::MemcpyBody b = MemcpyOf(*m);
      b.src_device = m->srcDeviceId;
      b.dst_device = m->dstDeviceId;
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
