// The binary form of a RankProfile (analyses/ranks/ranks.h): what an MPI process sends process 0
// for each rank it read. Versioned by its magic; a blob of another version or cut short is refused.
#include "analyses/ranks/ranks.h"
#include "base/byte_codec.h"

namespace sightline {

namespace {
// "SRP4": Sightline rank profile, version 4 (3: the trace's host; 4: its run).
constexpr uint32_t kRankProfileMagic = 0x53525034;
}  // namespace

std::string EncodeRankProfile(const RankProfile& p) {
  ByteWriter w;
  w.Put(kRankProfileMagic);
  w.PutString(p.label);
  w.Put<int32_t>(p.input);
  w.Put(p.trace_rank);
  w.Put(p.world_size);
  w.PutString(p.trace_host);
  w.PutString(p.run_key);
  for (DurationNs v : {p.span_ns, p.busy_ns, p.comm_ns, p.compute_ns, p.overlap_ns}) w.Put(v);
  w.Put(p.comm_kernels);
  w.Put<uint64_t>(p.comm_names.size());
  for (const std::string& n : p.comm_names) w.PutString(n);
  w.Put<uint64_t>(p.comm.size());
  for (const CommKernel& c : p.comm) {
    w.Put(c.name);
    w.Put(c.slot);
    w.Put(c.start_ns);
    w.Put(c.end_ns);
    w.Put(c.communicator);
    w.Put(c.seq);
  }
  w.Put<uint64_t>(p.communicators.size());
  for (const std::string& n : p.communicators) w.PutString(n);
  return std::move(w.bytes());
}

StatusOr<RankProfile> DecodeRankProfile(const std::string& blob) {
  ByteReader r(blob);
  if (r.Get<uint32_t>() != kRankProfileMagic) {
    return InternalError("rank profile: not a version-4 rank profile blob");
  }
  RankProfile p;
  p.label = r.GetString();
  p.input = r.Get<int32_t>();
  p.trace_rank = r.Get<int32_t>();
  p.world_size = r.Get<int32_t>();
  p.trace_host = r.GetString();
  p.run_key = r.GetString();
  for (DurationNs* v : {&p.span_ns, &p.busy_ns, &p.comm_ns, &p.compute_ns, &p.overlap_ns}) {
    *v = r.Get<DurationNs>();
  }
  p.comm_kernels = r.Get<int64_t>();
  p.comm_names.resize(r.GetCount(8));
  for (std::string& n : p.comm_names) n = r.GetString();
  p.comm.resize(r.GetCount(36));
  for (CommKernel& c : p.comm) {
    c.name = r.Get<int32_t>();
    c.slot = r.Get<int32_t>();
    c.start_ns = r.Get<TimeNs>();
    c.end_ns = r.Get<TimeNs>();
    c.communicator = r.Get<int32_t>();
    c.seq = r.Get<int64_t>();
  }
  p.communicators.resize(r.GetCount(8));
  for (std::string& n : p.communicators) n = r.GetString();
  for (const CommKernel& c : p.comm) {
    if (c.name < 0 || static_cast<size_t>(c.name) >= p.comm_names.size() || c.communicator < -1 ||
        c.communicator >= static_cast<int32_t>(p.communicators.size())) {
      return InternalError("rank profile: a collective names no communication kernel");
    }
  }
  RETURN_IF_ERROR(r.Finish("rank profile"));
  return p;
}

}  // namespace sightline
