#include "exporters/needle_set.h"

#include <algorithm>

namespace sightline {

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

uint32_t NeedleSet::Gram(const char* p) {
  return static_cast<uint32_t>(static_cast<unsigned char>(LowerAscii(p[0]))) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(LowerAscii(p[1]))) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(LowerAscii(p[2])));
}

int NeedleSet::Add(std::string_view text) {
  if (text.size() < kMinLength) return -1;
  std::string lower = LowerAscii(text);
  for (size_t i = 0; i < needles_.size(); ++i) {
    if (needles_[i] == lower) return static_cast<int>(i);
  }
  const int index = static_cast<int>(needles_.size());
  const uint32_t gram = Gram(lower.data());
  needles_.push_back(std::move(lower));
  std::vector<int>& list = by_gram_[gram];
  list.push_back(index);
  std::stable_sort(list.begin(), list.end(), [this](int a, int b) {
    return needles_[static_cast<size_t>(a)].size() > needles_[static_cast<size_t>(b)].size();
  });
  if (bitmap_.empty()) bitmap_.assign((size_t{1} << 24) / 64, 0);
  bitmap_[gram / 64] |= uint64_t{1} << (gram % 64);
  return index;
}

std::optional<NeedleSet::Match> NeedleSet::FindNext(std::string_view text, size_t from,
                                                    size_t min_length) const {
  if (needles_.empty() || text.size() < kMinLength) return std::nullopt;
  for (size_t i = from; i + kMinLength <= text.size(); ++i) {
    const uint32_t gram = Gram(text.data() + i);
    if ((bitmap_[gram / 64] >> (gram % 64) & 1) == 0) continue;
    for (int index : by_gram_.at(gram)) {
      const std::string& n = needles_[static_cast<size_t>(index)];
      if (n.size() < min_length || i + n.size() > text.size()) continue;
      if (!EqualsIgnoringCase(text.substr(i, n.size()), n)) continue;
      if (n.size() < kMinSubstringLength &&
          ((i > 0 && IsAlnumAscii(text[i - 1])) ||
           (i + n.size() < text.size() && IsAlnumAscii(text[i + n.size()])))) {
        continue;
      }
      return Match{i, n.size(), index};
    }
  }
  return std::nullopt;
}

}  // namespace sightline
