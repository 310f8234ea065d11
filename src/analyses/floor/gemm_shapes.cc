#include "analyses/floor/gemm_shapes.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace sightline {
namespace {

double Product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) p *= static_cast<double>(dims[i]);
  return p;
}

double Elements(const std::vector<int64_t>& dims) { return Product(dims, 0, dims.size()); }

// Operand i's dims, or null when it is missing or not a tensor.
const std::vector<int64_t>* Operand(const OpShapes& s, size_t i) {
  return i < s.dims.size() && s.known[i] ? &s.dims[i] : nullptr;
}

int64_t TypeBytes(const OpShapes& s, size_t i) {
  return i < s.types.size() ? ElementBytes(s.types[i]) : 0;
}

// A weight [N, K] (linear) or [K, N] (mm, addmm, matmul) and its element size.
bool AddWeight(const OpShapes& s, size_t i, StepCost& cost, int64_t* element_bytes) {
  const int64_t b = TypeBytes(s, i);
  if (b <= 0) return false;
  cost.weight_bytes += Elements(s.dims[i]) * static_cast<double>(b);
  *element_bytes = b;
  return true;
}

// A 1-D bias operand, where there is one (a parameter: no token dimension).
void AddBias(const OpShapes& s, size_t i, StepCost& cost) {
  const std::vector<int64_t>* bias = Operand(s, i);
  if (bias != nullptr && bias->size() == 1) {
    cost.weight_bytes += Elements(*bias) * static_cast<double>(TypeBytes(s, i));
  }
}

// a @ b with a [..., M, K] (or [K]) and b [K, N] (2-D, a weight) or [..., K, N] (batched).
bool AddMatmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool weight_ok,
               const OpShapes& s, size_t b_index, StepCost& cost, int64_t* element_bytes) {
  if (a.empty() || b.empty()) return false;
  const double k = static_cast<double>(a.back());
  const double rows = Product(a, 0, a.size() - 1);  // every leading dim of a: tokens (and batch)
  if (b.size() <= 2) {
    if (b.front() != a.back()) return false;
    const double n = b.size() == 2 ? static_cast<double>(b[1]) : 1;
    cost.gemm_flops += 2 * rows * n * k;
    return !weight_ok || b.size() != 2 || AddWeight(s, b_index, cost, element_bytes);
  }
  // Batched: b's leading dims broadcast against a's.
  if (a.size() < 2 || b[b.size() - 2] != a.back()) return false;
  const size_t la = a.size() - 2, lb = b.size() - 2, lead = std::max(la, lb);
  double batch = 1;
  for (size_t i = 0; i < lead; ++i) {  // aligned from the right, as broadcasting does
    const int64_t da = i >= lead - la ? a[i - (lead - la)] : 1;
    const int64_t db = i >= lead - lb ? b[i - (lead - lb)] : 1;
    batch *= static_cast<double>(std::max(da, db));
  }
  const double m = static_cast<double>(a[a.size() - 2]);
  cost.gemm_flops += 2 * batch * m * static_cast<double>(b.back()) * k;
  return true;
}

// q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev]: the scores and the weighted sum over the
// causal pairs (each of the L queries, the last of S positions, sees the keys up to itself: a
// lower bound for attention that is not causal), and the keys and values read.
bool AddAttention(const OpShapes& s, StepCost& cost) {
  const std::vector<int64_t>*q = Operand(s, 0), *k = Operand(s, 1), *v = Operand(s, 2);
  if (q == nullptr || k == nullptr || v == nullptr || q->size() < 3 || k->size() != q->size() ||
      v->size() != q->size()) {
    return false;
  }
  const double l = static_cast<double>((*q)[q->size() - 2]);
  const double sk = static_cast<double>((*k)[k->size() - 2]);
  const double e = static_cast<double>(q->back()), ev = static_cast<double>(v->back());
  const double heads = Product(*q, 0, q->size() - 2);  // batch x query heads
  const double pairs = l <= sk ? l * (sk - l) + l * (l + 1) / 2 : l * sk;
  cost.attention_flops += 2 * heads * pairs * (e + ev);
  const int64_t kb = TypeBytes(s, 1), vb = TypeBytes(s, 2);
  if (kb <= 0 || vb <= 0) return false;
  cost.kv_read_bytes +=
      Elements(*k) * static_cast<double>(kb) + Elements(*v) * static_cast<double>(vb);
  return true;
}

}  // namespace

