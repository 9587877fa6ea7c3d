// A recursive-descent evaluator for #if conditions. Each value carries its
// type (signed or unsigned, both as wide as intmax_t) and whether it is
// known; operands skipped by &&, || and ?: are parsed but not evaluated, so
// `0 && 1 / 0` is no error, as in GCC and clang.
#include "preprocessor/expression.h"

#include <cctype>
#include <climits>
#include <optional>

namespace lexpack::preprocessor {
namespace {

struct Value {
  uintmax_t bits = 0;
  bool is_unsigned = false;
  bool known = true;
  // Not known, but `counter` times the directive's first __COUNTER__ value
  // plus `bits` (signed) when `counter` is not 0.
  int64_t counter = 0;

  bool is_zero() const { return bits == 0; }
  bool negative() const { return !is_unsigned && static_cast<intmax_t>(bits) < 0; }
  bool counted() const { return !known && counter != 0; }
};

Value signed_value(intmax_t v) {
  return Value{static_cast<uintmax_t>(v), false, true};
}
Value unknown_value(bool is_unsigned = false) {
  return Value{0, is_unsigned, false};
}

// C++ alternative tokens that are operators in #if.
std::string_view named_operator(std::string_view s) {
  if (s == "and") return "&&";
  if (s == "or") return "||";
  if (s == "not") return "!";
  if (s == "bitand") return "&";
  if (s == "bitor") return "|";
  if (s == "xor") return "^";
  if (s == "compl") return "~";
  if (s == "not_eq") return "!=";
  return {};
}

class Evaluator {
 public:
  Evaluator(const Tokens& tokens, const ConditionOptions& options)
      : ts_(tokens), options_(options) {}

  ConditionResult run() {
    ConditionResult r;
    if (ts_.empty()) return error("#if with no expression");
    const Value v = comma(false);
    if (error_.empty() && pos_ < ts_.size())
      fail("missing binary operator before token \"" + ts_[pos_].text + "\"");
    if (!error_.empty()) return error(error_);
    r.state = !v.known      ? ConditionResult::State::kUnknown
              : v.is_zero() ? ConditionResult::State::kFalse
                            : ConditionResult::State::kTrue;
    return r;
  }

 private:
  static ConditionResult error(std::string message) {
    ConditionResult r;
    r.state = ConditionResult::State::kError;
    r.error = std::move(message);
    return r;
  }
  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  // The operator spelling at the current position ("" for a non-operator).
  std::string_view peek() const {
    if (pos_ >= ts_.size()) return {};
    const Token& t = ts_[pos_];
    if (t.kind == TokenKind::kPunctuator) return t.text;
    if (options_.cplusplus && t.kind == TokenKind::kIdentifier) return named_operator(t.text);
    return {};
  }

  Value comma(bool skip) {
    Value v = conditional(skip);
    while (error_.empty() && peek() == ",") {
      ++pos_;
      v = conditional(skip);
    }
    return v;
  }

  Value conditional(bool skip) {
    const Value c = binary(1, skip);
    if (!error_.empty() || peek() != "?") return c;
    ++pos_;
    const bool take_second = c.known && !c.is_zero();
    const bool take_third = c.known && c.is_zero();
    Value a = comma(skip || take_third);
    if (peek() != ":") {
      fail("'?' without following ':'");
      return a;
    }
    ++pos_;
    Value b = conditional(skip || take_second);
    const bool is_unsigned = a.is_unsigned || b.is_unsigned;
    Value r = !c.known ? unknown_value() : take_second ? a : b;
    r.is_unsigned = is_unsigned;
    if (!c.known && a.known && b.known && a.bits == b.bits) r = Value{a.bits, is_unsigned, true};
    return r;
  }

  static int precedence(std::string_view op) {
    if (op == "||") return 1;
    if (op == "&&") return 2;
    if (op == "|") return 3;
    if (op == "^") return 4;
    if (op == "&") return 5;
    if (op == "==" || op == "!=") return 6;
    if (op == "<" || op == ">" || op == "<=" || op == ">=") return 7;
    if (op == "<<" || op == ">>") return 8;
    if (op == "+" || op == "-") return 9;
    if (op == "*" || op == "/" || op == "%") return 10;
    return 0;
  }

