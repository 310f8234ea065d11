// sightline-allreduce-bench's checks of every result (harness.h): exact sums, the quantizing
// fusions against the CPU reference, the same bits on every rank, and the custom kernels against
// NCCL.
#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "quant_check.h"

namespace sightline::allreduce {
namespace {

std::string MismatchMessage(const Config& c, const char* when, int rank, int k,
                            const CheckResult& x);

// The quantizing fusions (docs/allreduce.md, "Quantizing epilogues", how they are checked): the
// timed calls wrote values and scales into pair k. Each pair is then computed again by a check
// call that also writes the normalized row `out` (its buffers refilled first), and
// - the check call's values and scales must equal the timed calls' bit for bit (hashes);
// - residual_out must be exact and `out` within the tolerance of the formula (LaunchCheckFused);
// - the values and scales must equal, bit for bit, the CPU reference's quantization of that `out`
//   (all rows with --check-only, else --quant-check-rows of them; every swizzled pad byte);
// - every rank must hold the same bits.
void VerifyQuant(Run& r, const Config& c, uint32_t seed, const char* when) {
  const Quant q = QuantOf(c.fusion);
  const int64_t row_bytes = QuantRowBytes(q, c.hidden);
  const int64_t vbytes = c.tokens * row_bytes;
  const int64_t sbytes = QuantScaleBytes(q, c.tokens, c.hidden);
  CheckResult* timed = r.check;        // [k]: hash of the timed calls' values and scales
  CheckResult* checked = r.check + 2;  // [k]: the same for the check calls
  CheckResult* formula = r.check + 4;  // [k]: LaunchCheckFused of the check calls
  CHECK(cudaMemsetAsync(r.check, 0, kNumChecks * sizeof(CheckResult), r.stream));
  auto hash_outputs = [&](int k, CheckResult* into) {
    CHECK(LaunchHashBytes(r.qvals[k], vbytes, into, r.stream));
    if (sbytes > 0) CHECK(LaunchHashBytes(r.qscales[k], sbytes, into, r.stream));
  };
  for (int k = 0; k < 2; ++k) hash_outputs(k, timed + k);
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMemsetAsync(r.qvals[k], kQuantFill, vbytes, r.stream));
    if (sbytes > 0) CHECK(cudaMemsetAsync(r.qscales[k], kQuantFill, sbytes, r.stream));
    CHECK(cudaMemsetAsync(r.out[k], 0xff, c.bytes(), r.stream));
    CHECK(cudaMemsetAsync(r.resout[k], 0xff, c.bytes(), r.stream));
  }
  for (int k = 0; k < 2; ++k) Enqueue(r, c, k, /*norm_out=*/true);
  for (int k = 0; k < 2; ++k) {
    hash_outputs(k, checked + k);
    CHECK(LaunchCheckFused(c.dtype, FusedFor(r, c, k, true), /*wide_gamma=*/true, r.world, seed + k,
                           formula + k, r.stream));
  }
  CheckResult res[kNumChecks];
  CHECK(cudaMemcpyAsync(res, r.check, sizeof(res), cudaMemcpyDeviceToHost, r.stream));
  // The rows the CPU compares, copied while the checks run.
  const std::vector<int64_t> rows =
      QuantCheckRows(c.tokens, r.opt.check_only ? 0 : r.opt.quant_check_rows);
  const int64_t eb = DtypeBytes(c.dtype);
  const int64_t norm_row = c.hidden * eb;
  QuantRowsOnHost host[2];
  for (int k = 0; k < 2; ++k) {
    QuantRowsOnHost& h = host[k];
    h.rows = rows;
    h.norm.resize(rows.size() * norm_row);
    h.values.resize(rows.size() * row_bytes);
    h.scales.resize(sbytes);
    h.scale_fill = static_cast<uint8_t>(kQuantFill);
    const char* norm = static_cast<const char*>(r.out[k]);
    const char* vals = static_cast<const char*>(r.qvals[k]);
    if (static_cast<int64_t>(rows.size()) == c.tokens) {
      CHECK(cudaMemcpyAsync(h.norm.data(), norm, h.norm.size(), cudaMemcpyDeviceToHost, r.stream));
      CHECK(cudaMemcpyAsync(h.values.data(), vals, h.values.size(), cudaMemcpyDeviceToHost,
                            r.stream));
    } else {
      for (size_t i = 0; i < rows.size(); ++i) {
        CHECK(cudaMemcpyAsync(h.norm.data() + i * norm_row, norm + rows[i] * norm_row, norm_row,
                              cudaMemcpyDeviceToHost, r.stream));
        CHECK(cudaMemcpyAsync(h.values.data() + i * row_bytes, vals + rows[i] * row_bytes,
                              row_bytes, cudaMemcpyDeviceToHost, r.stream));
      }
    }
    if (sbytes > 0) {
      CHECK(
          cudaMemcpyAsync(h.scales.data(), r.qscales[k], sbytes, cudaMemcpyDeviceToHost, r.stream));
    }
  }
  Sync(r, "verify");
  // This rank's findings first; then every rank learns whether any rank failed, so that all stop.
  const float scale_in = q == Quant::kNvfp4 ? kNvfp4GlobalScale : kFp8TensorScale;
  std::string error;
  for (int k = 0; k < 2 && error.empty(); ++k) {
    if (res[4 + k].mismatches != 0) {
      error = MismatchMessage(c, when, r.rank, k, res[4 + k]);
    } else if (res[k].hash != res[2 + k].hash) {
      error = "quantized output " + std::to_string(k) + " of the timed calls differs from the " +
              "check call's " + std::string(when) + " for " + Describe(c) + " (rank " +
              std::to_string(r.rank) + ")";
    } else {
      const std::string diff = CompareQuantRows(c.dtype, q, c.tokens, c.hidden, scale_in, host[k]);
      if (!diff.empty()) {
        error = "quantized output " + std::to_string(k) + " differs from the CPU reference " +
                std::string(when) + " for " + Describe(c) + ": rank " + std::to_string(r.rank) +
                ", " + diff;
      }
    }
  }
  struct Verdict {
    CheckResult res[kNumChecks];
    int32_t failed;
  } mine{};
  std::memcpy(mine.res, res, sizeof(res));
  mine.failed = error.empty() ? 0 : 1;
  std::vector<char> all;
  AllGather(r, &mine, sizeof(mine), &all);
  const Verdict* vs = reinterpret_cast<const Verdict*>(all.data());
  if (!error.empty()) Fatal(error);
  for (int p = 0; p < r.world; ++p) {
    if (vs[p].failed) {
      Fatal("rank " + std::to_string(p) + " found a wrong result " + std::string(when) + " for " +
            Describe(c) + " (its message says which)");
    }
    for (int i = 2; i < kNumChecks; ++i) {
      if (vs[p].res[i].hash != vs[0].res[i].hash) {
        Fatal("ranks disagree " + std::string(when) + " for " + Describe(c) + ": rank " +
              std::to_string(p) + "'s " + (i < 4 ? "quantized output " : "output ") +
              std::to_string(i % 2) + " differs in its bits from rank 0's");
      }
    }
  }
}

