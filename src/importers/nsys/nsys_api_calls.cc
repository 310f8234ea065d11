// Host API calls of an nsys export.
//
// CUPTI_ACTIVITY_KIND_RUNTIME holds CUDA runtime and driver calls: eventClass
// (ENUM_NSYS_EVENT_CLASS) TRACE_PROCESS_EVENT_CUDA_RUNTIME -> kind runtime,
// TRACE_PROCESS_EVENT_CUDA_DRIVER -> driver; rows of any other class are not API calls and are
// counted, not imported. start, end -> start_ns, end_ns; globalTid -> pid (bits 24..47), tid (bits
// 0..23); correlationId -> correlation; nameId -> name (StringIds; the builder drops the "_v7000"
// version suffix). returnValue and callchainId are not in the model.
#include "importers/nsys/nsys_tables.h"

namespace sightline {

StatusOr<NsysSelect> SelectNsysApiCalls(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", true},
      {"eventClass", false, "-1"},  // -1 (no class given): a runtime call
      {"globalTid", false, "-1"},
      {"correlationId", false, "-1"},
      {"nameId", true, "-1"},
  };
  return BuildNsysSelect(db, kNsysRuntimeTable, kColumns);
}

void AddNsysApiCallRows(NsysContext& ctx, const NsysChunk& chunk) {
  ApiCallRow row;
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (v[2] == -1) {
      row.kind = ApiKind::kRuntime;
    } else if (const std::optional<ApiKind> kind = ctx.enums.ApiKindOf(v[2])) {
      row.kind = *kind;
    } else {
      ++ctx.counts.api_other_class;
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
    row.correlation = v[4];
    row.name = ctx.strings.View(v[5]);
    ctx.builder.AddApiCall(row);
  }
}

}  // namespace sightline
