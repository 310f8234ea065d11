// The recorder file format (.slrec, docs/formats/recorder.md): what libsightline_recorder.so writes
// and src/importers/recorder reads. Header-only, standard library only, so the CUPTI library, the
// CLI and tests all share one writer and one reader.
//
// Layout: a 16-byte file header, then chunks. Each chunk is a 16-byte chunk header (magic, payload
// size, record count, CRC-32 of the payload) followed by its records. A chunk is written with one
// write(2), so a crash leaves the earlier chunks whole; the reader stops at the first incomplete or
// damaged chunk and counts it. Each record is a 8-byte record header (type, body size) and a body
// of little-endian fixed-size fields; readers ignore unknown types and fields past what they know,
// so later versions can append fields.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace sightline::recfmt {

inline constexpr char kFileMagic[8] = {'S', 'L', 'R', 'E', 'C', 'O', 'R', 'D'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kChunkMagic = 0x4b4e4843;  // "CHNK" in a little-endian file
inline constexpr size_t kFileHeaderBytes = 16;
inline constexpr size_t kChunkHeaderBytes = 16;
inline constexpr size_t kRecordHeaderBytes = 8;
inline constexpr uint32_t kMaxChunkPayloadBytes = 256u << 20;  // larger sizes mean a damaged header

enum class RecordType : uint16_t {
  kProcess = 1,
  kString = 2,
  kDevice = 3,
  kKernel = 4,
  kMemcpy = 5,
  kMemset = 6,
  kApi = 7,
  kSync = 8,
  kRange = 9,
  kCaptureWindow = 10,
  kDrops = 11,
  kEnd = 12,
  kGraph = 13,   // a whole CUDA graph's run (--cuda-graph-trace graph); readers before it skip it
  kThread = 14,  // a thread's name, once per thread seen; readers before it skip it
  // GPU metrics (--gpu-metrics, CUPTI PM sampling); readers before them skip them.
  kGpuMetric = 15,         // one metric of one device: sampled, or why not
  kGpuMetricSample = 16,   // one sample of all of a device's sampled metrics
  kGpuMetricsStatus = 17,  // per device, cumulative: a later record replaces an earlier one
  // GPU memory (--cuda-memory-usage, CUPTI_ACTIVITY_KIND_MEMORY2 / MEMORY_POOL); readers before
  // them skip them.
  kMemory = 18,      // one allocation or release
  kMemoryPool = 19,  // a memory pool created, destroyed or trimmed
  // CUDA graph nodes created or cloned (always recorded, even outside capture windows); readers
  // before it skip it.
  kGraphNode = 20,
  // CUDA graphs created, cloned or instantiated (always recorded, every --cuda-graph-trace mode);
  // readers before it skip it.
  kGraphEvent = 21,
};

inline constexpr uint32_t kNoString = 0;  // string id 0 is the empty string; ids start at 1
// Never written: a string record of this id is damage (recorder_reserved_string_id).
inline constexpr uint32_t kReservedStringId = 0xffffffffu;

// Bodies. Fields are ordered by size so that no struct has padding; sizes are fixed by
// static_assert.
struct ProcessBody {
  int64_t pid;
  int64_t start_cupti_ns;     // cuptiGetTimestamp() at start-up: the clock of every record
  int64_t start_realtime_ns;  // CLOCK_REALTIME read right after it (for wall-clock alignment)
  int64_t start_monotonic_ns;
  int32_t rank;                // -1 unknown
  int32_t world_size;          // 0 unknown
  uint32_t capture_range;      // 0 none, 1 cudaProfilerApi
  int32_t capture_repeat;      // 0 stop after the first window, N>0 at most N windows, -1 no limit
  uint32_t executable_string;  // /proc/self/exe
  uint32_t hostname_string;
  uint32_t cupti_version;
  // --cuda-graph-trace sampled:N: N (every N-th graph launch node by node, the rest as whole
  // graphs); 0 otherwise. Was `reserved` (always 0) in earlier files.
  uint32_t graph_trace_sample;
};
static_assert(sizeof(ProcessBody) == 64);

struct DeviceBody {
  int64_t total_memory_bytes;
  int64_t clock_rate_hz;
  int64_t memory_bandwidth_bytes_per_s;
  int64_t shared_memory_per_sm_bytes;
  int64_t shared_memory_per_block_optin_bytes;
  int64_t l2_cache_bytes;
  int32_t id;
  int32_t sm_count;
  int32_t cc_major, cc_minor;
  int32_t max_threads_per_sm;
  int32_t max_blocks_per_sm;
  int32_t registers_per_sm;
  uint32_t name_string;
};
static_assert(sizeof(DeviceBody) == 80);

struct KernelBody {
  int64_t start_ns, end_ns;
  uint64_t graph_node_id;  // 0 when not launched from a CUDA graph
  uint32_t device, context, stream,
      correlation;  // graph kernels: the cudaGraphLaunch's correlation
  int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
  int32_t registers_per_thread, static_smem_bytes, dynamic_smem_bytes;
  uint32_t name_string;  // demangled
  uint32_t graph_id;     // 0 when not launched from a CUDA graph
  uint32_t launch_type;  // CUpti_ActivityLaunchType
};
static_assert(sizeof(KernelBody) == 88);

struct MemcpyBody {
  int64_t start_ns, end_ns;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t device, context, stream, correlation;
  uint32_t graph_id;
  uint32_t src_device, dst_device;  // peer copies; otherwise both are `device`
  uint8_t copy_kind;                // CUpti_ActivityMemcpyKind
  uint8_t src_kind, dst_kind;       // CUpti_ActivityMemoryKind
  uint8_t flags;                    // CUpti_ActivityFlag (bit 0: async)
};
static_assert(sizeof(MemcpyBody) == 64);

struct MemsetBody {
  int64_t start_ns, end_ns;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t device, context, stream, correlation;
  uint32_t graph_id;
  uint32_t value;
  uint16_t memory_kind;  // CUpti_ActivityMemoryKind
  uint16_t flags;
  uint32_t reserved;
};
static_assert(sizeof(MemsetBody) == 64);

enum class ApiDomain : uint32_t { kRuntime = 1, kDriver = 2 };

struct ApiBody {
  int64_t start_ns, end_ns;
  uint32_t pid, tid;  // system thread id
  uint32_t correlation;
  uint32_t cbid;         // CUPTI callback id in its domain
  uint32_t domain;       // ApiDomain
  uint32_t name_string;  // "cudaLaunchKernel"
  uint32_t return_value;
  uint32_t reserved;
};
static_assert(sizeof(ApiBody) == 48);

struct SyncBody {
  int64_t start_ns, end_ns;
  uint32_t correlation;  // of the API call that synchronized
  uint32_t context, stream;
  uint32_t type;  // CUpti_ActivitySynchronizationType
  uint32_t cuda_event_id;
  uint32_t reserved;
};
static_assert(sizeof(SyncBody) == 40);

enum class RangeKind : uint32_t { kPushPop = 0, kStartEnd = 1, kMark = 2 };

struct RangeBody {
  int64_t start_ns, end_ns;             // kMark: end == start
  uint32_t pid, tid;                    // thread that opened it
  uint32_t name_string, domain_string;  // domain: kNoString for the default domain
  uint32_t kind;                        // RangeKind
  uint32_t end_tid;                     // start/end ranges may end on another thread
};
static_assert(sizeof(RangeBody) == 40);

// One run of a CUDA graph recorded as a whole (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): its kernels have
// no records of their own.
struct GraphBody {
  int64_t start_ns, end_ns;  // first node's start .. last node's end
  uint32_t device, context, stream;
  uint32_t correlation;  // the cudaGraphLaunch's
  uint32_t graph_id;
  uint32_t end_device;  // where the last node ran
};
static_assert(sizeof(GraphBody) == 40);

// The name of a thread that made a recorded API call or NVTX range (/proc/self/task/TID/comm when
// the writer first sees the thread; no record when the thread had already exited).
struct ThreadBody {
  uint32_t pid, tid;     // system thread id
  uint32_t name_string;  // "python3", "responder"
  uint32_t reserved;
};
static_assert(sizeof(ThreadBody) == 16);

// A metric asked of a device's PM sampler. Sampled metrics are numbered 0.. in the order of the
// values of that device's sample records; a metric the device could not sample (unknown to the
// chip, or not fitting the one-pass configuration) has index kNotSampled and a reason.
inline constexpr uint32_t kNotSampled = 0xffffffffu;
struct GpuMetricBody {
  uint32_t device;
  uint32_t index;         // position in the sample's values, or kNotSampled
  uint32_t name_string;   // as nsys names it: "SMs Active [Throughput %]" (unit in brackets)
  uint32_t cupti_string;  // the CUPTI metric: "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
  uint32_t reason_string;  // kNotSampled only: what CUPTI answered
  uint32_t reserved;
};
static_assert(sizeof(GpuMetricBody) == 24);

// One sample: the header below, then `count` little-endian doubles (the values of the device's
// sampled metrics, in index order, already in the unit of the metric's name). Times are as CUPTI's
// PM sampling reports them (a GPU clock), not the CUPTI clock of the other records:
// GpuMetricsStatusBody::clock says how to map them.
struct GpuMetricSampleHeader {
  int64_t start_ns, end_ns;
  uint32_t device;
  uint32_t count;
};
static_assert(sizeof(GpuMetricSampleHeader) == 24);

enum class GpuMetricsClock : uint32_t {
  // Follows the host's real-time clock: the CUPTI time of a sample is its time -
  // (ProcessBody.start_realtime_ns - start_cupti_ns). (Not the %globaltimer a kernel reads: on an
  // H200 that ran about 1 ms ahead of these timestamps.)
  kPmSamplingTimestamp = 1,
};

struct GpuMetricsStatusBody {
  int64_t interval_ns;       // asked
  uint64_t samples;          // written so far
  uint64_t dropped_samples;  // longer than two intervals (the lead-in after each start) or unread
  uint64_t overflows;        // decodes that reported the hardware buffer full: samples were lost
  uint64_t failed_samples;   // CUPTI could not evaluate them
  uint32_t device;
  uint32_t clock;         // GpuMetricsClock
  uint32_t metrics;       // sampled
  uint32_t error_string;  // why the device is not sampled (kNoString: it is)
};
static_assert(sizeof(GpuMetricsStatusBody) == 56);

// Splits a GPU metric sample's body; false when it is too short for its count.
inline bool DecodeGpuMetricSample(std::string_view body, GpuMetricSampleHeader* h,
                                  const char** values) {
  if (body.size() < sizeof *h) return false;
  std::memcpy(h, body.data(), sizeof *h);
  if (h->count > (body.size() - sizeof *h) / sizeof(double)) return false;
  *values = body.data() + sizeof *h;
  return true;
}

// One GPU memory allocation or release (CUpti_ActivityMemory4). Sizes are always positive; the
// sign is in `operation`. Pool fields are set when the memory came from a stream-ordered pool
// (cudaMallocAsync, cudaMallocFromPoolAsync): the pool's state right after this operation.
enum class MemoryOperation : uint32_t { kAllocation = 1, kRelease = 2 };
enum class MemoryPoolType : uint32_t { kNone = 0, kLocal = 1, kImported = 2 };
struct MemoryBody {
  int64_t time_ns;
  uint64_t address;
  uint64_t bytes;
  uint64_t pool_address;            // the pool's base address; 0 when not from a pool
  uint64_t pool_size;               // local pools: the pool's size after the operation
  uint64_t pool_used;               // local pools: its utilized size after the operation
  uint64_t pool_release_threshold;  // local pools
  uint32_t pid;
  uint32_t device, context, stream;  // stream: UINT32_MAX when not stream-ordered
  uint32_t correlation;              // of the API call that made it
  uint32_t operation;                // MemoryOperation
  uint32_t memory_kind;              // CUpti_ActivityMemoryKind
  uint32_t pool_type;                // MemoryPoolType
  uint32_t name_string;              // static allocations: the variable's name
  uint32_t source_string;  // the shared object that asked for it (CUPTI's allocation source)
};
static_assert(sizeof(MemoryBody) == 96);

// A stream-ordered memory pool created, destroyed or trimmed (CUpti_ActivityMemoryPool3).
enum class MemoryPoolOperation : uint32_t { kCreated = 1, kDestroyed = 2, kTrimmed = 3 };
struct MemoryPoolBody {
  int64_t time_ns;
  uint64_t address;            // the pool's base address
  uint64_t size;               // local pools: its size after the operation
  uint64_t used;               // local pools: its utilized size after the operation
  uint64_t release_threshold;  // local pools
  uint64_t min_bytes_to_keep;  // trims
  uint32_t pid;
  uint32_t device;
  uint32_t correlation;
  uint32_t operation;  // MemoryPoolOperation
  uint32_t pool_type;  // MemoryPoolType
  uint32_t managed;    // 1: a pool of managed memory
};
static_assert(sizeof(MemoryPoolBody) == 72);

// A CUDA graph node created (by stream capture or a cudaGraphAdd*Node call) or cloned (when a graph
// is instantiated, its nodes are cloned into the executable graph, whose kernels carry the clone's
// id; also cudaGraphClone), from CUPTI's resource callbacks. Written whatever the capture range: a
// graph is usually captured before the window it is replayed in. A kernel's graph_node_id leads
// here; following original_node_id leads to the captured node, whose time and thread place it in
// the NVTX ranges open at capture.
enum class GraphNodeEvent : uint32_t { kCreated = 1, kCloned = 2 };
struct GraphNodeBody {
  int64_t time_ns;            // cuptiGetTimestamp() in the callback: the clock of every record
  uint64_t node_id;           // cuptiGetGraphNodeId: the id kernel records carry
  uint64_t original_node_id;  // kCloned: the node it was cloned from; 0 for kCreated
  uint32_t pid, tid;          // the creating thread (system thread id, as API records)
  uint32_t graph_id;          // cuptiGetGraphId of the graph it was added to (0 unknown)
  uint32_t node_type;         // CUgraphNodeType (0 kernel, 1 memcpy, 2 memset, ...)
  uint32_t event;             // GraphNodeEvent
  uint32_t reserved;
};
static_assert(sizeof(GraphNodeBody) == 48);

// A CUDA graph created (by stream capture: as the capture begins, on the capturing thread; or by
// cudaGraphCreate), cloned (cudaGraphClone, or the driver's own copy at instantiation) or
// instantiated into an executable graph, from CUPTI's resource callbacks (GRAPH_CREATED,
// GRAPH_CLONED, GRAPHEXEC_CREATED). Written in every --cuda-graph-trace mode and whatever the
// capture range: a whole-graph run names only its graph id, and the creation of that id (its time
// and thread) says which capture made it.
enum class GraphEvent : uint32_t { kCreated = 1, kCloned = 2, kExecCreated = 3 };
struct GraphEventBody {
  int64_t time_ns;             // cuptiGetTimestamp() in the callback
  uint32_t pid, tid;           // the thread that made it (system thread id, as API records)
  uint32_t graph_id;           // cuptiGetGraphId: the graph created or cloned; kExecCreated: the
                               // graph instantiated (0 unknown)
  uint32_t original_graph_id;  // kCloned: the graph it was cloned from (0 otherwise or unknown)
  uint32_t graph_exec_id;      // kExecCreated: cuptiGetGraphExecId (0 otherwise or unknown)
  uint32_t event;              // GraphEvent
};
static_assert(sizeof(GraphEventBody) == 32);

struct CaptureWindowBody {
  int64_t start_ns, end_ns;  // cuProfilerStart .. cuProfilerStop on the CUPTI clock
  uint32_t index;            // 0, 1, ...
  uint32_t reserved;
};
static_assert(sizeof(CaptureWindowBody) == 24);

// Cumulative counts; a later record replaces an earlier one.
struct DropsBody {
  uint64_t
      cupti_dropped_records;  // CUPTI could not get a buffer (cuptiActivityGetNumDroppedRecords)
  uint64_t queue_dropped_records;  // the writer queue was full; the buffer's records were discarded
  uint64_t unpaired_ranges;        // NVTX range ends without a start, or starts never ended
  uint64_t unknown_records;        // CUPTI records of kinds the recorder does not map
  // Graph node creations not written (the writer's backlog was full, or CUPTI gave no node id).
  // Appended later in version 1: older files' drops records end before it (read as 0).
  uint64_t graph_node_dropped_records;
};
static_assert(sizeof(DropsBody) == 40);

struct EndBody {
  int64_t end_cupti_ns, end_realtime_ns, end_monotonic_ns;
  uint64_t records_written;  // all records before this one
  uint32_t capture_windows;
  uint32_t reserved;
};
static_assert(sizeof(EndBody) == 40);

// ---- CRC-32 (IEEE, as zlib)
// ----------------------------------------------------------------------

inline const std::array<uint32_t, 256>& Crc32Table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

inline uint32_t Crc32(const char* data, size_t n) {
  const std::array<uint32_t, 256>& t = Crc32Table();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) c = t[(c ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// ---- Writing
// -------------------------------------------------------------------------------------

inline void PutU32(std::string& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);  // the format is little-endian, as every CUDA host is
  out.append(b, 4);
}

inline std::string FileHeaderBytes() {
  std::string out(kFileMagic, sizeof kFileMagic);
  PutU32(out, kFormatVersion);
  PutU32(out, static_cast<uint32_t>(kFileHeaderBytes));
  return out;
}

// Collects records for one chunk; Finish() returns chunk header + payload, ready for one write(2).
class ChunkBuilder {
 public:
  ChunkBuilder() { buf_.resize(kChunkHeaderBytes); }

  template <typename Body>
  void Add(RecordType type, const Body& body) {
    static_assert(std::is_trivially_copyable_v<Body>);
    AddRaw(type, &body, sizeof body);
  }
  void AddString(uint32_t id, std::string_view s) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    AppendRecordHeader(RecordType::kString, 8 + n);
    PutU32(buf_, id);
    PutU32(buf_, n);
    buf_.append(s.data(), s.size());
    Pad();
  }
  void AddRaw(RecordType type, const void* body, size_t n) {
    AppendRecordHeader(type, static_cast<uint32_t>(n));
    buf_.append(static_cast<const char*>(body), n);
    Pad();
  }

  uint32_t record_count() const { return records_; }
  size_t payload_bytes() const { return buf_.size() - kChunkHeaderBytes; }
  bool empty() const { return records_ == 0; }

  // The whole chunk; the builder is empty afterwards.
  std::string Finish() {
    const uint32_t payload = static_cast<uint32_t>(payload_bytes());
    const uint32_t header[4] = {kChunkMagic, payload, records_,
                                Crc32(buf_.data() + kChunkHeaderBytes, payload)};
    std::memcpy(buf_.data(), header, sizeof header);
    std::string out;
    out.swap(buf_);
    buf_.resize(kChunkHeaderBytes);
    records_ = 0;
    return out;
  }

 private:
  void AppendRecordHeader(RecordType type, uint32_t body_bytes) {
    const uint16_t t = static_cast<uint16_t>(type), flags = 0;
    char h[kRecordHeaderBytes];
    std::memcpy(h, &t, 2);
    std::memcpy(h + 2, &flags, 2);
    std::memcpy(h + 4, &body_bytes, 4);
    buf_.append(h, sizeof h);
    ++records_;
  }
  void Pad() { buf_.append((8 - buf_.size() % 8) % 8, '\0'); }  // keeps record headers 8-aligned

  std::string buf_;
  uint32_t records_ = 0;
};

// ---- Reading
// -------------------------------------------------------------------------------------

// Copies a record body into a struct: missing trailing fields (an older writer) read as zero, extra
// ones (a newer writer) are ignored.
template <typename Body>
Body DecodeBody(std::string_view body) {
  static_assert(std::is_trivially_copyable_v<Body>);
  Body b;
  std::memset(&b, 0, sizeof b);
  std::memcpy(&b, body.data(), body.size() < sizeof b ? body.size() : sizeof b);
  return b;
}

// A string record: id and text.
inline bool DecodeString(std::string_view body, uint32_t* id, std::string_view* text) {
  if (body.size() < 8) return false;
  uint32_t n;
  std::memcpy(id, body.data(), 4);
  std::memcpy(&n, body.data() + 4, 4);
  if (n > body.size() - 8) return false;
  *text = body.substr(8, n);
  return true;
}

struct ReadSummary {
  uint32_t version = 0;
  uint64_t complete_chunks = 0;
  uint64_t records = 0;
  uint64_t bad_chunks = 0;    // the first chunk that was cut short or failed its checksum (0 or 1)
  uint64_t unread_bytes = 0;  // bytes from that chunk to the end of the file, not read
  uint64_t malformed_records = 0;  // record headers that overrun their chunk (the rest is skipped)
};

inline bool HasFileMagic(std::string_view bytes) {
  return bytes.size() >= sizeof kFileMagic && std::memcmp(bytes.data(), kFileMagic, 8) == 0;
}

// Reads a whole file's bytes and calls visit(RecordType, body) for every record of every complete
// chunk, in file order. Returns "" on success (a truncated tail is not an error: it is counted in
// summary), or a message when the file header itself is unusable.
template <typename Visitor>
std::string ReadRecords(std::string_view file, ReadSummary* summary, Visitor&& visit) {
  *summary = ReadSummary{};
  if (file.size() < kFileHeaderBytes || !HasFileMagic(file)) {
    return "not a Sightline recording (the file does not start with the SLRECORD magic)";
  }
  uint32_t version, header_bytes;
  std::memcpy(&version, file.data() + 8, 4);
  std::memcpy(&header_bytes, file.data() + 12, 4);
  summary->version = version;
  if (version == 0 || version > kFormatVersion) {
    return "recording format version " + std::to_string(version) +
           " is not supported (this build reads versions 1.." + std::to_string(kFormatVersion) +
           "); use a newer sightline";
  }
  if (header_bytes < kFileHeaderBytes || header_bytes > file.size()) {
    return "damaged file header (header size " + std::to_string(header_bytes) + ")";
  }
  size_t pos = header_bytes;
  while (pos < file.size()) {
    uint32_t h[4];
    const size_t left = file.size() - pos;
    bool good = left >= kChunkHeaderBytes;
    if (good) {
      std::memcpy(h, file.data() + pos, sizeof h);
      good = h[0] == kChunkMagic && h[1] <= kMaxChunkPayloadBytes &&
             h[1] <= left - kChunkHeaderBytes &&
             Crc32(file.data() + pos + kChunkHeaderBytes, h[1]) == h[3];
    }
    if (!good) {
      summary->bad_chunks = 1;
      summary->unread_bytes = left;
      break;
    }
    std::string_view payload = file.substr(pos + kChunkHeaderBytes, h[1]);
    size_t p = 0;
    while (p + kRecordHeaderBytes <= payload.size()) {
      uint16_t type;
      uint32_t n;
      std::memcpy(&type, payload.data() + p, 2);
      std::memcpy(&n, payload.data() + p + 4, 4);
      if (n > payload.size() - p - kRecordHeaderBytes) {
        ++summary->malformed_records;
        break;
      }
      visit(static_cast<RecordType>(type), payload.substr(p + kRecordHeaderBytes, n));
      ++summary->records;
      p += kRecordHeaderBytes + n;
      p += (8 - p % 8) % 8;
    }
    ++summary->complete_chunks;
    pos += kChunkHeaderBytes + h[1];
  }
  return "";
}

}  // namespace sightline::recfmt
