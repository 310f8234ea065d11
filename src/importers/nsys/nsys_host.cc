// The host side of an nsys export beyond CUDA and NVTX:
//
// OSRT_API (-t osrt): start, end, globalTid, nameId -> os_calls (the function name from StringIds),
//   for the processes that own a CUDA or NVTX event (the others are counted:
//   nsys_os_call_other_process). callchainId (0: none) names the call's chain in OSRT_CALLCHAINS
//   (id, stackDepth 0 = innermost: the OS function itself, symbol and module ids into StringIds;
//   checked on the 2025.3 export, schema 3.20.3) -> the call's frames, interned as
//   "symbol (module file name)" like CPU samples' (nsys_os_call_chains; a callchainId with no rows
//   is counted: nsys_os_call_chain_missing). nsys keeps a chain only for calls longer than its
//   backtrace threshold.
// SCHED_EVENTS (--cpuctxsw): start, isSchedIn, globalTid -> off_cpu, one interval from a thread's
//   switch-out to its next switch-in; only threads that own another imported event are kept (a
//   process-tree capture lists every helper thread of the runtime), and a switch-out with no
//   switch-in before the capture ends is not an interval.
//   The profiler's own threads (ThreadNames, IsProfilerThreadName) are left out in the query:
//   nsys's Python sampler makes most of the table and is never blamed (counted:
//   nsys_sched_profiler_threads).
// OS calls and scheduling events are scanned with the large tables (NsysParallelScan), buffered as
// they arrive and mapped by FinishNsysHostTables once every other table is read (they need to know
// which processes and threads own other events); the Python and CPU samples are read there too.
// NVTX_EVENTS marks (eventType 34) in the domain "Python Periodic Sampling" (--python-sampling):
//   start, globalTid, jsonText -> py_samples. jsonText is
//   {"Python Periodic Sampling":{"Thread state":..,"Frames":[{"Function":F,"File":S,"Line":L},..]}}
//   with F and S ids into StringIds, innermost frame first, names HTML-escaped ("&lt;module&gt;").
//   Without `nsys export --include-json=true` jsonText is NULL: the samples are kept without
//   stacks and counted (nsys_py_samples_without_stack).
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <unordered_map>

#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

constexpr std::string_view kPySamplingDomain = "Python Periodic Sampling";

// A call-chain frame's (symbol, module) string ids, as a hash key. Unsigned arithmetic: the ids
// come from the file and may be any integer (signed overflow would be undefined).
struct FrameKeyHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<uint64_t>()(static_cast<uint64_t>(p.first) * 1000003u ^
                                 static_cast<uint64_t>(p.second));
  }
};

// "<module>" from "&lt;module&gt;": the five entities nsys writes.
std::string HtmlUnescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      static constexpr std::pair<std::string_view, char> kEntities[] = {
          {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&#39;", '\''}};
      bool done = false;
      for (const auto& [entity, c] : kEntities) {
        if (s.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size() - 1;
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out += s[i];
  }
  return out;
}

// The frames of one sample's JSON; false when it is not the shape above.
bool ParseStack(simdjson::dom::parser& parser, std::string_view json, NsysContext& ctx,
                std::map<std::tuple<int64_t, int64_t, int64_t>, StringId>& frame_ids,
                std::vector<StringId>& stack) {
  stack.clear();
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::array frames;
  if (doc[kPySamplingDomain]["Frames"].get_array().get(frames) != simdjson::SUCCESS) {
    return false;
  }
  for (simdjson::dom::element frame : frames) {
    int64_t function = 0, file = 0, line = 0;
    if (frame["Function"].get_int64().get(function) != simdjson::SUCCESS ||
        frame["File"].get_int64().get(file) != simdjson::SUCCESS ||
        frame["Line"].get_int64().get(line) != simdjson::SUCCESS) {
      return false;
    }
    auto [it, inserted] = frame_ids.try_emplace({function, file, line});
    if (inserted) {
      std::string name = HtmlUnescape(ctx.strings.View(function));
      std::string where = HtmlUnescape(ctx.strings.View(file));
      // The file's last path component keeps names short; the line tells frames apart.
      const size_t slash = where.find_last_of('/');
      if (slash != std::string::npos) where = where.substr(slash + 1);
      it->second = ctx.builder.Intern(name + " (" + where + ":" + std::to_string(line) + ")");
    }
    stack.push_back(it->second);
  }
  return true;
}

}  // namespace

struct NsysHostBuffers {
  std::vector<std::array<int64_t, 5>> os_calls;  // start, end, globalTid, nameId, callchainId
  std::vector<std::array<int64_t, 3>> sched;     // globalTid, start, isSchedIn
  simdjson::dom::parser parser;
  std::map<std::tuple<int64_t, int64_t, int64_t>, StringId> frame_ids;
  std::vector<StringId> stack;
  int64_t samples = 0, without_stack = 0, unreadable = 0;
};

namespace {

NsysHostBuffers& Host(NsysContext& ctx) {
  if (!ctx.host) ctx.host = std::make_shared<NsysHostBuffers>();
  return *ctx.host;
}

}  // namespace

StatusOr<NsysSelect> SelectNsysOsCalls(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {{"start", true},
                                            {"end", true, "-1"},
                                            {"globalTid", true, "-1"},
                                            {"nameId", true, "-1"},
                                            {"callchainId", false, "0"}};
  return BuildNsysSelect(db, kNsysOsCallTable, kColumns);
}

void AddNsysOsCallRows(NsysContext& ctx, const NsysChunk& chunk) {
  NsysHostBuffers& h = Host(ctx);
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (v[2] < 0 || v[3] < 0) continue;
    h.os_calls.push_back({v[0], v[1], v[2], v[3], v[4]});
  }
}

