// The token text: one pass over the bytes with the states a C lexer has
// between tokens (code, string or character literal, comment). Where the
// pass cannot tell what the compiler sees (a `'` that may be a C++14 digit
// separator, a `<` that may open a header name), the rest of that line
// keeps every comment, and a block comment opened there ends the pass.
#include "lexer/token_text.h"

#include <algorithm>
#include <cstdint>

namespace lexpack::lexer {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Bytes the code state stops at; everything else is copied as it is.
struct StopTable {
  bool stop[256] = {};
  constexpr StopTable() {
    for (unsigned char c : {'/', '\'', '"', '\\', '\n', '\r', '<', '#'}) stop[c] = true;
  }
};
constexpr StopTable kStops;

class TokenText {
 public:
  TokenText(std::string_view b, std::string* out) : b_(b), out_(out) {}

  bool run() {
    out_->clear();
    out_->reserve(b_.size());
    while (i_ < b_.size()) {
      const size_t run_start = i_;
      while (i_ < b_.size() && !kStops.stop[uint8_t(b_[i_])]) ++i_;
      if (i_ > run_start) {
        for (size_t p = run_start; !line_has_code_ && p < i_; ++p)
          line_has_code_ = !is_blank(b_[p]);
        out_->append(b_, run_start, i_ - run_start);
      }
      if (i_ >= b_.size()) break;
      if (!step()) return false;
    }
    strip_blanks();
    end_file();
    return true;
  }

  bool saw_line_comment() const { return saw_line_comment_; }

 private:
  // One stop byte at i_.
  bool step() {
    const char c = b_[i_];
    if (size_t n = splice_at(i_)) return copy(n, true);
    if (c == '\n' || c == '\r') return line_end();
    if (c == '#') {
      if (!line_has_code_) {
        directive_ = true;
        header_name_at_ = header_name_after(i_ + 1);
      }
      return copy(1, false);
    }
    if (c == '<' && directive_) return literal('>');
    if (c == '\'' || c == '"') {
      // A prefix split from its quote by a splice ("R\<newline>\"(...)").
      if (splice_ends_at(i_)) return false;
      if (c == '"' && raw_string_prefix()) return false;
      if (c == '\'' && i_ > 0 && (is_word(b_[i_ - 1]) || b_[i_ - 1] == '.') && !char_prefix()) {
        unsure_line_ = true;  // a digit separator in C++, a literal in C
      }
      return literal(c);
    }
    if (c == '/' && i_ + 1 < b_.size()) {
      if (splice_at(i_ + 1)) return false;  // a comment opened across a splice
      if (b_[i_ + 1] == '/') return line_comment();
      if (b_[i_ + 1] == '*') return block_comment();
    }
    return copy(1, false);
  }

  // Length of the line splice at p (backslash, blanks, line end), else 0.
  size_t splice_at(size_t p) const {
    if (p >= b_.size() || b_[p] != '\\') return 0;
    size_t j = p + 1;
    while (j < b_.size() && is_blank(b_[j])) ++j;
    if (j < b_.size() && b_[j] == '\n') return j + 1 - p;
    if (j + 1 < b_.size() && b_[j] == '\r' && b_[j + 1] == '\n') return j + 2 - p;
    return 0;
  }

  // Whether a splice ends right before p.
  bool splice_ends_at(size_t p) const {
    if (p == 0 || b_[p - 1] != '\n') return false;
    size_t q = p - 1;
    if (q > 0 && b_[q - 1] == '\r') --q;
    while (q > 0 && is_blank(b_[q - 1])) --q;
    return q > 0 && b_[q - 1] == '\\';
  }

  // Length of the line end at p: 1 ("\n"), 2 ("\r\n"); 0 for anything else.
  size_t line_end_at(size_t p) const {
    if (p >= b_.size()) return 0;
    if (b_[p] == '\n') return 1;
    if (b_[p] == '\r' && p + 1 < b_.size() && b_[p + 1] == '\n') return 2;
    return 0;
  }

  bool copy(size_t n, bool spliced) {
    out_->append(b_, i_, n);
    i_ += n;
    if (spliced) {
      floor_ = out_->size();  // the blanks of a splice are not trailing
    } else {
      line_has_code_ = true;
    }
    return true;
  }

