// Nsight Compute exports as a kind of document (analyses/common/document_kind.h): the details or
// raw pages and the source page, analysed alone into one report (kernel/ncu_report.h). Two are put
// side by side by `sightline ncu`, not `sightline diff`. Its folder holds no analysis of its own.
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& NcuExportKind();

}  // namespace sightline