std::string MismatchMessage(const Config& c, const char* when, int rank, int k,
                            const CheckResult& x) {
  return "wrong result " + std::string(when) + " for " + Describe(c) + ": rank " +
         std::to_string(rank) + " output " + std::to_string(k) + " has " +
         std::to_string(x.mismatches) + " bad elements, e.g. element " +
         std::to_string(x.first_bad) + " = " + std::to_string(x.got) + ", expected " +
         std::to_string(x.want);
}

}  // namespace

// Checks out[0] (seed) and out[1] (seed + 1) on every rank and compares the ranks' output hashes.
void Verify(Run& r, const Config& c, uint32_t seed, const char* when) {
  if (QuantOf(c.fusion) != Quant::kNone) {
    VerifyQuant(r, c, seed, when);
    return;
  }
  CHECK(cudaMemsetAsync(r.check, 0, 2 * sizeof(CheckResult), r.stream));
  for (int k = 0; k < 2; ++k) {
    if (c.fusion == Fusion::kResidualRmsNorm) {
      CHECK(LaunchCheckFused(c.dtype, FusedFor(r, c, k), /*wide_gamma=*/false, r.world, seed + k,
                             r.check + k, r.stream));
    } else {
      CHECK(LaunchCheckSum(c.dtype, r.out[k], c.count, r.world, seed + k, r.check + k, r.stream));
    }
  }
  CheckResult res[2];
  CHECK(cudaMemcpyAsync(res, r.check, sizeof(res), cudaMemcpyDeviceToHost, r.stream));
  Sync(r, "verify");
  std::vector<char> all;
  AllGather(r, res, sizeof(res), &all);
  const CheckResult* rs = reinterpret_cast<const CheckResult*>(all.data());
  for (int p = 0; p < r.world; ++p) {
    for (int k = 0; k < 2; ++k) {
      const CheckResult& x = rs[p * 2 + k];
      if (x.mismatches != 0) Fatal(MismatchMessage(c, when, p, k, x));
      if (x.hash != rs[k].hash) {
        Fatal("ranks disagree " + std::string(when) + " for " + Describe(c) + ": rank " +
              std::to_string(p) + "'s output " + std::to_string(k) +
              " differs in its bits from rank 0's");
      }
    }
  }
}

// The custom kernels against NCCL on the same input: ncclAllReduce of in[0] must give the same
// bits as out[0] (which Verify has just checked) on every rank. Inputs are small integers, so the
// sums are exact whatever the order of summation.
void CompareWithNccl(Run& r, const Config& c, uint32_t seed) {
  CHECK(cudaMemsetAsync(r.check, 0, 2 * sizeof(CheckResult), r.stream));
  CHECK(cudaMemsetAsync(r.sum, 0xff, c.bytes(), r.stream));
  CHECK(ncclAllReduce(r.in[0], r.sum, c.count, NcclType(c.dtype), ncclSum, r.nccl, r.stream));
  CHECK(LaunchCheckSum(c.dtype, r.out[0], c.count, r.world, seed, r.check, r.stream));
  CHECK(LaunchCheckSum(c.dtype, r.sum, c.count, r.world, seed, r.check + 1, r.stream));
  CheckResult res[2];
  CHECK(cudaMemcpyAsync(res, r.check, sizeof(res), cudaMemcpyDeviceToHost, r.stream));
  Sync(r, "compare with NCCL");
  if (res[1].mismatches != 0) {
    Fatal("NCCL's result for " + Describe(c) + " has " + std::to_string(res[1].mismatches) +
          " bad elements, e.g. element " + std::to_string(res[1].first_bad) + " = " +
          std::to_string(res[1].got) + ", expected " + std::to_string(res[1].want));
  }
  if (res[0].hash != res[1].hash)
    Fatal("output of " + Describe(c) + " differs in its bits from ncclAllReduce's");
}

}  // namespace sightline::allreduce
