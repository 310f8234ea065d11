// See options.h.
#include "options.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "shared/ar_names.h"

namespace sightline::allreduce {

static_assert(static_cast<int>(Strategy::kLamport) == 3 &&
                  static_cast<int>(Fusion::kResidualRmsNormNvfp4) == 4,
              "the codes index allreduce_names' tables");
// The names are literals, so their data are NUL-terminated C strings.
const char* StrategyName(Strategy s) {
  return allreduce_names::NameAt(allreduce_names::kStrategies, static_cast<int>(s)).data();
}
const char* FusionName(Fusion f) {
  return allreduce_names::NameAt(allreduce_names::kFusions, static_cast<int>(f)).data();
}
const char* ModeName(Mode m) { return m == Mode::kEager ? "eager" : "graph"; }
const char* PeerOrderName(PeerOrder o) {
  return o == PeerOrder::kSpread ? "spread" : o == PeerOrder::kRank ? "rank" : "fixed";
}

namespace {

// "1K", "256M", "4096", "1G" -> bytes; -1 on error.
int64_t ParseSize(const std::string& s) {
  if (s.empty()) return -1;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || v < 0) return -1;
  std::string suffix(end);
  int64_t mult = 1;
  if (suffix == "K" || suffix == "k")
    mult = 1ll << 10;
  else if (suffix == "M" || suffix == "m")
    mult = 1ll << 20;
  else if (suffix == "G" || suffix == "g")
    mult = 1ll << 30;
  else if (!suffix.empty())
    return -1;
  return v * mult;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

bool IsPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// "128:8192" -> [128, 8192], or one value.
bool ParseRange(const std::string& s, int64_t* lo, int64_t* hi) {
  const size_t colon = s.find(':');
  *lo = ParseSize(s.substr(0, colon));
  *hi = colon == std::string::npos ? *lo : ParseSize(s.substr(colon + 1));
  return IsPow2(*lo) && IsPow2(*hi) && *lo <= *hi;
}

}  // namespace

std::string UsageText() {
  return R"(sightline-allreduce-bench: custom one-shot / two-shot all-reduce (optionally fused with
residual add + RMSNorm) against NCCL, one process per GPU, all GPUs on one host.

Usage: mpirun -n N sightline-allreduce-bench [options]      (or srun, or any PMI launcher)

Sweeps (each configuration is verified before it is timed; a wrong result is an error):
  -b SIZE, -e SIZE, -f N   size sweep from -b to -e bytes, times N (default 1K 256M 2)
  --grid                   2-D sweep: hidden size x tokens, powers of two, bf16 by default
  --hidden LO:HI           hidden sizes of the 2-D sweep (default 128:8192)
  --tokens LO:HI           token counts of the 2-D sweep (default 1:16384)
  --shapes TxH,...         2-D sweep over these cells only (tokens x hidden, e.g.
                           1x4096,16x4096,128x8192); implies --grid
  --dtype LIST             bf16,fp16,fp32 (default bf16)
  --strategy LIST          nccl,oneshot,twoshot,lamport (default all four; lamport: the
                           barrier-free one-shot for small unfused messages, <= --lamport-max)
  --fusion LIST            none,residual_rmsnorm,residual_rmsnorm_fp8,
                           residual_rmsnorm_fp8_per_token,residual_rmsnorm_nvfp4 (default none;
                           the 2-D sweep: none,residual_rmsnorm). The last three also quantize
                           the normalized row: FP8 E4M3 with a per-tensor scale, FP8 with
                           per-token scales, NVFP4 (E2M1, E4M3 scale per 16, swizzled 128x4)
  --mode LIST              eager,graph (default both)
Timing (CUDA events; time_us is the median over samples of a sample's time per call):
  --iters N                timed calls per configuration, at most (default 200)
  --warmup N               untimed calls first (default 10)
  --batch N                calls per sample / per graph launch (default 10)
  --budget-ms MS           stop sampling a configuration after about MS ms (default 40)
Kernels and safety:
  --max-blocks N           grid cap of the custom kernels (default 128, at most 256)
  --one-shot-max SIZE      skip one-shot above SIZE bytes (default 256M)
  --lamport-max SIZE       skip lamport above SIZE bytes; its buffers take 3 x world x SIZE
                           per GPU (default 1M)
  --timeout S              a peer that does not arrive within S s is an error (default 20)
  --check-only             verify every configuration, time nothing
  --quant-check-rows N     rows of each quantized output compared bit for bit with the CPU
                           reference when timing (default 256, spread evenly; 0: all;
                           --check-only: all)
  --peer-bw                first measure the peer copy bandwidth (rank 0 reads, then writes
                           rank 1's memory; one large cudaMemcpy each way)
  --pull                   custom kernels read peers' buffers (default: they write into them)
  --peer-order ORDER       order in which two-shot blocks visit the peers: spread (default:
                           rank r's block b starts with peer r+1+b), rank (rank r starts with
                           r+1) or fixed (0, 1, ... on every rank); sums stay in rank order
  --pipeline N             push two-shot: 16-byte vectors per thread in one pipelined chunk
                           (default 4; 0: one chunk, i.e. send, barrier, reduce, barrier, gather)
Output:
  -o FILE                  CSV on rank 0 (default stdout): world_size,dtype,size_bytes,
                           num_tokens,hidden_size,strategy,fusion,mode,time_us,algbw_gbps,busbw_gbps
                           (num_tokens = hidden_size = 0 in the size sweep)
Launch:
  --job-id ID              rendezvous name (default: from the launcher's environment)
  --single                 allow running without a launcher, as world size 1
  -h, --help               this text
algbw = size_bytes / time; busbw = algbw * 2 (n-1) / n, as nccl-tests defines them.
)";
}

std::string ParseOptions(int argc, char** argv, Options* o) {
  bool fusion_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* v) -> bool {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    auto bad = [&](const std::string& what) {
      return "bad value '" + v + "' for " + a + ": " + what + " (see --help)";
    };
    if (a == "-h" || a == "--help") {
      o->help = true;
    } else if (a == "--single") {
      o->single = true;
    } else if (a == "--grid") {
      o->grid = true;
    } else if (a == "--check-only") {
      o->check_only = true;
    } else if (a == "--peer-bw") {
      o->peer_bw = true;
    } else if (a == "--pull") {
      o->pull = true;
    } else if (a == "--peer-order") {
      if (!value(&v)) return "missing value after " + a;
      if (v == "spread")
        o->peer_order = PeerOrder::kSpread;
      else if (v == "rank")
        o->peer_order = PeerOrder::kRank;
      else if (v == "fixed")
        o->peer_order = PeerOrder::kFixed;
      else
        return bad("orders are spread, rank, fixed");
    } else if (a == "-b" || a == "-e" || a == "--one-shot-max" || a == "--lamport-max") {
      if (!value(&v)) return "missing value after " + a;
      const int64_t s = ParseSize(v);
      if (s <= 0) return bad("expected a size like 1K, 256M or 4096");
      if (a == "--lamport-max" && s > (256ll << 20)) return bad("at most 256M");
      (a == "-b"              ? o->min_bytes
       : a == "-e"            ? o->max_bytes
       : a == "--lamport-max" ? o->lamport_max_bytes
                              : o->one_shot_max_bytes) = s;
    } else if (a == "--quant-check-rows") {
      if (!value(&v)) return "missing value after " + a;
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0 || n > (1ll << 31)) return bad("expected a count");
      o->quant_check_rows = n;
    } else if (a == "--pipeline") {
      if (!value(&v)) return "missing value after " + a;
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0 || n > 1 << 20) return bad("expected a count");
      o->pipeline_iters = static_cast<int>(n);
    } else if (a == "-f" || a == "--iters" || a == "--warmup" || a == "--batch" ||
               a == "--max-blocks") {
      if (!value(&v)) return "missing value after " + a;
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < (a == "--warmup" ? 0 : 1) || n > 1000000)
        return bad("expected a count");
      if (a == "-f") {
        if (n < 2) return bad("the factor must be at least 2");
        o->factor = static_cast<int>(n);
      } else if (a == "--iters") {
        o->iters = static_cast<int>(n);
      } else if (a == "--warmup") {
        o->warmup = static_cast<int>(n);
      } else if (a == "--batch") {
        o->batch = static_cast<int>(n);
      } else {
        if (n > kMaxBlocks) return bad("at most " + std::to_string(kMaxBlocks));
        o->max_blocks = static_cast<int>(n);
      }
    } else if (a == "--budget-ms" || a == "--timeout") {
      if (!value(&v)) return "missing value after " + a;
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (*end != '\0' || !(d > 0) || d > 1e6) return bad("expected a positive number");
      (a == "--timeout" ? o->timeout_s : o->budget_ms) = d;
    } else if (a == "--hidden" || a == "--tokens") {
      if (!value(&v)) return "missing value after " + a;
      int64_t lo, hi;
      if (!ParseRange(v, &lo, &hi)) return bad("expected LO:HI, powers of two, LO <= HI");
      if (a == "--hidden") {
        o->hidden_min = lo, o->hidden_max = hi;
      } else {
        o->tokens_min = lo, o->tokens_max = hi;
      }
    } else if (a == "--shapes") {
      if (!value(&v)) return "missing value after " + a;
      o->shapes.clear();
      for (const std::string& cell : Split(v)) {
        const size_t x = cell.find('x');
        char* end = nullptr;
        const long long t = std::strtoll(cell.c_str(), &end, 10);
        const char* h_text = x == std::string::npos ? "" : cell.c_str() + x + 1;
        char* h_end = nullptr;
        const long long h = std::strtoll(h_text, &h_end, 10);
        if (x == std::string::npos || end != cell.c_str() + x || *h_end != '\0' || t < 1 || h < 1 ||
            t > (1ll << 24) || h > (1ll << 20) || h_end == h_text) {
          return bad("expected cells TOKENSxHIDDEN, e.g. 1x4096,16x4096");
        }
        o->shapes.push_back({t, h});
      }
      if (o->shapes.empty()) return bad("expected cells TOKENSxHIDDEN, e.g. 1x4096,16x4096");
      o->grid = true;
    } else if (a == "--dtype") {
      if (!value(&v)) return "missing value after " + a;
      o->dtypes.clear();
      for (const std::string& s : Split(v)) {
        if (s == "bf16")
          o->dtypes.push_back(Dtype::kBf16);
        else if (s == "fp16")
          o->dtypes.push_back(Dtype::kFp16);
        else if (s == "fp32")
          o->dtypes.push_back(Dtype::kFp32);
        else
          return bad("dtypes are bf16, fp16, fp32");
      }
    } else if (a == "--strategy") {
      if (!value(&v)) return "missing value after " + a;
      o->strategies.clear();
      for (const std::string& s : Split(v)) {
        const int code = allreduce_names::IndexOf(allreduce_names::kStrategies, s);
        if (code < 0)
          return bad("strategies are " +
                     allreduce_names::Listed(allreduce_names::kStrategies, ", "));
        o->strategies.push_back(static_cast<Strategy>(code));
      }
    } else if (a == "--fusion") {
      if (!value(&v)) return "missing value after " + a;
      o->fusions.clear();
      fusion_given = true;
      for (const std::string& s : Split(v)) {
        const int code = allreduce_names::IndexOf(allreduce_names::kFusions, s);
        if (code < 0)
          return bad("fusions are " + allreduce_names::Listed(allreduce_names::kFusions, ", "));
        o->fusions.push_back(static_cast<Fusion>(code));
      }
    } else if (a == "--mode") {
      if (!value(&v)) return "missing value after " + a;
      o->modes.clear();
      for (const std::string& s : Split(v)) {
        if (s == "eager")
          o->modes.push_back(Mode::kEager);
        else if (s == "graph")
          o->modes.push_back(Mode::kGraph);
        else
          return bad("modes are eager, graph");
      }
    } else if (a == "-o" || a == "--job-id") {
      if (!value(&v) || v.empty()) return "missing value after " + a;
      (a == "-o" ? o->output : o->job_id) = v;
    } else {
      return "unknown argument '" + a + "' (see --help)";
    }
  }
  if (o->min_bytes > o->max_bytes) return "-b is larger than -e";
  if (o->strategies.empty() || o->modes.empty() || o->dtypes.empty())
    return "empty --strategy, --mode or --dtype list";
  if (!fusion_given) {
    o->fusions = {Fusion::kNone};
    if (o->grid) o->fusions.push_back(Fusion::kResidualRmsNorm);
  }
  if (!o->grid) {
    for (Fusion f : o->fusions) {
      if (f != Fusion::kNone)
        return std::string("--fusion ") + FusionName(f) +
               " needs rows: use it with --grid (hidden x tokens)";
    }
  }
  return "";
}

