// Binary encoding of the parts of a Report that one input produces (its ReportInput, sections and
// findings), so that a rank analysed in another process or thread joins process 0's report
// exactly as if it had been analysed there (pipeline/rank_parts.h). Lossless: doubles bit for bit.
// Every field the Report describes (report_schema.h) is carried, in that order; the encoding is
// only read by the same build.
#pragma once

#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

void EncodeReportInput(const ReportInput& in, ByteWriter& w);
void EncodeSection(const Section& s, ByteWriter& w);
void EncodeFinding(const Finding& f, ByteWriter& w);
void EncodeReport(const Report& report, ByteWriter& w);  // a whole report (tests)

// Each reads what the matching Encode wrote; a malformed blob leaves the reader failed (r.ok()).
ReportInput DecodeReportInput(ByteReader& r);
Section DecodeSection(ByteReader& r);
Finding DecodeFinding(ByteReader& r);
Report DecodeReport(ByteReader& r);

}  // namespace sightline