bool ParseOpShapes(std::string_view compact, OpShapes& out) {
  out.dims.clear();
  out.known.clear();
  out.types.clear();
  const size_t bar = compact.find('|');
  if (bar == std::string_view::npos) return false;
  const std::string_view dims = compact.substr(0, bar), types = compact.substr(bar + 1);
  if (!dims.empty()) {
    size_t at = 0;
    while (true) {
      const size_t comma = std::min(dims.find(',', at), dims.size());
      const std::string_view operand = dims.substr(at, comma - at);
      out.dims.emplace_back();
      out.known.push_back(operand != "?");
      if (operand != "?" && !operand.empty()) {
        size_t d = 0;
        while (d <= operand.size()) {
          const size_t x = std::min(operand.find('x', d), operand.size());
          int64_t v = 0;
          const auto [end, ec] = std::from_chars(operand.data() + d, operand.data() + x, v);
          if (ec != std::errc() || end != operand.data() + x || v < 0) return false;
          out.dims.back().push_back(v);
          d = x + 1;
        }
      }
      if (comma == dims.size()) break;
      at = comma + 1;
    }
  }
  if (!types.empty()) {
    size_t at = 0;
    while (true) {
      const size_t semi = std::min(types.find(';', at), types.size());
      out.types.push_back(types.substr(at, semi - at));
      if (semi == types.size()) break;
      at = semi + 1;
    }
  }
  return true;
}

int64_t ElementBytes(std::string_view type) {
  static const std::map<std::string_view, int64_t> kBytes = {
      {"c10::BFloat16", 2},
      {"c10::Half", 2},
      {"float", 4},
      {"double", 8},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1},
      {"signed char", 1},
      {"unsigned char", 1},
      {"short int", 2},
      {"int", 4},
      {"long int", 8},
      {"bool", 1},
  };
  const auto it = kBytes.find(type);
  return it == kBytes.end() ? 0 : it->second;
}

GemmOp GemmOpOf(std::string_view name) {
  static const std::map<std::string_view, GemmOp> kOps = {
      {"aten::linear", GemmOp::kLinear},
      {"aten::mm", GemmOp::kMm},
      {"aten::addmm", GemmOp::kAddmm},
      {"aten::matmul", GemmOp::kMatmul},
      {"aten::bmm", GemmOp::kBmm},
      {"aten::baddbmm", GemmOp::kBaddbmm},
      {"aten::scaled_dot_product_attention", GemmOp::kAttention},
      {"aten::_scaled_dot_product_flash_attention", GemmOp::kAttention},
      {"aten::_scaled_dot_product_efficient_attention", GemmOp::kAttention},
      {"aten::_scaled_dot_product_cudnn_attention", GemmOp::kAttention},
      {"aten::_scaled_dot_product_flash_attention_for_cpu", GemmOp::kAttention},
  };
  const auto it = kOps.find(name);
  return it == kOps.end() ? GemmOp::kNone : it->second;
}

bool AddGemmOpCost(GemmOp op, const OpShapes& s, StepCost& cost, int64_t* weight_element_bytes) {
  StepCost add;
  int64_t element = 0;
  bool ok = false;
  switch (op) {
    case GemmOp::kLinear: {  // input [..., K], weight [N, K], bias [N]
      const std::vector<int64_t>*a = Operand(s, 0), *w = Operand(s, 1);
      if (a == nullptr || w == nullptr || a->empty() || w->empty() || w->size() > 2 ||
          w->back() != a->back()) {
        break;
      }
      const double n = w->size() == 2 ? static_cast<double>(w->front()) : 1;
      add.gemm_flops = 2 * Product(*a, 0, a->size() - 1) * n * static_cast<double>(a->back());
      ok = AddWeight(s, 1, add, &element);
      AddBias(s, 2, add);
      break;
    }
    case GemmOp::kMm:
    case GemmOp::kMatmul: {
      const std::vector<int64_t>*a = Operand(s, 0), *b = Operand(s, 1);
      ok = a != nullptr && b != nullptr && AddMatmul(*a, *b, true, s, 1, add, &element);
      break;
    }
    case GemmOp::kAddmm: {  // bias, mat1 [M, K], mat2 [K, N]
      const std::vector<int64_t>*a = Operand(s, 1), *b = Operand(s, 2);
      ok = a != nullptr && b != nullptr && AddMatmul(*a, *b, true, s, 2, add, &element);
      AddBias(s, 0, add);
      break;
    }
    case GemmOp::kBmm: {
      const std::vector<int64_t>*a = Operand(s, 0), *b = Operand(s, 1);
      ok = a != nullptr && b != nullptr && a->size() == 3 && b->size() == 3 &&
           AddMatmul(*a, *b, false, s, 1, add, &element);
      break;
    }
    case GemmOp::kBaddbmm: {  // input, batch1, batch2
      const std::vector<int64_t>*a = Operand(s, 1), *b = Operand(s, 2);
      ok = a != nullptr && b != nullptr && a->size() == 3 && b->size() == 3 &&
           AddMatmul(*a, *b, false, s, 2, add, &element);
      break;
    }
    case GemmOp::kAttention:
      ok = AddAttention(s, add);
      break;
    case GemmOp::kNone:
      break;
  }
  if (!ok) return false;
  cost.weight_bytes += add.weight_bytes;
  cost.kv_read_bytes += add.kv_read_bytes;
  cost.gemm_flops += add.gemm_flops;
  cost.attention_flops += add.attention_flops;
  *weight_element_bytes = element;
  return true;
}

