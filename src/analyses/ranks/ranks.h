// Multi-rank analysis: several traces given together are the ranks of one job. Per rank: GPU
// busy, communication time and share, compute/communication overlap; across ranks: collectives
// matched by order, clocks aligned on their end times (one offset per host when the hosts are
// known), and the time each rank waits inside collectives for the last-arriving (straggler) rank.
// Input: one RankProfile per trace (built while the pipeline has the trace, so the traces need not
// stay in memory). docs/analyses/ranks.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/ranks/ranks_options.h"
#include "base/status.h"
#include "base/time_units.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// Where a rank number came from, in order of trust.
enum class RankSource : uint8_t {
  kTrace,     // the trace says (Kineto distributedInfo.rank, or NCCL annotations)
  kFileName,  // "rank0", "rank_1", "rank-2", "-r3" / "_r3" in the file name
  kOrder,     // the order the files were given in
};
const char* RankSourceName(RankSource source);  // "trace", "file name", "order"

// The rank number in a file name: "...rank3...", "rank_3", "rank-3", "...-r3." / "_r3_"; -1 none.
int32_t RankFromFileName(const std::string& file_name);

// Where the ranks' hosts came from (ranks on one host share a clock), in order of precedence.
enum class HostSource : uint8_t {
  kOption,    // --ranks-per-host N: rank r on host r / N
  kTrace,     // the trace says (nsys: TARGET_INFO_SYSTEM_ENV Hostname)
  kFileName,  // torch.profiler.tensorboard_trace_handler's "{hostname}_{pid}.{time}.pt.trace.json"
  kNone,      // unknown: each rank has its own clock
};
const char* HostSourceName(HostSource source);  // "--ranks-per-host", "trace", "file name", "none"

// The host in a file name written by torch.profiler.tensorboard_trace_handler with its default
// worker name, "{hostname}_{pid}.{time}.pt.trace.json[.gz]" (a directory part is ignored); ""
// when the name is not of that form.
std::string HostFromFileName(const std::string& path);

// One communication kernel of a rank.
struct CommKernel {
  int32_t name = 0;  // index into RankProfile::comm_names
  int32_t slot = 0;  // which (device, stream) of this rank, among those running this name
  TimeNs start_ns = 0, end_ns = 0;
  // The collective it belongs to, from the trace (the record_param_comms range around its launch,
  // model/trace.h CollectiveTable): index into RankProfile::communicators and the sequence number
  // in that process group; -1 when the trace does not say.
  int32_t communicator = -1;
  int64_t seq = -1;
};

// What the ranks analysis needs from one trace.
struct RankProfile {
  std::string label;        // the input's label (file name)
  int input = -1;           // index into Report::inputs
  int32_t trace_rank = -1;  // Trace::source.rank
  int32_t world_size = 0;
  std::string trace_host;  // Trace::source.host; empty: the trace does not say
  // The run the trace was recorded in (`sightline record`'s process tree beside it: host, start,
  // root process); empty when unknown. Recordings of one run without rank numbers or
  // communication are the processes of one program, not ranks (the run section shows them).
  std::string run_key;
  // GPU time summed over the trace's devices (each device's union counted once).
  DurationNs span_ns = 0;     // Σ per device (last GPU event end − first start)
  DurationNs busy_ns = 0;     // Σ per device union of kernels and memory operations
  DurationNs comm_ns = 0;     // Σ per device union of communication kernels
  DurationNs compute_ns = 0;  // Σ per device union of other kernels
  DurationNs overlap_ns = 0;  // Σ per device |comm ∩ compute|
  int64_t comm_kernels = 0;
  std::vector<std::string> comm_names;     // short names of the communication kernels
  std::vector<CommKernel> comm;            // sorted by start
  std::vector<std::string> communicators;  // process group names the kernels refer to
};

// A versioned binary form of a profile (the state a rank sends to process 0 under MPI).
std::string EncodeRankProfile(const RankProfile& profile);
StatusOr<RankProfile> DecodeRankProfile(const std::string& blob);

// Builds a rank's profile from the context's busy unions and communication split (kernel
// categories decide what communication is: kernel_category.h).
StatusOr<RankProfile> ComputeRankProfile(AnalysisContext& context, const std::string& label,
                                         int input);

