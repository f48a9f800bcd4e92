// Reads `opreg plan` trace files with nlohmann/json. nlohmann 3.11 (Debian's) keeps no source
// positions in its values, so the SAX handler records where the lexer stood when each value
// ended (keyed by its JSON pointer), and a value's error names that line and column, as
// nlohmann's own syntax errors do.
#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "opreg/core/string_util.h"
#include "plan_command.h"

namespace opreg::cli {
namespace {

using nlohmann::json;

constexpr size_t kMaxDepth = 64;

// A char iterator that publishes how far the parser has read, so the SAX handler can tell
// where each value ends.
class CountingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char* base, size_t* consumed)
      : p_(p), base_(base), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    *consumed_ = static_cast<size_t>(p_ - base_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* base_;
  size_t* consumed_;
};

// Thrown when the document nests deeper than kMaxDepth.
struct TooDeep {
  size_t offset;
};

// The SAX handler: nlohmann's own DOM builder, plus the JSON pointer of each value and the
// offset at which it ended, and the depth limit. (nlohmann's parse callback would do the same,
// but its parser rescans the enclosing array for discarded values after every object: quadratic
// in the number of buffers, 2 s for 100,000 of them.)
class PositionRecordingParser {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  PositionRecordingParser(json* doc, const size_t* consumed) : dom_(*doc), consumed_(consumed) {}