  // Where the header name of an #include, #include_next or #import whose
  // name starts after p opens ('<' or '"'); npos for any other directive.
  size_t header_name_after(size_t p) const {
    while (p < b_.size() && is_blank(b_[p])) ++p;
    size_t word = p;
    while (p < b_.size() && is_word(b_[p])) ++p;
    std::string_view name = b_.substr(word, p - word);
    if (name != "include" && name != "include_next" && name != "import") {
      return std::string_view::npos;
    }
    while (p < b_.size() && is_blank(b_[p])) ++p;
    return p < b_.size() && (b_[p] == '<' || b_[p] == '"') ? p : std::string_view::npos;
  }

  // The identifier ending at i_ (a literal's prefix).
  std::string_view prefix() const {
    size_t j = i_;
    while (j > 0 && is_word(b_[j - 1])) --j;
    if (j > 0 && (b_[j - 1] == '.' || (b_[j - 1] >= '0' && b_[j - 1] <= '9'))) return {};
    return b_.substr(j, i_ - j);
  }
  bool raw_string_prefix() const {
    std::string_view p = prefix();
    return p == "R" || p == "u8R" || p == "uR" || p == "UR" || p == "LR";
  }
  bool char_prefix() const {
    std::string_view p = prefix();
    return p == "u8" || p == "u" || p == "U" || p == "L";
  }

  // A string or character literal, or a directive's `<...>`: copied up to
  // its closing byte, or up to the line end when it has none. Outside a
  // header name, `<` is a less-than to the compiler: when a quote or a slash
  // follows it before the `>`, the compiler may be in a literal or comment
  // where this pass is not.
  bool literal(char close) {
    const bool header_name = i_ == header_name_at_;  // no escapes in it
    const size_t open = i_;
    copy(1, false);
    if (close == '>' && !header_name) {
      const size_t end = std::min(b_.find('>', open), b_.find_first_of("\n\r", open));
      if (b_.substr(open, end == std::string_view::npos ? b_.size() - open : end - open)
              .find_first_of("'\"/") != std::string_view::npos) {
        unsure_line_ = true;
      }
    }
    while (i_ < b_.size()) {
      if (size_t n = splice_at(i_)) {
        copy(n, true);
        continue;
      }
      const char c = b_[i_];
      if (c == '\n' || c == '\r') return true;  // unterminated: ends with the line
      if (c == '\\' && close != '>' && !header_name && i_ + 1 < b_.size() && !line_end_at(i_ + 1)) {
        copy(2, false);
        continue;
      }
      copy(1, false);
      if (c == close) return true;
    }
    return true;
  }

  bool line_end() {
    const size_t n = line_end_at(i_);
    if (n == 0) return false;  // a lone carriage return
    strip_blanks();
    out_->append(b_, i_, n);
    i_ += n;
    floor_ = out_->size();
    line_has_code_ = false;
    directive_ = false;
    header_name_at_ = std::string_view::npos;
    unsure_line_ = false;
    return true;
  }

  // Empty lines at the end of the file precede no token: all go, but
  // whether the file ends in a line end stays (clang's -Wnewline-eof), and
  // so does the line end of a splice (gcc warns of one at the end).
  void end_file() {
    const size_t n = out_->size();
    size_t run = n;  // where the trailing line ends start
    while (run > 0 && ((*out_)[run - 1] == '\n' || (*out_)[run - 1] == '\r')) --run;
    size_t before = run;
    while (before > 0 && is_blank((*out_)[before - 1])) --before;
    if (before > 0 && (*out_)[before - 1] == '\\') return;
    if (run == n) return;
    const bool ends_in_line_end = !b_.empty() && b_.back() == '\n';
    out_->resize(!ends_in_line_end ? run : run + ((*out_)[run] == '\r' ? 2 : 1));
  }

  // Drops blanks before the line end, unless a backslash precedes them (gcc
  // reads "\ " + line end as a splice).
  void strip_blanks() {
    size_t n = out_->size();
    while (n > floor_ && is_blank((*out_)[n - 1])) --n;
    if (n < out_->size() && n > 0 && (*out_)[n - 1] == '\\') return;
    out_->resize(n);
  }

  // Whether only blanks follow position p up to a line end or the file end.
  bool line_ends_after(size_t p) const {
    while (p < b_.size() && is_blank(b_[p])) ++p;
    return p >= b_.size() || line_end_at(p) != 0;
  }

  // Whether the out text ends, before its trailing blanks, in a backslash:
  // dropping a comment there would make a splice of it.
  bool backslash_before() const {
    size_t n = out_->size();
    while (n > floor_ && is_blank((*out_)[n - 1])) --n;
    return n > 0 && (*out_)[n - 1] == '\\';
  }

