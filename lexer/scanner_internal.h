// The scanner's state machine, shared by every kernel. Split over
// scanner.cpp (main loop, comments, literals), logical_line.cpp (directive
// line cleaning), directive_parser.cpp (directive meaning) and include_guard.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lexer/kernel.h"
#include "lexer/scan_result.h"

namespace lexpack::lexer {

// A keyword found by the prepass (a whole identifier); only those lying in
// code, outside comments and literals, count.
enum class HitKind : uint8_t { kDate, kTime, kTimestamp, kImport, kModule, kPragma };
struct Hit {
  const char* pos;
  HitKind kind;
  uint8_t size;
};

// One logical line with splices removed and comments replaced by a space.
// view() indexes map back to input bytes with orig().
class LogicalLine {
 public:
  std::string_view view() const { return view_; }
  // The input byte that text index i came from; end() for i past the text.
  const char* orig(size_t i) const {
    if (!mapped_) return base_ + i;
    if (i >= storage_.size()) return end_;
    size_t lo = 0, hi = runs_.size();
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (runs_[mid].text_index <= i ? lo : hi) = mid;
    }
    return base_ + runs_[lo].offset + (i - runs_[lo].text_index);
  }
  const char* end() const { return end_; }  // the line end (or input end)
  // Back to no line, keeping the memory of the copied text.
  void reset() {
    view_ = {};
    storage_.clear();
    runs_.clear();
    base_ = end_ = nullptr;
    mapped_ = false;
  }

 private:
  friend class Scanner;
  // A run of text copied from consecutive input bytes.
  struct Run {
    uint32_t text_index;
    uint32_t offset;  // from base_
  };
  std::string_view view_;
  std::string storage_;
  std::vector<Run> runs_;
  const char* base_ = nullptr;
  const char* end_ = nullptr;
  bool mapped_ = false;
};

// A conditional directive not closed yet.
struct OpenConditional {
  uint32_t line;
  uint64_t offset;
  DirectiveKind kind;
};

// Buffers a scan needs only while it runs. Each thread keeps one and every
// scan on it reuses their memory.
struct ScanScratch {
  std::vector<Hit> hits;
  std::vector<OpenConditional> open_conditionals;
  std::vector<const char*> directive_ends;  // parallel to the result's directives
  LogicalLine line;
};

class Scanner {
 public:
  // Clears *out and *scratch (keeping their memory); run() fills *out.
  Scanner(std::string_view bytes, const Kernel& kernel, ScanResult* out, ScanScratch* scratch);
  void run();

 private:
  // scanner.cpp
  void find_hits();
  const char* on_hash(const char* p);
  const char* on_slash(const char* p);
  const char* on_double_quote(const char* p);
  const char* on_single_quote(const char* p);
  const char* on_hit(const Hit& hit);
  const char* skip_block_comment(const char* p);  // p just after "/*"
  const char* skip_line_comment(const char* p);   // p just after "//"; returns the line end
  const char* skip_quoted(const char* p, char quote);
  const char* skip_raw_string(const char* quote);
  bool at_line_start(const char* p) const;
  const char* skip_space_back(const char* p) const;
  uint32_t line_at(const char* p);
  void pass_line_end(const char* line_start);
  void diagnose(const char* p, std::string message);

  // logical_line.cpp
  enum class LineMode { kDirective, kModule };
  void read_line(const char* p, LineMode mode);
  const char* clean_header_name(const char* p, char close);
  const char* clean_literal(const char* p, char quote);
  bool header_name_allowed(LineMode mode) const;
  void put(const char* from, size_t n);

  // directive_parser.cpp
  const char* parse_directive(const char* hash);
  void parse_directive_line(const char* hash);
  const char* parse_module(const char* start, const char* keyword, bool exported, HitKind kind);
  void parse_include(DirectiveKind kind, std::string_view rest, const char* hash);
  void find_has_include(size_t from);
  void find_has_include_pieces(size_t from);
  void add_in_line(Directive d, size_t at);
  void find_clock_macros(size_t from);
  Directive& add(DirectiveKind kind, const char* at);
  void set_text(Directive& d, std::string_view text);

  // include_guard.cpp
  void detect_include_guard();
  bool only_space_and_comments(const char* from, const char* to);

  const char* const begin_;
  const char* const end_;
  const char* start_;  // after a UTF-8 byte-order mark
  const Kernel& kernel_;
  ScanResult& result_;

  std::vector<Hit>& hits_;
  size_t next_hit_ = 0;

  const char* line_pos_;
  uint32_t line_no_ = 1;

  const char* last_comment_end_ = nullptr;
  bool last_comment_at_line_start_ = false;

  std::vector<OpenConditional>& open_conditionals_;
  std::vector<const char*>& directive_ends_;  // parallel to result_.directives
  LogicalLine& line_;
};

}  // namespace lexpack::lexer