StatusOr<NsysSelect> SelectNsysSched(SqliteDb& db, const std::vector<int64_t>& skip_threads) {
  static constexpr NsysColumn kColumns[] = {
      {"globalTid", true, "-1"}, {"start", true}, {"isSchedIn", true, "-1"}};
  // "globalTid <> a AND globalTid <> b ...", not "NOT IN (a, b, c)": SQLite runs a literal IN
  // list of more than two values as a lookup in a temporary index, per row, which made this scan
  // about 2.5x as costly (9 against 3.5 ms of SQLite CPU on the 2025.3 GIL export's 104,660 rows
  // with its 3 profiler threads; with 64 values still 11 against 6 ms; docs/evidence/host-side/).
  // A NULL globalTid passes neither form. A longer list keeps NOT IN: each AND deepens the
  // expression tree, which SQLite limits (SQLITE_MAX_EXPR_DEPTH, 1000 by default).
  constexpr size_t kMaxInequalities = 64;
  std::string where;
  const bool chain = skip_threads.size() <= kMaxInequalities;
  for (int64_t t : skip_threads) {
    where += (where.empty() ? ""
              : chain       ? " AND "
                            : ", ") +
             (chain ? "\"globalTid\" <> " : std::string()) + std::to_string(t);
  }
  if (!where.empty() && !chain) where = "\"globalTid\" NOT IN (" + where + ")";
  return BuildNsysSelect(db, kNsysSchedTable, kColumns, where);
}

StatusOr<std::vector<int64_t>> NsysProfilerThreads(SqliteDb& db) {
  std::vector<int64_t> out;
  if (!HasNsysColumn(db, "ThreadNames", "globalTid") ||
      !HasNsysColumn(db, "ThreadNames", "nameId") || !HasNsysColumn(db, "StringIds", "value")) {
    return out;
  }
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db.Prepare("SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON "
                              "s.id = t.nameId WHERE t.globalTid IS NOT NULL"));
  while (stmt.Step()) {
    if (stmt.IsNull(1) || !IsProfilerThreadName(stmt.Text(1))) continue;
    out.push_back(stmt.Int64(0));
  }
  RETURN_IF_ERROR(stmt.status());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void AddNsysSchedRows(NsysContext& ctx, const NsysChunk& chunk) {
  NsysHostBuffers& h = Host(ctx);
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (v[0] < 0 || v[2] < 0) continue;
    h.sched.push_back({v[0], v[1], v[2]});
  }
}