  bool null() { return Value(dom_.null()); }
  bool boolean(bool v) { return Value(dom_.boolean(v)); }
  bool number_integer(number_integer_t v) { return Value(dom_.number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) { return Value(dom_.number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& s) { return Value(dom_.number_float(v, s)); }
  bool string(string_t& v) { return Value(dom_.string(v)); }
  bool binary(binary_t& v) { return Value(dom_.binary(v)); }
  bool start_object(size_t n) { return Open(false) && dom_.start_object(n); }
  bool start_array(size_t n) { return Open(true) && dom_.start_array(n); }
  bool key(string_t& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() { return Close(dom_.end_object()); }
  bool end_array() { return Close(dom_.end_array()); }
  template <class Exception>
  bool parse_error(size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

  // Where the value at `pointer` ended, or 0 when it was not seen.
  size_t EndOf(const std::string& pointer) const {
    auto it = ends_.find(pointer);
    return it == ends_.end() ? 0 : it->second;
  }

 private:
  struct Frame {
    bool array;
    size_t index;
    std::string key;
  };

  bool Open(bool array) {
    if (frames_.size() >= kMaxDepth) throw TooDeep{*consumed_};
    frames_.push_back({array, 0, ""});
    return true;
  }
  bool Close(bool ok) {
    frames_.pop_back();
    return Value(ok);
  }
  bool Value(bool ok) {
    std::string pointer;
    for (const Frame& f : frames_) {
      pointer += '/';
      pointer += f.array ? std::to_string(f.index) : f.key;
    }
    ends_[pointer] = *consumed_;
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return ok;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const size_t* consumed_;
  std::vector<Frame> frames_;
  absl::flat_hash_map<std::string, size_t> ends_;
};

// "line L, column C" of a byte offset (1-based; the column of the last character read, as
// nlohmann counts).
std::string LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return StrCat("line ", line, ", column ", std::max<size_t>(column, 1));
}

class TraceReader {
 public:
  TraceReader(std::string_view text, const PositionRecordingParser& positions)
      : text_(text), positions_(positions) {}

  absl::Status At(const std::string& pointer, std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat(LineColumn(text_, positions_.EndOf(pointer)), ": ", what));
  }

  // The integer at `pointer`, in [lo, hi].
  absl::StatusOr<int64_t> Integer(const json& v, const std::string& pointer, std::string_view name,
                                  int64_t lo, int64_t hi) const {
    const auto out_of_range = [&] {
      return At(pointer,
                StrCat("\"", name, "\" = ", v.dump(), " is out of range [", lo, ", ", hi, "]"));
    };
    if (v.is_number_integer()) {
      if (v.is_number_unsigned()) {
        const uint64_t x = v.get<uint64_t>();
        if (x > static_cast<uint64_t>(hi) || static_cast<int64_t>(x) < lo) return out_of_range();
        return static_cast<int64_t>(x);
      }
      const int64_t x = v.get<int64_t>();
      if (x < lo || x > hi) return out_of_range();
      return x;
    }
    // nlohmann keeps an integer literal beyond 64 bits as a double: a range error, not a type one.
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (std::isfinite(x) && std::trunc(x) == x &&
          std::fabs(x) >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
        return out_of_range();
      }
    }
    return At(pointer, StrCat("expected an integer for \"", name, "\""));
  }

 private:
  std::string_view text_;
  const PositionRecordingParser& positions_;
};

}  // namespace

absl::StatusOr<PlanTrace> ParsePlanTrace(std::string_view text) {
  size_t consumed = 0;
  json doc;
  PositionRecordingParser positions(&doc, &consumed);
  try {
    json::sax_parse(CountingIterator(text.data(), text.data(), &consumed),
                    CountingIterator(text.data() + text.size(), text.data(), &consumed),
                    &positions);
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.N] parse error at line L, column C: ...".
    std::string_view what = e.what();
    const size_t at = what.find(" at line ");
    if (at != std::string_view::npos) what.remove_prefix(at + 4);
    return absl::InvalidArgumentError(std::string(what));
  } catch (const TooDeep& e) {
    return absl::InvalidArgumentError(StrCat(
        LineColumn(text, e.offset), ": nesting too deep (more than ", kMaxDepth, " levels)"));
  } catch (const json::exception& e) {
    // The lexer's other refusals (a number beyond double's range, "1e400": out_of_range.406)
    // carry no position; where the reader stood is it.
    std::string_view what = e.what();
    const size_t tag_end = what.find("] ");
    if (tag_end != std::string_view::npos) what.remove_prefix(tag_end + 2);
    return absl::InvalidArgumentError(StrCat(LineColumn(text, consumed), ": ", what));
  }
  TraceReader reader(text, positions);
  if (!doc.is_object()) return reader.At("", "a trace is a JSON object with \"buffers\"");
  PlanTrace trace;
  if (auto it = doc.find("alignment"); it != doc.end()) {
    absl::StatusOr<int64_t> a = reader.Integer(*it, "/alignment", "alignment", 1, int64_t{1} << 30);
    if (!a.ok()) return a.status();
    trace.alignment = *a;
  }
  if (auto it = doc.find("name"); it != doc.end()) {
    if (!it->is_string()) return reader.At("/name", "expected a string for \"name\"");
    trace.name = it->get<std::string>();
  }
  auto buffers = doc.find("buffers");
  if (buffers == doc.end()) return reader.At("", "missing \"buffers\"");
  if (!buffers->is_array()) return reader.At("/buffers", "\"buffers\" must be an array");
  constexpr int64_t kMaxStep = std::numeric_limits<int32_t>::max() - 1;
  constexpr int64_t kMaxSize = int64_t{1} << 56;
  constexpr int64_t kMaxTotal = int64_t{1} << 60;
  static const char* const kNames[3] = {"size", "first", "last"};
  int64_t total = 0;
  for (size_t i = 0; i < buffers->size(); ++i) {
    const json& b = (*buffers)[i];
    const std::string pointer = StrCat("/buffers/", i);
    const json* fields[3] = {nullptr, nullptr, nullptr};
    std::string field_pointers[3];
    if (b.is_array()) {
      if (b.size() != 3)
        return reader.At(pointer, StrCat("buffer ", i, ": expected [size, first, last]"));
      for (size_t k = 0; k < 3; ++k) {
        fields[k] = &b[k];
        field_pointers[k] = StrCat(pointer, "/", k);
      }
    } else if (b.is_object()) {
      for (size_t k = 0; k < 3; ++k) {
        auto it = b.find(kNames[k]);
        if (it == b.end()) {
          return reader.At(pointer, StrCat("buffer ", i, ": missing \"", kNames[k], "\""));
        }
        fields[k] = &*it;
        field_pointers[k] = StrCat(pointer, "/", kNames[k]);
      }
    } else {
      return reader.At(pointer,
                       StrCat("buffer ", i, ": expected an object or [size, first, last]"));
    }
    int64_t v[3];
    for (size_t k = 0; k < 3; ++k) {
      absl::StatusOr<int64_t> x =
          reader.Integer(*fields[k], field_pointers[k], kNames[k], 0, k == 0 ? kMaxSize : kMaxStep);
      if (!x.ok()) return x.status();
      v[k] = *x;
    }
    if (v[1] > v[2]) {
      return reader.At(pointer,
                       StrCat("buffer ", i, ": first (", v[1], ") is after last (", v[2], ")"));
    }
    total += v[0];
    if (total > kMaxTotal) {
      return reader.At(pointer, StrCat("buffer ", i, ": the sizes add up to more than 2^60 bytes"));
    }
    trace.buffers.push_back({v[0], static_cast<int32_t>(v[1]), static_cast<int32_t>(v[2])});
  }
  return trace;
}

}  // namespace opreg::cli
