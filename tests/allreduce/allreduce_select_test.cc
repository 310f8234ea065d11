// libsightline_allreduce's host side without a GPU (src/shared/ar_select.h): the table cell a
// call is looked up in, the committed table's choices, the SIGHTLINE_ALLREDUCE_STRATEGY override's
// parsing and the fallback from a strategy the kernels cannot take.
#include <gtest/gtest.h>

#include <string>

#include "shared/allreduce_lut.h"
#include "shared/ar_select.h"

namespace sightline::allreduce {
namespace {

constexpr sightline_ar_strategy kAuto = SIGHTLINE_AR_STRATEGY_AUTO;
constexpr sightline_ar_strategy kNccl = SIGHTLINE_AR_STRATEGY_NCCL;
constexpr sightline_ar_strategy kOne = SIGHTLINE_AR_STRATEGY_ONESHOT;
constexpr sightline_ar_strategy kTwo = SIGHTLINE_AR_STRATEGY_TWOSHOT;
constexpr sightline_ar_strategy kLamport = SIGHTLINE_AR_STRATEGY_LAMPORT;

ArCallShape Fused(int world, int64_t hidden, int64_t tokens,
                  sightline_ar_fusion f = SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM) {
  ArCallShape c;
  c.world = world;
  c.fusion = f;
  c.hidden = hidden;
  c.count = hidden * tokens;
  return c;
}
ArCallShape Plain(int world, int64_t count, int64_t hidden = 0,
                  sightline_ar_dtype d = SIGHTLINE_AR_BF16) {
  ArCallShape c;
  c.world = world;
  c.count = count;
  c.hidden = hidden;
  c.dtype = d;
  return c;
}

// Cells of the committed table (src/shared/allreduce_lut.h: world 2 from the H200 sweeps of
// session 19, world 4 from session 20's, world 8 from H200 run C).
TEST(AllreduceSelect, CommittedTableCells) {
  EXPECT_EQ(TableStrategy(Plain(2, 128, 128)), kLamport);          // hidden 128 x 1 token
  EXPECT_EQ(TableStrategy(Plain(2, 8192LL * 256, 8192)), kOne);    // 4 MB
  EXPECT_EQ(TableStrategy(Plain(2, 8192LL * 16384, 8192)), kTwo);  // 256 MB
  EXPECT_EQ(TableStrategy(Plain(4, 4096LL * 16384, 4096)), kTwo);  // world 4, 128 MB
  EXPECT_EQ(TableStrategy(Plain(4, 128, 128)), kLamport);          // world 4, 256 bytes
  EXPECT_EQ(TableStrategy(Plain(8, 8192LL * 32, 8192)), kNccl);    // world 8: hidden 8192 x 32
  EXPECT_EQ(TableStrategy(Fused(2, 4096, 4096)), kTwo);            // fused, world 2
  EXPECT_EQ(TableStrategy(Fused(2, 4096, 1024)), kOne);
  EXPECT_EQ(TableStrategy(Fused(8, 8192, 128)), kNccl);
}

// Inside the grid the library's lookup is the generated SelectStrategy: every cell of every table,
// and the points between neighbouring grid values.
TEST(AllreduceSelect, AgreesWithTheGeneratedSelectStrategy) {
  int cells = 0;
  for (const lut_detail::Table& t : lut_detail::kTables) {
    const auto fusion = static_cast<sightline_ar_fusion>(static_cast<int>(t.fusion));
    for (int h = 0; h < t.num_hidden; ++h) {
      for (int k = 0; k < t.num_tokens; ++k) {
        for (int tokens : {t.tokens[k], k + 1 < t.num_tokens ? (t.tokens[k] + t.tokens[k + 1]) / 2
                                                             : t.tokens[k]}) {
          ArCallShape c;
          c.world = t.world_size;
          c.fusion = fusion;
          c.hidden = t.hidden[h];
          c.count = static_cast<int64_t>(t.hidden[h]) * tokens;
          const Strategy want = SelectStrategy(t.world_size, t.fusion, t.hidden[h], tokens);
          ASSERT_EQ(static_cast<int>(TableStrategy(c)), static_cast<int>(want))
              << "world " << t.world_size << " fusion " << FusionLabel(fusion) << " hidden "
              << t.hidden[h] << " tokens " << tokens;
          ++cells;
        }
      }
    }
  }
  EXPECT_GT(cells, 0);
}

TEST(AllreduceSelect, KeyClampsIntoTheGridAndTakesNearestCells) {
  ArTableKey k = TableKeyFor(Fused(2, 64, 100000));
  EXPECT_TRUE(k.found);
  EXPECT_EQ(k.hidden, 128);
  EXPECT_EQ(k.tokens, 16384);
  // Between grid values the nearest in log2 decides: 3000 tokens is nearer 4096 than 2048.
  EXPECT_EQ(TableStrategy(Fused(2, 4096, 3000)), TableStrategy(Fused(2, 4096, 4096)));
  EXPECT_EQ(TableStrategy(Fused(2, 4096, 1400)), TableStrategy(Fused(2, 4096, 1024)));
}

TEST(AllreduceSelect, UnfusedCallsWithoutHiddenAreRowsOf4096) {
  ArTableKey k = TableKeyFor(Plain(2, 4096 * 64));
  EXPECT_EQ(k.hidden, 4096);
  EXPECT_EQ(k.tokens, 64);
  k = TableKeyFor(Plain(2, 1000));  // shorter than a row: one row (clamped to the grid's 128..)
  EXPECT_EQ(k.tokens, 1);
  EXPECT_EQ(k.hidden, 1000);
  k = TableKeyFor(Plain(2, 4096 * 64, /*hidden=*/1000));  // does not divide: ignored
  EXPECT_EQ(k.hidden, 4096);
  k = TableKeyFor(Plain(2, 2048 * 64, /*hidden=*/2048));
  EXPECT_EQ(k.hidden, 2048);
  EXPECT_EQ(k.tokens, 64);
}

TEST(AllreduceSelect, Fp32CountsBf16SizedElements) {
  // The table was measured in bf16: an fp32 row of n elements is looked up as a row of 2n.
  const ArTableKey k = TableKeyFor(Plain(2, 4096 * 64, 4096, SIGHTLINE_AR_FP32));
  EXPECT_EQ(k.hidden, 8192);
  EXPECT_EQ(k.tokens, 64);
  const ArTableKey k2 = TableKeyFor(Plain(2, 4096 * 64, 0, SIGHTLINE_AR_FP32));
  EXPECT_EQ(k2.hidden, 4096);
  EXPECT_EQ(k2.tokens, 128);
  ArCallShape f = Fused(2, 2048, 16);
  f.dtype = SIGHTLINE_AR_FP32;
  const ArTableKey kf = TableKeyFor(f);
  EXPECT_EQ(kf.hidden, 4096);
  EXPECT_EQ(kf.tokens, 16);
}

TEST(AllreduceSelect, WorldsAndFusionsWithoutTheirOwnTable) {
  EXPECT_EQ(TableKeyFor(Plain(3, 4096)).world, 4);  // the next larger measured world
  EXPECT_EQ(TableKeyFor(Plain(6, 4096)).world, 8);
  EXPECT_EQ(TableKeyFor(Plain(16, 4096)).world, 8);  // the largest
  // The quantizing fusions run the residual_rmsnorm row kernels: that table, unless their own.
  const ArTableKey q = TableKeyFor(Fused(2, 4096, 64, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4));
  EXPECT_TRUE(q.found);
  EXPECT_TRUE(q.fusion == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM ||
              q.fusion == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4);
  EXPECT_EQ(TableStrategy(Fused(2, 4096, 2048, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8)),
            TableStrategy(Fused(2, 4096, 2048,
                                q.fusion == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM
                                    ? SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM
                                    : SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8)));
  // World 4 was swept with the quantizing fusions (session 20), world 8 was not: a world-8 call
  // takes world 8's residual_rmsnorm table, not a smaller world's quantizing one.
  EXPECT_EQ(TableKeyFor(Fused(4, 4096, 64, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4)).fusion,
            static_cast<int>(SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4));
  const ArTableKey w8 = TableKeyFor(Fused(8, 4096, 64, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4));
  EXPECT_EQ(w8.world, 8);
  EXPECT_EQ(w8.fusion, static_cast<int>(SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM));
  EXPECT_EQ(TableKeyFor(Fused(3, 4096, 64, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8)).world, 4);
}

// The library's sizes are size_t: a count near 2^64 (a negative int64 passed through, or a
// miscomputed size) must be refused before it becomes a negative element count on its way to the
// kernels, and tokens x hidden must not wrap.
TEST(AllreduceSelect, CallSizesBeyondAnyGpuAreRefused) {
  EXPECT_EQ(PlainCallSizeError(1, 0), "");
  EXPECT_EQ(PlainCallSizeError(kMaxCallElements, kMaxHiddenSize), "");
  EXPECT_NE(PlainCallSizeError(0, 4096).find("count is 0"), std::string::npos);
  EXPECT_NE(PlainCallSizeError(kMaxCallElements + 1, 0).find("beyond 2^48"), std::string::npos);
  EXPECT_NE(PlainCallSizeError(~uint64_t{0}, 0).find("18446744073709551615"), std::string::npos);
  EXPECT_NE(PlainCallSizeError(4096, kMaxHiddenSize + 1).find("hidden_size"), std::string::npos);

  EXPECT_EQ(FusedCallSizeError(16384, 8192), "");
  EXPECT_EQ(FusedCallSizeError(kMaxCallElements / kMaxHiddenSize, kMaxHiddenSize), "");
  EXPECT_NE(FusedCallSizeError(0, 4096).find("must not be 0"), std::string::npos);
  EXPECT_NE(FusedCallSizeError(1, 0).find("must not be 0"), std::string::npos);
  EXPECT_NE(FusedCallSizeError(kMaxCallElements / kMaxHiddenSize + 1, kMaxHiddenSize)
                .find("tokens x hidden_size"),
            std::string::npos);
  // 2^33 x 2^31 is 2^64: it would wrap to 0 in 64 bits.
  EXPECT_NE(FusedCallSizeError(uint64_t{1} << 33, uint64_t{1} << 31).find("beyond 2^48"),
            std::string::npos);
  EXPECT_NE(FusedCallSizeError(8, kMaxHiddenSize + 1).find("hidden_size"), std::string::npos);
}

TEST(AllreduceSelect, ParsesTheOverride) {
  sightline_ar_strategy s = kNccl;
  std::string error;
  EXPECT_TRUE(ParseStrategyOverride(nullptr, &s, &error));
  EXPECT_EQ(s, kAuto);
  EXPECT_TRUE(ParseStrategyOverride("", &s, &error));
  EXPECT_EQ(s, kAuto);
  EXPECT_TRUE(ParseStrategyOverride("auto", &s, &error));
  EXPECT_EQ(s, kAuto);
  EXPECT_TRUE(ParseStrategyOverride("NCCL", &s, &error));
  EXPECT_EQ(s, kNccl);
  EXPECT_TRUE(ParseStrategyOverride("OneShot", &s, &error));
  EXPECT_EQ(s, kOne);
  EXPECT_TRUE(ParseStrategyOverride("twoshot", &s, &error));
  EXPECT_EQ(s, kTwo);
  EXPECT_TRUE(ParseStrategyOverride("LAMPORT", &s, &error));
  EXPECT_EQ(s, kLamport);
  EXPECT_TRUE(error.empty());
  for (const char* bad : {"one-shot", "bogus", " nccl", "2"}) {
    error.clear();
    EXPECT_FALSE(ParseStrategyOverride(bad, &s, &error)) << bad;
    EXPECT_NE(error.find(std::string("SIGHTLINE_ALLREDUCE_STRATEGY=") + bad), std::string::npos);
    EXPECT_NE(error.find("auto, nccl, oneshot, twoshot, lamport"), std::string::npos);
  }
  EXPECT_STREQ(StrategyLabel(kTwo), "twoshot");
  EXPECT_STREQ(FusionLabel(SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8_PER_TOKEN),
               "residual_rmsnorm_fp8_per_token");
}

// fits(): everything fits except the strategies listed in `no`.
ArFits AllBut(std::initializer_list<sightline_ar_strategy> no) {
  std::vector<sightline_ar_strategy> v(no);
  return [v](sightline_ar_strategy s) -> std::string {
    for (sightline_ar_strategy x : v)
      if (x == s) return std::string(StrategyLabel(s)) + " is out";
    return "";
  };
}

TEST(AllreduceSelect, ArgumentThenEnvironmentThenTable) {
  const ArCallShape small = Plain(2, 8192LL * 256, 8192);  // 4 MB: the table says one-shot
  ArChoice c;
  std::string error;
  ASSERT_TRUE(ChooseStrategy(small, kAuto, kAuto, AllBut({}), &c, &error));
  EXPECT_EQ(c.strategy, kOne);
  EXPECT_STREQ(c.source, "table");
  EXPECT_EQ(c.fallback, "");
  ASSERT_TRUE(ChooseStrategy(small, kAuto, kNccl, AllBut({}), &c, &error));
  EXPECT_EQ(c.strategy, kNccl);
  EXPECT_STREQ(c.source, "environment");
  ASSERT_TRUE(ChooseStrategy(small, kTwo, kNccl, AllBut({}), &c, &error));
  EXPECT_EQ(c.strategy, kTwo);
  EXPECT_STREQ(c.source, "argument");
}

TEST(AllreduceSelect, FallsBackTowardsNcclButNotForAnExplicitArgument) {
  const ArCallShape small = Plain(2, 4096);  // 8 KB: the table says Lamport
  ArChoice c;
  std::string error;
  // The override asks for Lamport, which is off: one-shot runs, and the choice says why.
  ASSERT_TRUE(ChooseStrategy(small, kAuto, kLamport, AllBut({kLamport}), &c, &error));
  EXPECT_EQ(c.strategy, kOne);
  EXPECT_EQ(c.fallback, "lamport: lamport is out");
  // The table's Lamport is off and the workspace too small: one-shot and two-shot are out as
  // well, NCCL runs.
  ASSERT_TRUE(ChooseStrategy(small, kAuto, kAuto, AllBut({kLamport, kOne, kTwo}), &c, &error));
  EXPECT_EQ(c.strategy, kNccl);
  EXPECT_EQ(c.fallback, "lamport: lamport is out");
  // An explicit strategy is never replaced.
  EXPECT_FALSE(ChooseStrategy(small, kLamport, kAuto, AllBut({kLamport}), &c, &error));
  EXPECT_EQ(error, "lamport cannot take this call: lamport is out");
  // Nothing fits (a fused row longer than the kernels take).
  error.clear();
  EXPECT_FALSE(
      ChooseStrategy(small, kAuto, kAuto, AllBut({kLamport, kOne, kTwo, kNccl}), &c, &error));
  EXPECT_EQ(error, "no strategy can take this call: lamport is out");
}

}  // namespace
}  // namespace sightline::allreduce