// The samples are read after the scan, when the NVTX domains are known, and only when one is named
// "Python Periodic Sampling": finding them costs a pass over NVTX_EVENTS, which traces without
// samples should not pay.
Status ReadNsysPySamples(NsysContext& ctx) {
  std::vector<std::pair<int32_t, int64_t>> ids;  // (pid, domainId) of the sampling domains
  for (const auto& [key, name] : ctx.nvtx_domains) {
    if (name == ctx.gil.py_sampling) ids.push_back(key);
  }
  if (ids.empty()) return Status::Ok();
  std::string in;
  for (const auto& [pid, id] : ids) in += (in.empty() ? "" : ",") + std::to_string(id);
  static constexpr NsysColumn kColumns[] = {
      {"start", true}, {"globalTid"}, {"domainId", true}, {"jsonText"}};
  ASSIGN_OR_RETURN(NsysSelect select,
                   BuildNsysSelect(ctx.db, kNsysNvtxTable, kColumns,
                                   "eventType = 34 AND domainId IN (" + in + ")"));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  NsysHostBuffers& h = Host(ctx);
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1)) continue;
    const int64_t global_tid = stmt.Int64(1);
    const int32_t pid = NsysPidOf(global_tid), tid = NsysTidOf(global_tid);
    if (std::find(ids.begin(), ids.end(), std::make_pair(pid, stmt.Int64(2))) == ids.end()) {
      continue;  // another process's domain with the same id
    }
    h.stack.clear();
    if (stmt.IsNull(3)) {
      ++h.without_stack;
    } else if (!ParseStack(h.parser, stmt.Text(3), ctx, h.frame_ids, h.stack)) {
      ++h.unreadable;
      h.stack.clear();
    }
    ctx.seen.AddThread(global_tid);
    ctx.builder.AddPySample(stmt.Int64(0), pid, tid, h.stack);
    ++h.samples;
  }
  RETURN_IF_ERROR(stmt.status());
  return ctx.strings.status();
}

// DIAGNOSTIC_EVENT: what the capture itself reported. Its warnings and errors become one diagnostic
// (the first message as the detail), and the GPU metrics it skipped ("GPU Metrics [0]: Skipping
// metric NVLRX.… (requires unsupported counter …)") another, naming the metric groups, so that a
// missing NVLink metric reads as skipped, not as zero.
Status ReadNsysDiagnosticEvents(NsysContext& ctx) {
  static constexpr char kTable[] = "DIAGNOSTIC_EVENT";
  if (!ctx.db.HasTable(kTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {{"severity", true}, {"text", true}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kTable, kColumns));
  // Rows come in no guaranteed order (nsys 2025.6 and later): the first message and the list of
  // groups must not depend on it.
  const std::string order =
      HasNsysColumn(ctx.db, kTable, "timestamp") ? " ORDER BY timestamp, text" : " ORDER BY text";
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql + order));
  int64_t problems = 0, skipped = 0;
  std::string first_problem;
  std::vector<std::string> groups;
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1)) continue;
    const std::string_view text = stmt.Text(1);
    if (text.starts_with("GPU Metrics [") && text.find("Skipping metric ") != std::string::npos) {
      ++skipped;
      std::string_view metric = text.substr(text.find("Skipping metric ") + 16);
      metric = metric.substr(0, metric.find('.'));
      if (std::find(groups.begin(), groups.end(), metric) == groups.end() && groups.size() < 8) {
        groups.emplace_back(metric);
      }
      continue;
    }
    if (stmt.Int64(0) >= 2 && stmt.Int64(0) <= 3) {  // Warning, Error
      if (problems++ == 0) first_problem = std::string(text.substr(0, 300));
    }
  }
  RETURN_IF_ERROR(stmt.status());
  Diagnostics& d = ctx.builder.diagnostics();
  if (problems > 0) d.Add(DiagCode::kNsysCaptureProblem, problems, "first: " + first_problem);
  if (skipped > 0) {
    std::string names;
    for (const std::string& g : groups) names += (names.empty() ? "" : ", ") + g;
    d.Add(DiagCode::kNsysGpuMetricsSkipped, skipped, "groups: " + names);
  }
  return Status::Ok();
}