  Value binary(int min_prec, bool skip) {
    Value lhs = unary(skip);
    for (;;) {
      if (!error_.empty()) return lhs;
      const std::string_view op = peek();
      const int prec = precedence(op);
      if (prec == 0 || prec < min_prec) return lhs;
      ++pos_;
      if (op == "&&" || op == "||") {
        const bool is_and = op == "&&";
        const bool decided = lhs.known && (is_and ? lhs.is_zero() : !lhs.is_zero());
        const Value rhs = binary(prec + 1, skip || decided);
        lhs = logical(is_and, lhs, rhs, decided);
      } else {
        const Value rhs = binary(prec + 1, skip);
        lhs = arithmetic(op, lhs, rhs, skip);
      }
    }
  }

  static Value logical(bool is_and, const Value& a, const Value& b, bool decided) {
    if (decided) return signed_value(is_and ? 0 : 1);
    const bool b_decides = b.known && (is_and ? b.is_zero() : !b.is_zero());
    if (b_decides) return signed_value(is_and ? 0 : 1);
    if (!a.known || !b.known) return unknown_value();
    return signed_value(is_and ? 1 : 0);  // neither decided: both true (&&) or both false (||)
  }

  // An operator on a value counted from __COUNTER__'s first value c (a
  // number below 2^32): sums, differences and multiples stay c*k + n, and a
  // comparison of two with the same k does not depend on c (the idiom
  // `__COUNTER__ + 1 == __COUNTER__ + 0`). Anything else is unknown, as are
  // unsigned operands and values large enough that c*k + n could overflow.
  Value counted(std::string_view op, const Value& a, const Value& b) {
    if (!(a.known || a.counted()) || !(b.known || b.counted()) || a.is_unsigned || b.is_unsigned) {
      return unknown_value();
    }
    const auto n = [](const Value& v) { return static_cast<intmax_t>(v.bits); };
    const auto small = [](intmax_t v) {
      return v <= kCountedLimit << 24 && v >= -(kCountedLimit << 24);
    };
    if (!small(n(a)) || !small(n(b))) return unknown_value();
    Value r{0, false, false, 0};
    if (op == "+" || op == "-") {
      const int64_t sign = op == "+" ? 1 : -1;
      r.counter = a.counter + sign * b.counter;
      r.bits = static_cast<uintmax_t>(n(a) + sign * n(b));
    } else if (op == "*" && a.counted() != b.counted()) {
      const Value& c = a.counted() ? a : b;
      const intmax_t k = n(a.counted() ? b : a);
      if (k > kCountedLimit || k < -kCountedLimit) return unknown_value();
      r.counter = c.counter * k;
      r.bits = static_cast<uintmax_t>(n(c) * k);
    } else if (precedence(op) == 6 || precedence(op) == 7) {
      // The same multiple of c on both sides: compare what is added to it.
      if (a.counter != b.counter) return unknown_value();
      return arithmetic(op, signed_value(n(a)), signed_value(n(b)), false);
    } else {
      return unknown_value();
    }
    if (r.counter > kCountedLimit || r.counter < -kCountedLimit || !small(n(r))) {
      return unknown_value();
    }
    r.known = r.counter == 0;
    return r;
  }
  static constexpr intmax_t kCountedLimit = intmax_t(1) << 16;

