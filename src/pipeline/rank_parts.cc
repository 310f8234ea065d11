#include "pipeline/rank_parts.h"

#include "analyses/common/analysis_context.h"
#include "base/byte_codec.h"
#include "pipeline/pipeline.h"
#include "pipeline/trace_sets.h"
#include "report/report_codec.h"

namespace sightline {
namespace {
// "SKP3": Sightline rank part, version 3 (2: series carry lines; 3: the serving analysis's state
// of the first rank carries its token-gap join).
constexpr uint32_t kRankPartMagic = 0x534b5033;
}  // namespace

StatusOr<std::string> ReduceRankFile(const std::string& path, size_t index,
                                     const AnalyzeOptions& options, const RunInputs& inputs,
                                     const std::vector<MultiTraceAnalysis*>& multi, bool sections,
                                     int analysis_threads) {
  ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, ImportContext(path, options, inputs));
  TraceSetMember member;
  member.path = path;
  member.label = MemberLabel(path, context->trace());
  member.input = 0;
  member.index = static_cast<int>(index);
  Report local;
  if (sections) {
    RETURN_IF_ERROR(AnalyzeTrace(*context, member.label, local, analysis_threads));
  } else {
    AddReportInput(*context, member.label, local);
  }

  ByteWriter w;
  w.Put(kRankPartMagic);
  w.PutString(member.label);
  EncodeReportInput(local.inputs.at(0), w);
  w.Put<uint64_t>(local.sections.size());
  for (const Section& s : local.sections) EncodeSection(s, w);
  w.Put<uint64_t>(local.findings.size());
  for (const Finding& f : local.findings) EncodeFinding(f, w);
  w.Put<uint64_t>(multi.size());
  for (MultiTraceAnalysis* m : multi) {
    StatusOr<std::string> state = m->Reduce(context, member);
    if (!state.ok()) return state.status().WithPrefix(path);
    w.PutString(*state);
  }
  return std::move(w.bytes());
}

Status MergeRankPart(const std::string& blob, TraceSetMember& member, Report& report,
                     const std::vector<MultiTraceAnalysis*>& multi) {
  ByteReader r(blob);
  if (r.Get<uint32_t>() != kRankPartMagic) {
    return InternalError("rank part: not a version-3 rank part (mixed Sightline versions?)");
  }
  const int base = static_cast<int>(report.inputs.size());
  member.label = r.GetString();
  member.input = base;
  ReportInput in = DecodeReportInput(r);
  std::vector<Section> sections(r.GetCount(8));
  for (Section& s : sections) {
    s = DecodeSection(r);
    if (s.input >= 0) s.input += base;
  }
  std::vector<Finding> findings(r.GetCount(8));
  for (Finding& f : findings) {
    f = DecodeFinding(r);
    if (f.input >= 0) f.input += base;
  }
  std::vector<std::string> states(r.GetCount(8));
  for (std::string& s : states) s = r.GetString();
  RETURN_IF_ERROR(r.Finish("rank part"));
  if (states.size() != multi.size()) {
    return InternalError("rank part: made with another set of multi-trace analyses");
  }
  report.inputs.push_back(std::move(in));
  for (Section& s : sections) report.sections.push_back(std::move(s));
  for (Finding& f : findings) report.findings.push_back(std::move(f));
  for (size_t i = 0; i < multi.size(); ++i) {
    Status s = multi[i]->AddReduced(states[i], member);
    if (!s.ok()) return s.WithPrefix(member.path);
  }
  return Status::Ok();
}

}  // namespace sightline
