// docs/query.md holds the schema as `sightline query --schema` prints it, and names every saved
// question.
#include <gtest/gtest.h>

#include <string>

#include "query/named_queries.h"
#include "query/query_schema.h"
#include "testing/files.h"

namespace sightline {
namespace {

TEST(QueryDoc, HoldsTheSchemaAndTheSavedQuestions) {
  const std::string doc = testing::Slurp(std::string(SIGHTLINE_SOURCE_DIR) + "/docs/query.md");
  EXPECT_NE(doc.find(QuerySchemaMarkdown()), std::string::npos)
      << "docs/query.md: paste the output of `sightline query --schema` again";
  for (const NamedQuery& q : NamedQueries()) {
    EXPECT_NE(doc.find(std::string("`@") + q.name + "`"), std::string::npos) << q.name;
  }
}

}  // namespace
}  // namespace sightline
