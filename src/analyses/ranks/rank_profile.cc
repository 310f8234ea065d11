// A rank's profile (ranks.h): what the ranks analysis keeps of one trace while the pipeline has
// it -- GPU busy and communication time, and the communication kernels with their collective and
// stream slot.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/ranks/ranks.h"
#include "facts/intervals.h"

namespace sightline {
namespace {

// Each communication kernel's collective: the record_param_comms range around its launching call,
// on the launching thread (ranges of one thread do not overlap: the latest one starting before
// the launch is the only candidate). p.comm holds the trace's communication kernels in table
// order.
void AttachCollectives(AnalysisContext& context, RankProfile& p) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const CollectiveTable& coll = trace.collectives;
  if (coll.size() == 0) return;
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < coll.size(); ++i) by_thread[{coll.pid[i], coll.tid[i]}].push_back(i);
  std::unordered_map<uint32_t, int32_t> communicator_index;
  size_t c = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] < 0 || !context.kernels().IsCommunication(k.name[i])) continue;
    CommKernel& ck = p.comm[c++];
    const int32_t call = k.launch_call[i];
    if (call == kNoRow) continue;
    const ApiCallTable& api = trace.api_calls;
    auto it = by_thread.find({api.pid[call], api.tid[call]});
    if (it == by_thread.end()) continue;
    const TimeNs t = api.start_ns[call];
    const std::vector<uint32_t>& rows = it->second;
    auto pos = std::upper_bound(rows.begin(), rows.end(), t,
                                [&](TimeNs v, uint32_t r) { return v < coll.start_ns[r]; });
    if (pos == rows.begin()) continue;
    const uint32_t r = *std::prev(pos);
    if (coll.end_ns[r] < t) continue;
    auto [ci, inserted] = communicator_index.try_emplace(
        coll.communicator[r].value, static_cast<int32_t>(p.communicators.size()));
    if (inserted) p.communicators.emplace_back(trace.str(coll.communicator[r]));
    ck.communicator = ci->second;
    ck.seq = coll.seq[r];
  }
}

// Slots: per name, its distinct (device, stream) pairs in increasing order. Stream ids are
// created in the same order on every rank of a job, device ids often differ (one GPU per rank).
// `dev_stream` is parallel to p.comm.
void AssignSlots(const std::vector<std::pair<int32_t, int32_t>>& dev_stream, RankProfile& p) {
  std::vector<std::set<std::pair<int32_t, int32_t>>> pairs(p.comm_names.size());
  for (size_t c = 0; c < p.comm.size(); ++c) pairs[p.comm[c].name].insert(dev_stream[c]);
  for (size_t c = 0; c < p.comm.size(); ++c) {
    const auto& s = pairs[p.comm[c].name];
    p.comm[c].slot = static_cast<int32_t>(std::distance(s.begin(), s.find(dev_stream[c])));
  }
}

}  // namespace

StatusOr<RankProfile> ComputeRankProfile(AnalysisContext& context, const std::string& label,
                                         int input) {
  const Trace& trace = context.trace();
  RankProfile p;
  p.label = label;
  p.input = input;
  p.trace_rank = trace.source.rank;
  p.world_size = trace.source.world_size;
  p.trace_host = trace.source.host;
  p.run_key = trace.run.key();
  for (int32_t d : context.gpu().GpuDevices()) {
    const std::vector<Interval>& busy = context.gpu().Busy(d);
    p.busy_ns += TotalLength(busy);
    p.span_ns += busy.back().end_ns - busy.front().start_ns;
    const CommSplit& c = context.kernels().Comm(d);
    p.comm_ns += c.comm_ns;
    p.compute_ns += c.compute_ns;
    p.overlap_ns += c.overlap_ns;
  }
  // Communication kernels by short name (name_index: index into comm_names), with their
  // (device, stream) until the slots are assigned.
  const KernelTable& k = trace.kernels;
  std::unordered_map<uint32_t, int32_t> name_index;
  std::vector<std::pair<int32_t, int32_t>> dev_stream;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] < 0 || !context.kernels().IsCommunication(k.name[i])) continue;
    auto [it, inserted] =
        name_index.try_emplace(k.name[i].value, static_cast<int32_t>(p.comm_names.size()));
    if (inserted) p.comm_names.emplace_back(trace.str(k.short_name[i]));
    p.comm.push_back({it->second, 0, k.start_ns[i], k.end_ns[i]});
    dev_stream.push_back({k.device[i], k.stream[i]});
    ++p.comm_kernels;
  }
  AttachCollectives(context, p);
  AssignSlots(dev_stream, p);
  return p;
}

}  // namespace sightline
