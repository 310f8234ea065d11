// The host side of an nsys export beyond CUDA and NVTX:
//
// OSRT_API (-t osrt): start, end, globalTid, nameId -> os_calls (the function name from StringIds),
//   for the processes that own a CUDA or NVTX event (the others are counted:
//   nsys_os_call_other_process).
// SCHED_EVENTS (--cpuctxsw): start, isSchedIn, globalTid -> off_cpu, one interval from a thread's
//   switch-out to its next switch-in; only threads that own another imported event are kept (a
//   process-tree capture lists every helper thread of the runtime), and a switch-out with no
//   switch-in before the capture ends is not an interval.
// NVTX_EVENTS marks (eventType 34) in the domain "Python Periodic Sampling" (--python-sampling):
//   start, globalTid, jsonText -> py_samples. jsonText is
//   {"Python Periodic Sampling":{"Thread state":..,"Frames":[{"Function":F,"File":S,"Line":L},..]}}
//   with F and S ids into StringIds, innermost frame first, names HTML-escaped ("&lt;module&gt;").
//   Without `nsys export --include-json=true` jsonText is NULL: the samples are kept without
//   stacks and counted (nsys_py_samples_without_stack).
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

constexpr std::string_view kPySamplingDomain = "Python Periodic Sampling";
constexpr int64_t kMark = 34;

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

Status ReadOsCalls(NsysContext& ctx) {
  static const std::string kTable = "OSRT_API";
  if (!ctx.db.HasTable(kTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {
      {"start", true}, {"end", true}, {"globalTid", true}, {"nameId", true}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kTable, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  int64_t other_process = 0;
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1) || stmt.IsNull(2) || stmt.IsNull(3)) continue;
    const int64_t global_tid = stmt.Int64(2);
    if (!ctx.seen.HasProcess(NsysPidOf(global_tid))) {
      ++other_process;  // a process with no CUDA or NVTX event: not the one being analysed
      continue;
    }
    ctx.seen.AddThread(global_tid);
    ctx.builder.AddOsCall(stmt.Int64(0), stmt.Int64(1), NsysPidOf(global_tid),
                          NsysTidOf(global_tid), ctx.strings.Id(stmt.Int64(3)));
  }
  RETURN_IF_ERROR(stmt.status());
  ctx.builder.diagnostics().Add(DiagCode::kNsysOsCallOtherProcess, other_process);
  return ctx.strings.status();
}

Status ReadSchedEvents(NsysContext& ctx) {
  static const std::string kTable = "SCHED_EVENTS";
  if (!ctx.db.HasTable(kTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {{"start", true}, {"isSchedIn", true}, {"globalTid"}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kTable, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql + " ORDER BY globalTid, start"));
  int64_t thread = INT64_MIN;
  bool keep = false;
  int64_t out_at = -1;  // the pending switch-out of `thread`; -1 none
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1) || stmt.IsNull(2)) continue;
    const int64_t global_tid = stmt.Int64(2);
    const int32_t pid = NsysPidOf(global_tid), tid = NsysTidOf(global_tid);
    if (global_tid != thread) {
      thread = global_tid;
      keep = ctx.seen.HasThread(pid, tid);
      out_at = -1;
    }
    if (!keep) continue;
    const int64_t t = stmt.Int64(0);
    if (stmt.Int64(1) == 0) {
      if (out_at < 0) out_at = t;
    } else if (out_at >= 0) {
      ctx.builder.AddOffCpu(out_at, t, pid, tid);
      out_at = -1;
    }
  }
  return stmt.status();
}

Status ReadPySamples(NsysContext& ctx) {
  if (!ctx.db.HasTable(kNsysNvtxTable) || !HasNsysColumn(ctx.db, kNsysNvtxTable, "domainId")) {
    return Status::Ok();
  }
  // The sampling domain's ids, per process.
  const StringId domain = ctx.builder.Intern(kPySamplingDomain);
  std::vector<std::pair<int32_t, int64_t>> ids;
  for (const auto& [key, name] : ctx.nvtx_domains) {
    if (name == domain) ids.push_back(key);
  }
  if (ids.empty()) return Status::Ok();
  const bool has_json = HasNsysColumn(ctx.db, kNsysNvtxTable, "jsonText");
  std::string in;
  for (const auto& [pid, id] : ids) in += (in.empty() ? "" : ",") + std::to_string(id);
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   ctx.db.Prepare(std::string("SELECT start, globalTid, domainId, ") +
                                  (has_json ? "jsonText" : "NULL") + " FROM " + kNsysNvtxTable +
                                  " WHERE eventType = " + std::to_string(kMark) +
                                  " AND domainId IN (" + in + ")"));
  simdjson::dom::parser parser;
  std::map<std::tuple<int64_t, int64_t, int64_t>, StringId> frame_ids;
  std::vector<StringId> stack;
  int64_t samples = 0, without_stack = 0, unreadable = 0;
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1)) continue;
    const int64_t global_tid = stmt.Int64(1);
    const int32_t pid = NsysPidOf(global_tid), tid = NsysTidOf(global_tid);
    if (std::find(ids.begin(), ids.end(), std::make_pair(pid, stmt.Int64(2))) == ids.end()) {
      continue;  // another process's domain with the same id
    }
    stack.clear();
    if (stmt.IsNull(3)) {
      ++without_stack;
    } else if (!ParseStack(parser, stmt.Text(3), ctx, frame_ids, stack)) {
      ++unreadable;
      stack.clear();
    }
    ctx.seen.AddThread(global_tid);
    ctx.builder.AddPySample(stmt.Int64(0), pid, tid, stack);
    ++samples;
  }
  RETURN_IF_ERROR(stmt.status());
  Diagnostics& d = ctx.builder.diagnostics();
  d.Add(DiagCode::kNsysPySamples, samples);
  d.Add(DiagCode::kNsysPySamplesWithoutStack, without_stack);
  d.Add(DiagCode::kNsysPySampleUnreadable, unreadable);
  return ctx.strings.status();
}

}  // namespace

Status ReadNsysHostTables(NsysContext& ctx) {
  RETURN_IF_ERROR(ReadOsCalls(ctx));
  RETURN_IF_ERROR(ReadPySamples(ctx));
  return ReadSchedEvents(ctx);  // last: it keeps the threads the others saw
}

}  // namespace sightline
