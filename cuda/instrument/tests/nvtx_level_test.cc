// SIGHTLINE_NVTX_LEVEL through NVTX itself: this binary carries a static NVTX injection (the
// InitializeInjectionNvtx2_fnptr hook of the NVTX3 headers, nvtx_injection_hook.cc) that counts the
// calls NVTX forwards to a tool, so "level 0 makes no NVTX call" is observed where a profiler would
// observe it.
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

#include <atomic>
#include <string>

#include "sightline/instrument.h"
#include "testing.h"

namespace {

std::atomic<int> g_inits{0}, g_domains{0}, g_pushes{0}, g_pops{0}, g_marks{0};
std::string g_last_push;  // written on the test's thread only
std::string g_domain_name;

nvtxDomainHandle_t NVTX_API CreateDomain(const char* name) {
  ++g_domains;
  g_domain_name = name;
  return reinterpret_cast<nvtxDomainHandle_t>(0x5151);
}
int NVTX_API PushEx(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  ++g_pushes;
  g_last_push = a->message.ascii;
  return 0;
}
int NVTX_API Pop(nvtxDomainHandle_t) {
  ++g_pops;
  return 0;
}
void NVTX_API MarkEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { ++g_marks; }

}  // namespace

// Installed by nvtx_injection_hook.cc.
extern "C" int NVTX_API SightlineTestInitInjection(NvtxGetExportTableFunc_t get_export_table) {
  ++g_inits;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) {
    return 0;
  }
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&CreateDomain);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&PushEx);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&Pop);
  *table[NVTX_CBID_CORE2_DomainMarkEx] = reinterpret_cast<NvtxFunctionPointer>(&MarkEx);
  return 1;
}

namespace {

struct Counts {
  int inits, domains, pushes, pops, marks;
  static Counts Now() { return {g_inits, g_domains, g_pushes, g_pops, g_marks}; }
};

// One iteration with ranges of both levels and a verbose marker.
void Workload() {
  sightline::IterationBegin(4);
  {
    sightline::ScopedRange basic("basic work");
    sightline::ScopedRange verbose("layer 0", sightline::kNvtxVerbose);
    sightline_mark(SIGHTLINE_NVTX_VERBOSE, "marker");
  }
  sightline::IterationEnd(4);
}

class NvtxLevel : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("NVTX_INJECTION64_PATH"); }
  void TearDown() override {
    unsetenv("SIGHTLINE_NVTX_LEVEL");
    sightline::instrument::ReloadForTesting();
  }
  void SetLevel(const char* level) {
    setenv("SIGHTLINE_NVTX_LEVEL", level, 1);
    sightline::instrument::ReloadForTesting();
  }
};

TEST_F(NvtxLevel, LevelZeroMakesNoNvtxCall) {
  SetLevel("0");
  EXPECT_FALSE(sightline::NvtxEnabled(sightline::kNvtxBasic));
  const Counts before = Counts::Now();
  for (int i = 0; i < 100; ++i) Workload();
  const Counts after = Counts::Now();
  EXPECT_EQ(after.inits, before.inits);
  EXPECT_EQ(after.domains, before.domains);
  EXPECT_EQ(after.pushes, before.pushes);
  EXPECT_EQ(after.pops, before.pops);
  EXPECT_EQ(after.marks, before.marks);
}

TEST_F(NvtxLevel, VerboseEmitsEveryRangeInTheSightlineDomain) {
  SetLevel("2");
  const Counts before = Counts::Now();
  Workload();
  const Counts after = Counts::Now();
  EXPECT_EQ(after.inits, 1);  // NVTX found this binary's injection
  EXPECT_EQ(g_domain_name, "sightline");
  EXPECT_EQ(after.pushes - before.pushes, 3);  // iteration, basic, verbose
  EXPECT_EQ(after.pops - before.pops, 3);
  EXPECT_EQ(after.marks - before.marks, 1);
}

TEST_F(NvtxLevel, BasicSkipsVerboseRanges) {
  SetLevel("1");
  const Counts before = Counts::Now();
  Workload();
  const Counts after = Counts::Now();
  EXPECT_EQ(after.pushes - before.pushes, 2);  // iteration, basic
  EXPECT_EQ(after.pops - before.pops, 2);
  EXPECT_EQ(after.marks - before.marks, 0);
  sightline::IterationBegin(17);
  EXPECT_EQ(g_last_push, "iteration 17");
  sightline::IterationEnd(17);
}

}  // namespace