  Value arithmetic(std::string_view op, Value a, Value b, bool skip) {
    if (a.counted() || b.counted()) return counted(op, a, b);
    const bool shift = op == "<<" || op == ">>";
    const bool is_unsigned = shift ? a.is_unsigned : (a.is_unsigned || b.is_unsigned);
    const bool comparison = precedence(op) == 6 || precedence(op) == 7;
    Value r{0, comparison ? false : is_unsigned, a.known && b.known};
    if (!r.known) return r;
    const uintmax_t x = a.bits, y = b.bits;
    const auto sx = static_cast<intmax_t>(x), sy = static_cast<intmax_t>(y);
    if (op == "*") {
      r.bits = x * y;
    } else if (op == "/" || op == "%") {
      if (y == 0) {
        if (!skip) fail("division by zero in #if");
        return unknown_value(is_unsigned);
      }
      if (is_unsigned) {
        r.bits = op == "/" ? x / y : x % y;
      } else if (sx == INTMAX_MIN && sy == -1) {
        r.bits = op == "/" ? x : 0;  // the compilers differ on the overflow
        r.known = op == "%";
      } else {
        r.bits = static_cast<uintmax_t>(op == "/" ? sx / sy : sx % sy);
      }
    } else if (op == "+") {
      r.bits = x + y;
    } else if (op == "-") {
      r.bits = x - y;
    } else if (shift) {
      // Counts outside 0..63 (or a negative signed value shifted left) are
      // answered differently by GCC and clang: unknown.
      if (b.negative() || y >= 64 || (op == "<<" && a.negative()))
        return unknown_value(is_unsigned);
      if (op == "<<") {
        r.bits = x << y;
      } else {
        r.bits = is_unsigned ? x >> y : static_cast<uintmax_t>(sx >> y);
      }
    } else if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      bool lt, eq = x == y;
      lt = is_unsigned ? x < y : sx < sy;
      const bool v = op == "<" ? lt : op == ">" ? (!lt && !eq) : op == "<=" ? (lt || eq) : !lt;
      r.bits = v ? 1 : 0;
    } else if (op == "==" || op == "!=") {
      r.bits = (x == y) == (op == "==") ? 1 : 0;
    } else if (op == "&") {
      r.bits = x & y;
    } else if (op == "^") {
      r.bits = x ^ y;
    } else if (op == "|") {
      r.bits = x | y;
    }
    return r;
  }

  Value unary(bool skip) {
    if (pos_ >= ts_.size()) {
      fail("#if expression ends too early");
      return unknown_value();
    }
    const std::string_view op = peek();
    if (op == "+" || op == "-" || op == "~" || op == "!") {
      ++pos_;
      Value v = unary(skip);
      if (op == "-") {
        v.bits = 0 - v.bits;
        v.counter = -v.counter;
      }
      if (op == "~") {
        v.bits = ~v.bits;
        v.counter = 0;  // not a sum any more
      }
      if (op == "!") v = Value{v.is_zero() ? 1u : 0u, false, v.known};
      return v;
    }
    if (op == "(") {
      ++pos_;
      Value v = comma(skip);
      if (peek() != ")") {
        fail("missing ')' in expression");
        return v;
      }
      ++pos_;
      return v;
    }
    const Token& t = ts_[pos_++];
    switch (t.kind) {
      case TokenKind::kNumber:
        return number(t.text);
      case TokenKind::kChar:
        return character(t.text);
      case TokenKind::kUnknown:
        return unknown_value();
      case TokenKind::kCounter:
        return Value{t.counter, false, false, 1};
      case TokenKind::kIdentifier:
        if (options_.cplusplus && t.text == "true") return signed_value(1);
        return signed_value(0);  // `false` and every name that is no macro
      default:
        fail("token \"" + t.text + "\" is not valid in preprocessor expressions");
        return unknown_value();
    }
  }

