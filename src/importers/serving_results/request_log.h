// Reader of the instrument library's request log (SIGHTLINE_REQUEST_LOG; JSON lines, one per
// request event; docs/formats/request-log.md) into per-request results (serving/request_results.h):
// TTFT from the server receiving the request to its first emitted tokens, ITL between emitted
// chunks, queue time to first scheduling, and the iterations each request's events fell in.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/serving_results/request_results.h"

namespace sightline {

// True when the text's first non-empty line is a request-log line (schema_version + request).
bool LooksLikeRequestLog(std::string_view text);

// Errors are InvalidInput with "PATH:LINE: what is wrong".
StatusOr<RequestResults> ParseRequestLog(std::string_view text, const std::string& path);

}  // namespace sightline