// CPU samples (nsys -s process-tree): COMPOSITE_EVENTS (id, start, globalTid) with their call
// chains in SAMPLING_CALLCHAINS (id, stackDepth 0 = innermost, symbol, module), for the threads
// that own another imported event; frames interned as "symbol (module file name)".
Status ReadNsysCpuSamples(NsysContext& ctx) {
  if (!ctx.db.HasTable("COMPOSITE_EVENTS")) return Status::Ok();
  const bool chains = ctx.db.HasTable("SAMPLING_CALLCHAINS");
  ASSIGN_OR_RETURN(
      SqliteStatement stmt,
      ctx.db.Prepare(chains ? "SELECT e.id, e.start, e.globalTid, c.symbol, c.module FROM "
                              "COMPOSITE_EVENTS e LEFT JOIN SAMPLING_CALLCHAINS c ON c.id = e.id "
                              "ORDER BY e.id, c.stackDepth"
                            : "SELECT id, start, globalTid, NULL, NULL FROM COMPOSITE_EVENTS "
                              "ORDER BY id"));
  std::unordered_map<std::pair<int64_t, int64_t>, StringId, FrameKeyHash>
      frame_ids;  // symbol, module
  std::vector<StringId> stack;
  int64_t id = INT64_MIN, start = 0, global_tid = -1;
  bool keep = false;
  auto flush = [&] {
    if (keep) {
      ctx.builder.AddCpuSample(start, NsysPidOf(global_tid), NsysTidOf(global_tid), stack);
    }
    stack.clear();
  };
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1)) continue;
    if (stmt.Int64(0) != id) {
      flush();
      id = stmt.Int64(0);
      start = stmt.Int64(1);
      global_tid = stmt.IsNull(2) ? -1 : stmt.Int64(2);
      keep = global_tid >= 0 && ctx.seen.HasProcess(NsysPidOf(global_tid));
      if (keep) ctx.seen.AddThread(global_tid);
    }
    if (!keep || stmt.IsNull(3)) continue;
    const int64_t symbol = stmt.Int64(3), module = stmt.IsNull(4) ? -1 : stmt.Int64(4);
    auto [it, inserted] = frame_ids.try_emplace({symbol, module});
    if (inserted) {
      std::string where(module < 0 ? std::string_view() : ctx.strings.View(module));
      const size_t slash = where.find_last_of('/');
      if (slash != std::string::npos) where = where.substr(slash + 1);
      std::string name(ctx.strings.View(symbol));
      it->second = ctx.builder.Intern(where.empty() ? name : name + " (" + where + ")");
    }
    stack.push_back(it->second);
  }
  flush();
  RETURN_IF_ERROR(stmt.status());
  return ctx.strings.status();
}

// The call chains (OSRT_CALLCHAINS) of the kept OS calls, by callchainId, frames innermost first.
// Read only when a kept call names one; rows of other chains are skipped, not decoded.
StatusOr<std::unordered_map<int64_t, std::vector<StringId>>> ReadNsysOsCallChains(
    NsysContext& ctx, const NsysHostBuffers& h) {
  std::unordered_map<int64_t, std::vector<StringId>> chains;
  for (const auto& [start, end, global_tid, name, chain] : h.os_calls) {
    if (chain > 0 && ctx.seen.HasProcess(NsysPidOf(global_tid))) chains.try_emplace(chain);
  }
  if (chains.empty()) return chains;
  static constexpr char kTable[] = "OSRT_CALLCHAINS";
  for (const char* column : {"id", "symbol", "module", "stackDepth"}) {
    if (!HasNsysColumn(ctx.db, kTable, column)) return chains;  // all counted missing
  }
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   ctx.db.Prepare("SELECT id, symbol, module FROM OSRT_CALLCHAINS "
                                  "ORDER BY id, stackDepth"));
  std::unordered_map<std::pair<int64_t, int64_t>, StringId, FrameKeyHash>
      frame_ids;  // symbol, module
  int64_t id = INT64_MIN;
  std::vector<StringId>* frames = nullptr;
  while (stmt.Step()) {
    if (!stmt.AllIntegers(3)) {  // the schema's NOT NULL integers; a frame we cannot trust
      ++ctx.counts.wrong_type_rows[kTable];
      continue;
    }
    if (stmt.Int64(0) != id) {
      id = stmt.Int64(0);
      auto it = chains.find(id);
      frames = it == chains.end() ? nullptr : &it->second;
    }
    if (frames == nullptr) continue;
    const int64_t symbol = stmt.Int64(1), module = stmt.Int64(2);
    auto [it, inserted] = frame_ids.try_emplace({symbol, module});
    if (inserted) {
      std::string where(ctx.strings.View(module));
      const size_t slash = where.find_last_of('/');
      if (slash != std::string::npos) where = where.substr(slash + 1);
      std::string fn(ctx.strings.View(symbol));
      it->second = ctx.builder.Intern(where.empty() ? fn : fn + " (" + where + ")");
    }
    frames->push_back(it->second);
  }
  RETURN_IF_ERROR(stmt.status());
  return chains;
}

