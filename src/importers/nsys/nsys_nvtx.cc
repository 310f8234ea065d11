// NVTX ranges of an nsys export.
//
// NVTX_EVENTS rows by eventType (ENUM_NSYS_EVENT_TYPE): 59 NvtxPushPopRange -> kind push/pop,
// 60 NvtxStartEndRange -> kind start/end (70/71, the NVTXT file equivalents, map the same way).
// start, end -> start_ns, end_ns; globalTid (the starting thread) -> pid, tid; name = text when
// set, else StringIds[textId]; domain = the name of the NvtxDomainCreate event (type 75) with the
// same domainId in the same process (its text, or StringIds[textId]), as nsys's own reports join
// them; domainId 0 is the default domain (empty). Ranges without an end (still open when the
// capture stopped) are dropped and counted; marks and other event types (categories, thread
// names, payload-only events) are counted as info and not imported. nsys's GIL tracing (-t
// python-gil: push/pop ranges "Holding GIL" / "Waiting for GIL" in the domain "GIL Trace", one
// per thread and interval) goes to the GIL table instead of the ranges, counted as info
// (nsys_gil_ranges): a 5-second loop holds hundreds of thousands of them.
#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

constexpr int64_t kPushPopRange = 59;
constexpr int64_t kStartEndRange = 60;
constexpr int64_t kNvtxtPushPopRange = 70;
constexpr int64_t kNvtxtStartEndRange = 71;
constexpr int64_t kMark = 34;
constexpr int64_t kNvtxtMark = 65;
constexpr int64_t kDomainCreate = 75;

// ifnull(end, ...) for a range that never ended: no real timestamp is this small.
constexpr int64_t kNoEnd = INT64_MIN;

}  // namespace

StatusOr<NsysSelect> SelectNsysNvtxDomains(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"domainId", true, "0"},
      {"globalTid", false, "-1"},
      {"text"},  // text: kNsysNvtxDomainTextColumns
      {"textId", false, "-1"},
  };
  return BuildNsysSelect(db, kNsysNvtxTable, kColumns, "eventType = 75");
}

void AddNsysNvtxDomainRows(NsysContext& ctx, const NsysChunk& chunk) {
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    const int32_t pid = v[1] < 0 ? -1 : NsysPidOf(v[1]);
    StringId name;
    if (v[2] >= 0) {
      name = ctx.builder.Intern(chunk.text(v[2]));
    } else if (v[3] >= 0) {
      name = ctx.strings.Id(v[3]);
    }
    ctx.nvtx_domains.emplace(std::make_pair(pid, v[0]), name);  // the first one wins
  }
}

StatusOr<NsysSelect> SelectNsysNvtx(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", false, "(-9223372036854775807 - 1)"},  // kNoEnd
      {"eventType", true, "-1"},
      {"globalTid", false, "-1"},
      {"text"},  // text: kNsysNvtxTextColumns
      {"textId", false, "-1"},
      {"domainId", false, "0"},
  };
  return BuildNsysSelect(db, kNsysNvtxTable, kColumns);
}

void AddNsysNvtxRows(NsysContext& ctx, const NsysChunk& chunk) {
  RangeRow row;
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    const int64_t type = v[2];
    if (type == kPushPopRange || type == kNvtxtPushPopRange) {
      row.kind = RangeKind::kNvtxPushPop;
    } else if (type == kStartEndRange || type == kNvtxtStartEndRange) {
      row.kind = RangeKind::kNvtxStartEnd;
    } else {
      if (type == kMark || type == kNvtxtMark) {
        // Python samples are marks in their own domain, read by ReadNsysHostTables.
        if (v[6] != 0) {
          auto it = ctx.nvtx_domains.find(std::make_pair(v[3] < 0 ? -1 : NsysPidOf(v[3]), v[6]));
          if (it != ctx.nvtx_domains.end() && it->second == ctx.gil.py_sampling) continue;
        }
        ++ctx.counts.nvtx_marks;
      } else if (type != kDomainCreate) {
        ++ctx.counts.nvtx_other;
      }
      continue;
    }
    if (v[1] == kNoEnd) {
      ++ctx.counts.nvtx_without_end;
      continue;
    }
    row.start_ns = v[0];
    row.end_ns = v[1];
    if (v[3] < 0) {
      row.pid = row.tid = -1;
    } else {
      ctx.seen.AddThread(v[3]);
      row.pid = NsysPidOf(v[3]);
      row.tid = NsysTidOf(v[3]);
    }
    if (v[4] >= 0) {
      row.name = ctx.builder.Intern(chunk.text(v[4]));
    } else if (v[5] >= 0) {
      row.name = ctx.strings.Id(v[5]);
    } else {
      row.name = StringId{};
    }
    row.domain = StringId{};
    if (v[6] != 0 && !ctx.nvtx_domains.empty()) {
      auto it = ctx.nvtx_domains.find(std::make_pair(row.pid, v[6]));
      if (it != ctx.nvtx_domains.end()) row.domain = it->second;
    }
    if (row.domain == ctx.gil.domain &&
        (row.name == ctx.gil.holding || row.name == ctx.gil.waiting)) {
      ctx.builder.AddGil(GilRow{row.start_ns, row.end_ns, row.pid, row.tid,
                                row.name == ctx.gil.holding ? GilState::kHeld : GilState::kWaited});
      ++ctx.counts.gil_ranges;
      continue;
    }
    ctx.builder.AddRange(row);
  }
}

}  // namespace sightline
