// CaptureRangeFilter (capture_ranges.h): with markers on for the whole run, the ranges open while a
// graph was captured before the first window are kept, the ones in windows too, and the rest are
// left out or counted unpaired as when markers were switched with the windows.
#include "capture_ranges.h"

#include <gtest/gtest.h>

namespace sightline::recorder {
namespace {

using Verdict = CaptureRangeFilter::Verdict;

TEST(CaptureRangeFilter, KeepsCaptureRangesBeforeTheWindowAndRangesInIt) {
  CaptureWindowGate windows;
  windows.Open(1000);
  windows.Close(2000);
  CaptureRangeFilter f;
  f.AddNode(7, 100);  // the capture, before the window, on thread 7
  f.AddNode(7, 150);
  f.AddNode(7, 400);  // instantiation
  // layer_0 > attention open around the first node on thread 7: kept.
  EXPECT_EQ(f.Judge(windows, 7, 90, 120), Verdict::kKeep);
  EXPECT_EQ(f.Judge(windows, 7, 50, 300), Verdict::kKeep);
  EXPECT_EQ(f.Judge(windows, 7, 150, 150), Verdict::kKeep);  // ends are inclusive
  // The same times on another thread, or between the nodes: left out.
  EXPECT_EQ(f.Judge(windows, 8, 90, 120), Verdict::kLeaveOut);
  EXPECT_EQ(f.Judge(windows, 7, 160, 390), Verdict::kLeaveOut);
  EXPECT_EQ(f.Judge(windows, 7, 500, 600), Verdict::kLeaveOut);
  // Inside the window: kept; across its edges: unpaired, as before.
  EXPECT_EQ(f.Judge(windows, 8, 1100, 1900), Verdict::kKeep);
  EXPECT_EQ(f.Judge(windows, 8, 900, 1100), Verdict::kUnpaired);
  EXPECT_EQ(f.Judge(windows, 8, 1900, 2100), Verdict::kUnpaired);
  // A range around the capture and across the window's start holds nodes: kept.
  EXPECT_EQ(f.Judge(windows, 7, 50, 1500), Verdict::kKeep);
}

TEST(CaptureRangeFilter, NoNodesNoWindowsKeepsNothing) {
  CaptureWindowGate windows;
  const CaptureRangeFilter f;
  EXPECT_FALSE(f.NodeCreatedIn(1, 0, 1'000'000));
  EXPECT_EQ(f.Judge(windows, 1, 0, 10), Verdict::kLeaveOut);
}

}  // namespace
}  // namespace sightline::recorder