struct RankStats {
  int32_t rank = -1;
  RankSource source = RankSource::kOrder;
  const RankProfile* profile = nullptr;
  int host = -1;  // index into RanksResult::hosts (its clock); each rank its own without hosts
  // Clock alignment: this rank's timestamps minus offset_ns are on the reference rank's clock
  // (its host's offset).
  DurationNs offset_ns = 0;
  // The offset the end times suggest (its host's); applied only when larger than its residual.
  DurationNs estimated_offset_ns = 0;
  DurationNs residual_ns = 0;  // median |end difference| to the reference rank left with offset_ns
  // Inside matched collectives.
  int64_t collectives = 0;
  DurationNs collective_ns = 0;   // Σ durations of this rank's matched collective kernels
  DurationNs wait_ns = 0;         // Σ waiting for the last rank to arrive
  DurationNs transfer_ns = 0;     // Σ (duration − wait)
  int64_t last_count = 0;         // collectives this rank arrived last at
  DurationNs caused_wait_ns = 0;  // Σ other ranks' waits at the collectives it was last at
};

// One collective matched across every rank: the k-th kernel of a name on a slot.
struct MatchedCollective {
  int32_t name = 0;  // index into RanksResult::names
  int32_t slot = 0;
  int64_t ordinal = 0;          // k
  int last = 0;                 // index into RanksResult::ranks of the last-arriving rank
  TimeNs aligned_start_ns = 0;  // earliest start, on the reference clock
  DurationNs skew_ns = 0;       // latest − earliest aligned start
  DurationNs max_wait_ns = 0;   // the longest wait of a rank at this collective
};

// One clock: a host's ranks (or, when no host is known, one rank). Its offset to the reference
// rank (the lowest) is estimated from the end-time differences of all its ranks at all matched
// collectives (the median); the residual is the median |difference| left after it.
struct HostClock {
  std::string name;        // the host name; "rank N" when no host is known
  std::vector<int> ranks;  // indexes into RanksResult::ranks
  DurationNs offset_ns = 0, estimated_offset_ns = 0, residual_ns = 0;
  int64_t end_pairs = 0;  // end-time differences the estimate rests on
};

struct RanksResult {
  std::vector<RankStats> ranks;  // by rank number
  HostSource host_source = HostSource::kNone;
  std::vector<HostClock> hosts;  // by first rank; one per rank when host_source is kNone
  std::vector<std::string> names;
  std::vector<MatchedCollective> collectives;  // in start order on the reference clock
  int64_t unmatched = 0;  // communication kernels left out: counts differ between ranks
  std::vector<std::string> unmatched_notes;  // "ncclAllReduce (slot 0): rank 0 has 12, ..."
  // How collectives were matched: by (communicator, sequence number) when every communication
  // kernel of every rank carries them, else by order (the k-th kernel of a name on a stream slot).
  bool matched_by_sequence = false;
  bool aligned = false;  // clocks aligned from matched collectives
  int straggler = -1;    // index into ranks; -1 when no rank made others wait
  // The rank that caused the most waiting, before the residual check (index into ranks; -1:
  // none), its median lead at the collectives it arrived last at, and the clock residual that lead
  // was checked against (the larger of its host's and the next-latest ranks' hosts').
  int candidate = -1;
  DurationNs candidate_lead_ns = 0, candidate_residual_ns = 0;
  std::vector<std::string> notes;
};

// Ranks the profiles (rank numbers from the trace, else file names, else order; `file_names`
// parallel to `profiles`), matches collectives, aligns clocks and splits waiting from transfer.
// Hosts: --ranks-per-host, else the traces' hosts when every trace has one, else the file names'
// when every name has one, else none (each rank its own clock).
StatusOr<RanksResult> ComputeRanks(const std::vector<RankProfile>& profiles,
                                   const std::vector<std::string>& file_names,
                                   const RanksOptions& options = {});

// Section "ranks" (input -1): one row per rank, the matched collectives with the most skew, notes.
void AddRanksSection(const RanksResult& result, Report& report);

// Registry entry "ranks" (a TraceSet of kind kRanks): the ranks section, and the RanksResult the
// straggler rule reads (analyses/findings/rule_straggler.cc).
std::unique_ptr<MultiTraceAnalysis> CreateRanksAnalysis(const AnalyzeOptions& options,
                                                        const RunInputs& inputs);

}  // namespace sightline
