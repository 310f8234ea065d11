// How `sightline query` writes a result: an aligned text table, CSV (RFC 4180) or JSON
// ({"columns": [...], "rows": [[...]], "truncated": bool}). Numbers are written as stored:
// integers whole (nanoseconds stay nanoseconds), reals with up to 17 significant digits.
#pragma once

#include <string>
#include <string_view>

#include "query/query_db.h"

namespace sightline {

std::string RenderQueryTable(const QueryResult& result);
std::string RenderQueryCsv(const QueryResult& result);
std::string RenderQueryJson(const QueryResult& result);

}  // namespace sightline
