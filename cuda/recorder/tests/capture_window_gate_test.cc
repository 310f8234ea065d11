// The recorder's capture-window gate (capture_window_gate.h): with a capture range, the driver
// launch calls enabled for the whole run are kept only when they start inside a window.
#include "capture_window_gate.h"

#include <gtest/gtest.h>

namespace sightline::recorder {
namespace {

TEST(CaptureWindowGate, NothingBeforeTheFirstWindow) {
  CaptureWindowGate gate;
  EXPECT_FALSE(gate.Contains(0));
  EXPECT_FALSE(gate.Contains(1000));
}

TEST(CaptureWindowGate, TheOpenWindowKeepsWhatStartsFromItsStart) {
  CaptureWindowGate gate;
  gate.Open(100);
  EXPECT_FALSE(gate.Contains(99));
  EXPECT_TRUE(gate.Contains(100));
  EXPECT_TRUE(gate.Contains(1'000'000));
}

TEST(CaptureWindowGate, ClosedWindowsKeepTheirSpanOnly) {
  CaptureWindowGate gate;
  gate.Open(100);
  gate.Close(200);
  gate.Open(300);
  gate.Close(400);
  EXPECT_FALSE(gate.Contains(50));
  EXPECT_TRUE(gate.Contains(100));
  EXPECT_TRUE(gate.Contains(150));
  EXPECT_TRUE(gate.Contains(200));
  EXPECT_FALSE(gate.Contains(250));
  EXPECT_TRUE(gate.Contains(300));
  EXPECT_TRUE(gate.Contains(400));
  EXPECT_FALSE(gate.Contains(401));  // after the last window (the rest of the run)
}

TEST(CaptureWindowGate, CloseWithoutOpenIsIgnored) {
  CaptureWindowGate gate;
  gate.Close(200);
  EXPECT_FALSE(gate.Contains(150));
  gate.Open(300);
  gate.Close(400);
  gate.Close(500);
  EXPECT_FALSE(gate.Contains(450));
  EXPECT_TRUE(gate.Contains(350));
}

}  // namespace
}  // namespace sightline::recorder
