// The saved questions of `sightline query --list` (docs/query.md, "Named queries"): SQL over the
// query schema, run as `sightline query INPUT... @NAME [--param KEY=VALUE]...`. Parameters a
// question does not get are NULL, and each question gives its own default with coalesce().
#pragma once

#include <string_view>
#include <vector>

namespace sightline {

struct NamedQuery {
  const char* name;
  const char* summary;
  const char* params;  // "n: how many (5)"; "" when none
  const char* sql;
};

const std::vector<NamedQuery>& NamedQueries();
const NamedQuery* FindNamedQuery(std::string_view name);

}  // namespace sightline
