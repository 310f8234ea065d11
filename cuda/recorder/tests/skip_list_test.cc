// SIGHTLINE_RECORD_SKIP's parsing (skip_list.h), without a GPU: the kinds named are left out, the
// callbacks and the driver launch calls by their own names, an unknown name is ignored.
#include "skip_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace sightline::recorder {
namespace {

TEST(SkipList, NamesLeaveOutTheirKindsAndSwitches) {
  std::vector<CUpti_ActivityKind> kinds;
  bool graph_nodes = true, graph_events = true, driver_launches = true;
  ParseSkip("memcpy,driver_launches,no_such_kind,graph_nodes", &kinds, &graph_nodes, &graph_events,
            &driver_launches);
  EXPECT_EQ(kinds, (std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_MEMCPY,
                                                    CUPTI_ACTIVITY_KIND_MEMCPY2}));
  EXPECT_FALSE(driver_launches);
  EXPECT_FALSE(graph_nodes);
  EXPECT_TRUE(graph_events);
}

TEST(SkipList, AnEmptyListLeavesEverythingIn) {
  std::vector<CUpti_ActivityKind> kinds;
  bool graph_nodes = true, graph_events = true, driver_launches = true;
  ParseSkip("", &kinds, &graph_nodes, &graph_events, &driver_launches);
  EXPECT_TRUE(kinds.empty());
  EXPECT_TRUE(graph_nodes && graph_events && driver_launches);
}

}  // namespace
}  // namespace sightline::recorder
