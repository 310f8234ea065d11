// Tests of the registry of document kinds (analyses/common/document_kind.h): every kind of
// document a reader returns is taken by one entry, and each entry declares what its role needs, so
// that the pipeline, which names no kind, has something to call for every file the front door
// recognises.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analyses/common/document_kind.h"
#include "importers/inputs.h"

namespace sightline {
namespace {

using Role = DocumentKind::Role;

TEST(DocumentKinds, EveryReadersKindIsTakenByExactlyOneEntry) {
  for (const InputReaderEntry& reader : InputReaders()) {
    int taken = 0;
    for (const DocumentKind* kind : DocumentKinds()) {
      if (kind->named_only) continue;
      for (InputKind d : kind->documents) taken += d == reader.kind ? 1 : 0;
    }
    EXPECT_EQ(taken, 1) << reader.name << " returns a " << InputKindName(reader.kind);
    const DocumentKind* kind = DocumentKindOf(reader.kind);
    ASSERT_NE(kind, nullptr) << reader.name;
  }
}

TEST(DocumentKinds, EachEntryHasWhatItsRoleNeeds) {
  std::set<std::string> names, options;
  int members = 0;
  for (const DocumentKind* kind : DocumentKinds()) {
    SCOPED_TRACE(kind->name);
    EXPECT_TRUE(names.insert(kind->name).second) << "two entries named " << kind->name;
    EXPECT_FALSE(kind->documents.empty());
    EXPECT_NE(*kind->plural, '\0');
    if (*kind->option != '\0') {
      EXPECT_TRUE(options.insert(kind->option).second) << "two entries of " << kind->option;
      EXPECT_EQ(DocumentKindOfOption(kind->option), kind);
    }
    if (kind->named_only) {
      EXPECT_NE(*kind->option, '\0') << "named only, but by no option";
    }
    switch (kind->role) {
      case Role::kMember:
        ++members;
        EXPECT_NE(kind->use, nullptr);
        break;
      case Role::kJoins:
        EXPECT_NE(kind->join, nullptr);
        EXPECT_NE(kind->use, nullptr);
        EXPECT_TRUE(kind->named_only || *kind->one_only != '\0') << "at most one: say why";
        break;
      case Role::kAlone:
        EXPECT_NE(kind->analyze, nullptr);
        EXPECT_NE(*kind->alone_phrase, '\0');
        break;
      case Role::kElsewhere:
        EXPECT_NE(std::string(kind->elsewhere).find("{0}"), std::string::npos);
        break;
    }
  }
  EXPECT_EQ(members, 1) << "one kind is the run's traces";
  EXPECT_EQ(DocumentKindOfOption("--no-such-option"), nullptr);
}

TEST(DocumentKinds, ListsOfKindsReadAsASentence) {
  EXPECT_EQ(ListOfKinds({"a"}, "or"), "a");
  EXPECT_EQ(ListOfKinds({"a", "b"}, "and"), "a and b");
  EXPECT_EQ(ListOfKinds({"a", "b", "c"}, "or"), "a, b or c");
}

}  // namespace
}  // namespace sightline