Status FinishNsysHostTables(NsysContext& ctx) {
  RETURN_IF_ERROR(ReadNsysDiagnosticEvents(ctx));
  RETURN_IF_ERROR(ReadNsysPySamples(ctx));
  if (!ctx.host) return ReadNsysCpuSamples(ctx);
  NsysHostBuffers& h = *ctx.host;
  Diagnostics& d = ctx.builder.diagnostics();
  // OS calls of the processes that own a CUDA or NVTX event, with their call chains.
  ASSIGN_OR_RETURN(const auto chains, ReadNsysOsCallChains(ctx, h));
  static const std::vector<StringId> kNoChain;
  int64_t other_process = 0, with_chain = 0, chain_missing = 0;
  for (const auto& [start, end, global_tid, name, chain] : h.os_calls) {
    if (!ctx.seen.HasProcess(NsysPidOf(global_tid))) {
      ++other_process;
      continue;
    }
    ctx.seen.AddThread(global_tid);
    const std::vector<StringId>* frames = &kNoChain;
    if (chain > 0) {
      auto it = chains.find(chain);
      if (it != chains.end() && !it->second.empty()) {
        frames = &it->second;
        ++with_chain;
      } else {
        ++chain_missing;
      }
    }
    ctx.builder.AddOsCall(start, end, NsysPidOf(global_tid), NsysTidOf(global_tid),
                          ctx.strings.Id(name), *frames);
  }
  d.Add(DiagCode::kNsysOsCallOtherProcess, other_process);
  if (with_chain > 0) {
    // The threshold the capture used (META_DATA_CAPTURE), so that the report can say which calls
    // have no chain; unknown in exports without it.
    std::string detail;
    if (HasNsysColumn(ctx.db, "META_DATA_CAPTURE", "name") &&
        HasNsysColumn(ctx.db, "META_DATA_CAPTURE", "value")) {
      ASSIGN_OR_RETURN(SqliteStatement stmt,
                       ctx.db.Prepare("SELECT value FROM META_DATA_CAPTURE WHERE name = "
                                      "'OS_RUNTIME_OPTIONS:BACKTRACES_THRESHOLD_NS'"));
      if (stmt.Step() && !stmt.IsNull(0)) {
        detail = fmt::format("backtrace threshold {} ns", stmt.Text(0).substr(0, 20));
      }
      RETURN_IF_ERROR(stmt.status());
    }
    d.Add(DiagCode::kNsysOsCallChains, with_chain, detail);
  }
  d.Add(DiagCode::kNsysOsCallChainMissing, chain_missing);
  // Off-CPU intervals of the threads that own other events: per thread, in time order, from a
  // switch-out to the next switch-in.
  std::sort(h.sched.begin(), h.sched.end());
  int64_t thread = INT64_MIN, out_at = -1;
  bool keep = false;
  for (const auto& [global_tid, t, in] : h.sched) {
    const int32_t pid = NsysPidOf(global_tid), tid = NsysTidOf(global_tid);
    if (global_tid != thread) {
      thread = global_tid;
      keep = ctx.seen.HasThread(pid, tid);
      out_at = -1;
    }
    if (!keep) continue;
    if (in == 0) {
      if (out_at < 0) out_at = t;
    } else if (out_at >= 0) {
      ctx.builder.AddOffCpu(out_at, t, pid, tid);
      out_at = -1;
    }
  }
  RETURN_IF_ERROR(ReadNsysCpuSamples(ctx));
  d.Add(DiagCode::kNsysPySamples, h.samples);
  d.Add(DiagCode::kNsysPySamplesWithoutStack, h.without_stack);
  d.Add(DiagCode::kNsysPySampleUnreadable, h.unreadable);
  ctx.host.reset();
  return ctx.strings.status();
}

}  // namespace sightline
