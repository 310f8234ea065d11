// Recognising a Kineto trace from its first bytes: a JSON object, plain or gzip'd (the gzip'd
// prefix is inflated as far as the bytes at hand allow). A leading UTF-8 BOM is tolerated.
#pragma once

#include <cstddef>
#include <string_view>

namespace sightline::kineto {

// True when the bytes (after an optional UTF-8 BOM and whitespace) start a JSON object.
bool LooksLikeJsonObject(std::string_view bytes);

// Inflates as much of a gzip prefix as the bytes allow (at most out_size bytes) and returns how
// many leading output bytes are known good.
size_t InflateGzipPrefix(std::string_view gz, char* out, size_t out_size);

}  // namespace sightline::kineto