  Value number(const std::string& spelling) {
    std::string s;
    for (char c : spelling) {
      if (c != '\'') s.push_back(c);
    }
    int base = 10;
    size_t i = 0;
    if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      i = 2;
    } else if (s.size() > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
      base = 2;
      i = 2;
    } else if (s[0] == '0') {
      base = 8;
    }
    uintmax_t v = 0;
    bool overflow = false;
    const size_t digits_begin = i;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
        d = (c | 0x20) - 'a' + 10;
      } else {
        break;
      }
      if (d >= base) {
        fail("invalid digit in constant \"" + spelling + "\"");
        return unknown_value();
      }
      if (v > (UINTMAX_MAX - static_cast<uintmax_t>(d)) / static_cast<uintmax_t>(base))
        overflow = true;
      v = v * static_cast<uintmax_t>(base) + static_cast<uintmax_t>(d);
    }
    if (i == digits_begin && base != 8) {
      fail("invalid constant \"" + spelling + "\"");
      return unknown_value();
    }
    std::string suffix;
    for (size_t k = i; k < s.size(); ++k) suffix.push_back(static_cast<char>(s[k] | 0x20));
    bool is_unsigned = suffix.find('u') != std::string::npos;
    std::string rest;
    for (char c : suffix) {
      if (c != 'u') rest.push_back(c);
    }
    const bool ok_suffix = (rest.empty() || rest == "l" || rest == "ll" || rest == "z") &&
                           suffix.size() - rest.size() <= 1 &&
                           (suffix.empty() || suffix.front() == 'u' || suffix.back() == 'u' ||
                            suffix.find('u') == std::string::npos);
    if (!ok_suffix) {
      fail(suffix.find_first_of(".ep") != std::string::npos
               ? "floating constant in preprocessor expression"
               : "invalid suffix on integer constant \"" + spelling + "\"");
      return unknown_value();
    }
    if (overflow) {
      fail("integer constant is too large for its type");
      return unknown_value();
    }
    if (v > static_cast<uintmax_t>(INTMAX_MAX)) is_unsigned = true;
    return Value{v, is_unsigned, true};
  }

  Value character(const std::string& spelling) {
    const size_t quote = spelling.find('\'');
    const std::string prefix = spelling.substr(0, quote);
    if (spelling.size() < quote + 3 || spelling.back() != '\'') {
      fail("bad character constant " + spelling);
      return unknown_value();
    }
    const std::string body = spelling.substr(quote + 1, spelling.size() - quote - 2);
    std::optional<uintmax_t> c;
    size_t used = 0;
    if (body[0] != '\\') {
      if (static_cast<unsigned char>(body[0]) < 0x80) c = static_cast<unsigned char>(body[0]);
      used = 1;
    } else if (body.size() >= 2) {
      static constexpr std::string_view kFrom = "ntvbrfa\\?'\"";
      static constexpr std::string_view kTo = "\n\t\v\b\r\f\a\\?'\"";
      const char e = body[1];
      used = 2;
      if (kFrom.find(e) != std::string_view::npos) {
        c = static_cast<unsigned char>(kTo[kFrom.find(e)]);
      } else if (e >= '0' && e <= '7') {
        uintmax_t v = 0;
        size_t k = 1;
        while (k < body.size() && k < 4 && body[k] >= '0' && body[k] <= '7')
          v = v * 8 + (body[k++] - '0');
        used = k;
        if (v <= 0xff) c = v;
      } else if (e == 'x') {
        uintmax_t v = 0;
        size_t k = 2;
        while (k < body.size() && std::isxdigit(static_cast<unsigned char>(body[k])) && v <= 0xff) {
          const char h = body[k++];
          v = v * 16 + static_cast<uintmax_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        used = k;
        if (k > 2 && v <= 0xff) c = v;
      }
    }
    // Multi-character constants, UTF-8 ones (char or char8_t by the
    // language version) and bytes outside ASCII are left to the compiler.
    if (!c || used != body.size() || prefix == "u8" ||
        (prefix != "L" && !prefix.empty() && prefix != "u" && prefix != "U") ||
        ((prefix == "u" || prefix == "U") && *c >= 0x80)) {
      return unknown_value();
    }
    if (prefix == "L") return Value{*c, !options_.wchar_is_signed, true};
    if (prefix.empty() && options_.char_is_signed && *c >= 0x80)
      return signed_value(static_cast<intmax_t>(*c) - 256);
    return Value{*c, prefix.empty() ? !options_.char_is_signed : true, true};
  }

  const Tokens& ts_;
  const ConditionOptions& options_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

ConditionResult evaluate_condition(const Tokens& tokens, const ConditionOptions& options) {
  return Evaluator(tokens, options).run();
}

}  // namespace lexpack::preprocessor
