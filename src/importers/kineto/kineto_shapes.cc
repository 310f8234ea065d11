#include "importers/kineto/kineto_shapes.h"

#include <cctype>

namespace sightline::kineto {
namespace {

// A cursor over a small JSON array's raw text.
class ShapeCursor {
 public:
  explicit ShapeCursor(std::string_view text) : text_(text) {}
  void SkipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  char Peek() {
    SkipSpace();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  bool Done() {
    SkipSpace();
    return at_ == text_.size();
  }
  // Digits (an optional minus sign first), copied to out.
  bool Integer(std::string* out) {
    SkipSpace();
    const size_t begin = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    if (at_ == begin || (at_ == begin + 1 && text_[begin] == '-')) return false;
    out->append(text_.substr(begin, at_ - begin));
    return true;
  }
  // A string without escapes, its content copied to out.
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    const size_t end = text_.find('"', at_);
    if (end == std::string_view::npos) return false;
    const std::string_view content = text_.substr(at_, end - at_);
    if (content.find('\\') != std::string_view::npos) return false;
    out->append(content);
    at_ = end + 1;
    return true;
  }
  // Skips one value (a nested array or object, a string, a scalar); false on malformed text.
  bool SkipValue() {
    int depth = 0;
    SkipSpace();
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"') {
        std::string ignored;
        if (!String(&ignored)) return false;
      } else if (c == '[' || c == '{') {
        ++depth;
        ++at_;
      } else if (c == ']' || c == '}') {
        if (depth == 0) return true;  // the end of the enclosing array
        --depth;
        ++at_;
      } else if (c == ',' && depth == 0) {
        return true;
      } else {
        ++at_;
      }
    }
    return false;
  }
  // Backtracking for an operand that turns out not to be a list of integers.
  size_t position() const { return at_; }
  void Reset(size_t at) { at_ = at; }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

// One operand's dimensions, "16x2048" ("" a scalar), or '?' when it is not a list of integers.
bool Operand(ShapeCursor& c, std::string* out) {
  const size_t start = c.position();
  const size_t written = out->size();
  if (c.Eat('[')) {
    bool first = true;
    bool ints = true;
    while (!c.Eat(']')) {
      if (!first && !c.Eat(',')) {
        ints = false;
        break;
      }
      if (!first) out->push_back('x');
      if (!c.Integer(out)) {
        ints = false;
        break;
      }
      first = false;
    }
    if (ints) return true;
  }
  out->resize(written);
  c.Reset(start);
  out->push_back('?');
  return c.SkipValue();
}

// Calls item(cursor) for each element of a top-level array, writing `separator` between them.
template <typename Item>
ShapesRead EachElement(std::string_view text, char separator, std::string* out, Item item) {
  ShapeCursor c(text);
  if (!c.Eat('[')) return ShapesRead::kUnreadable;
  int n = 0;
  while (!c.Eat(']')) {
    if (n > 0 && !c.Eat(',')) return ShapesRead::kUnreadable;
    if (++n > kMaxShapeOperands) return ShapesRead::kTooManyOperands;
    if (n > 1) out->push_back(separator);
    if (!item(c)) return ShapesRead::kUnreadable;
  }
  return c.Done() ? ShapesRead::kKept : ShapesRead::kUnreadable;
}

}  // namespace

ShapesRead CompactShapes(std::string_view dims_json, std::string_view types_json,
                         std::string* out) {
  out->clear();
  ShapesRead read = ShapesRead::kKept;
  if (!dims_json.empty()) {
    read = EachElement(dims_json, ',', out, [out](ShapeCursor& c) { return Operand(c, out); });
  }
  out->push_back('|');
  if (read == ShapesRead::kKept && !types_json.empty()) {
    read = EachElement(types_json, ';', out, [out](ShapeCursor& c) {
      if (c.Peek() == '"') return c.String(out);
      out->push_back('?');
      return c.SkipValue();
    });
  }
  if (read != ShapesRead::kKept) out->clear();
  return read;
}

}  // namespace sightline::kineto