GemmShapeIndex::GemmShapeIndex(const Trace& trace) {
  const RangeTable& r = trace.ranges;
  std::vector<GemmOp> op_of(r.size(), GemmOp::kNone);
  std::map<uint32_t, GemmOp> by_name;  // each name looked up once
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::kCpuOp) continue;
    auto [it, added] = by_name.try_emplace(r.name[i].value, GemmOp::kNone);
    if (added) it->second = GemmOpOf(trace.str(r.name[i]));
    op_of[i] = it->second;
  }
  std::map<int64_t, double> weight_bytes_by_element;
  OpShapes shapes;
  for (size_t i = 0; i < r.size(); ++i) {
    if (op_of[i] == GemmOp::kNone) continue;
    bool nested = false;  // inside another GEMM operator: its work is the outer one's
    for (int32_t p = r.parent[i]; p != kNoRow && !nested; p = r.parent[static_cast<size_t>(p)]) {
      nested = op_of[static_cast<size_t>(p)] != GemmOp::kNone;
    }
    if (nested) continue;
    Op op{r.start_ns[i], false, {}};
    const std::string_view text = trace.str(r.shapes[i]);
    int64_t element = 0;
    if (!text.empty()) {
      ++with_shapes_;
      op.readable =
          ParseOpShapes(text, shapes) && AddGemmOpCost(op_of[i], shapes, op.cost, &element);
    }
    if (op.readable && op_of[i] == GemmOp::kAttention) {
      const std::vector<int64_t>&q = shapes.dims[0], &k = shapes.dims[1];
      op.sequences = q.front();
      op.queries = q[q.size() - 2];
      op.keys = k[k.size() - 2];
    }
    if (element > 0) weight_bytes_by_element[element] += op.cost.weight_bytes;
    ops_.push_back(op);
  }
  double most = 0;
  for (const auto& [element, bytes] : weight_bytes_by_element) {
    if (bytes > most) {
      most = bytes;
      weight_element_bytes_ = element;
    }
  }
  std::stable_sort(ops_.begin(), ops_.end(),
                   [](const Op& a, const Op& b) { return a.start_ns < b.start_ns; });
}

ShapesWork GemmShapeIndex::Within(TimeNs start_ns, TimeNs end_ns) const {
  ShapesWork w;
  auto it = std::lower_bound(ops_.begin(), ops_.end(), start_ns,
                             [](const Op& o, TimeNs t) { return o.start_ns < t; });
  for (; it != ops_.end() && it->start_ns < end_ns; ++it) {
    if (!it->readable) {
      ++w.unreadable;
      continue;
    }
    ++w.ops;
    if (w.sequences < 0 && it->sequences >= 0) {
      w.sequences = it->sequences;
      w.queries = it->queries;
      w.keys = it->keys;
    }
    w.cost.weight_bytes += it->cost.weight_bytes;
    w.cost.kv_read_bytes += it->cost.kv_read_bytes;
    w.cost.gemm_flops += it->cost.gemm_flops;
    w.cost.attention_flops += it->cost.attention_flops;
  }
  return w;
}

}  // namespace sightline