std::vector<Config> MakeConfigs(const Options& o) {
  std::vector<Config> out;
  for (Dtype d : o.dtypes) {
    const int eb = DtypeBytes(d);
    std::vector<std::pair<int64_t, int64_t>> shapes;  // (tokens, hidden); (0, bytes) for sizes
    if (!o.shapes.empty()) {
      shapes = o.shapes;
    } else if (o.grid) {
      for (int64_t h = o.hidden_min; h <= o.hidden_max; h *= 2)
        for (int64_t t = o.tokens_min; t <= o.tokens_max; t *= 2) shapes.push_back({t, h});
    } else {
      for (int64_t b = o.min_bytes; b <= o.max_bytes; b *= o.factor) shapes.push_back({0, b});
    }
    for (auto [t, h] : shapes) {
      for (Fusion f : o.fusions) {
        for (Strategy s : o.strategies) {
          for (Mode m : o.modes) {
            Config c{d, t > 0 ? t * h : h / eb, t, t > 0 ? h : 0, s, f, m};
            if (t == 0 && h % eb != 0) continue;
            out.push_back(c);
          }
        }
      }
    }
  }
  return out;
}

int64_t MaxBytes(const std::vector<Config>& configs) {
  int64_t m = 16;
  for (const Config& c : configs) m = c.bytes() > m ? c.bytes() : m;
  return m;
}

}  // namespace sightline::allreduce