  // Whether no diagnostic can read the comment text [from, to).
  bool inert(size_t from, size_t to) const {
    for (size_t p = from; p < to; ++p) {
      const unsigned char c = uint8_t(b_[p]);
      if (c == '\n' || c == '\t' || (c == '\r' && p + 1 < to && b_[p + 1] == '\n')) continue;
      if (c < 0x20 || c > 0x7e) return false;
      // gcc warns of a backslash and a line end with blanks between.
      if (c == '\\' && p + 1 < to && is_blank(b_[p + 1]) && splice_at(p) != 0) return false;
      if (p + 1 < to) {
        const char d = b_[p + 1];
        if ((c == '/' && d == '*') || (c == '*' && d == '/') || (c == '?' && d == '?')) {
          return false;
        }
      }
      if ((c | 0x20) == 'f' && p + 3 < to && (b_[p + 1] | 0x20) == 'a' &&
          (b_[p + 2] | 0x20) == 'l' && (b_[p + 3] | 0x20) == 'l') {
        return false;
      }
    }
    return true;
  }

  // The comment [i_, end), its text from i_ + 2 to body_end: dropped or
  // copied.
  bool finish_comment(size_t end, size_t body_end) {
    const bool drop =
        !unsure_line_ && !backslash_before() && line_ends_after(end) && inert(i_ + 2, body_end);
    if (!drop) {
      out_->append(b_, i_, end - i_);
      i_ = end;
      floor_ = out_->size();
      return true;
    }
    // Only its line ends stay, so that every line keeps its number.
    for (size_t p = i_; p < end; ++p) {
      if (const size_t n = line_end_at(p)) {
        strip_blanks();
        out_->append(b_, p, n);
        floor_ = out_->size();
        p += n - 1;
      }
    }
    i_ = end;
    return true;
  }

  bool line_comment() {
    saw_line_comment_ = true;
    // Up to the first line end that no splice continues (a continued line
    // comment draws -Wcomment, and so is never inert).
    size_t p = i_ + 2;
    bool continued = false;
    while (p < b_.size()) {
      if (size_t n = splice_at(p)) {
        continued = true;
        p += n;
        continue;
      }
      if (b_[p] == '\n' || b_[p] == '\r') break;
      ++p;
    }
    if (continued) {
      out_->append(b_, i_, p - i_);
      i_ = p;
      floor_ = out_->size();
      return true;
    }
    return finish_comment(p, p);
  }

  bool block_comment() {
    if (unsure_line_) return false;  // it may not be a comment at all
    size_t close = b_.find("*/", i_ + 2);
    if (close == std::string_view::npos) return false;  // unterminated
    const size_t backslash = b_.find('\\', i_ + 2);
    if (backslash < close) {
      // A splice may join a '*' and a '/' ("*\<newline>/" ends it too): the
      // end is the first '*' followed, over any splices, by '/'.
      close = std::string_view::npos;
      for (size_t p = i_ + 2; p < b_.size() && close == std::string_view::npos; ++p) {
        if (b_[p] != '*') continue;
        size_t q = p + 1;
        while (size_t n = splice_at(q)) q += n;
        if (q < b_.size() && b_[q] == '/') {
          // The comment's body ends at the '*'; the spliced end is kept
          // whole by copying, never dropped (inert() refuses it).
          if (q != p + 1) return false;
          close = p;
        }
      }
      if (close == std::string_view::npos) return false;
    }
    return finish_comment(close + 2, close);
  }

  std::string_view b_;
  std::string* out_;
  size_t i_ = 0;
  size_t floor_ = 0;            // out_ below this is never stripped
  bool line_has_code_ = false;  // anything but blanks and comments on the line so far
  bool directive_ = false;      // the line starts with '#'
  size_t header_name_at_ = std::string_view::npos;  // its header name's '<'
  bool unsure_line_ = false;                        // the rest of the line keeps its comments
  bool saw_line_comment_ = false;
};

}  // namespace

bool token_text(std::string_view bytes, std::string* out) {
  bool line_comment = false;
  return token_text(bytes, out, &line_comment);
}

bool token_text(std::string_view bytes, std::string* out, bool* line_comment) {
  TokenText pass(bytes, out);
  const bool sure = pass.run();
  *line_comment = pass.saw_line_comment();
  return sure;
}

}  // namespace lexpack::lexer
