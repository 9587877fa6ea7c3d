// Evaluation of a #if / #elif condition after macro expansion, with the
// integer rules of C and C++ preprocessing: every value is intmax_t or
// uintmax_t, the usual arithmetic conversions, short-circuit operands not
// evaluated. Values it cannot know (TokenKind::kUnknown) make the answer
// unknown unless the operators around them decide it anyway (`0 && x`).
#pragma once

#include <cstdint>
#include <string>

#include "preprocessor/token.h"

namespace lexpack::preprocessor {

struct ConditionOptions {
  bool cplusplus = true;        // `true`/`false` are 1/0; `and`, `or`, `not`... are operators
  bool char_is_signed = true;   // the type of 'c' (GCC and clang: unsigned when __CHAR_UNSIGNED__)
  bool wchar_is_signed = true;  // the type of L'c' (unsigned when __WCHAR_UNSIGNED__)
};

struct ConditionResult {
  enum class State : uint8_t { kFalse, kTrue, kUnknown, kError };
  State state = State::kError;
  std::string error;  // kError: what the compiler would reject

  bool known() const { return state == State::kFalse || state == State::kTrue; }
};

// Evaluates the fully expanded tokens of a condition.
ConditionResult evaluate_condition(const Tokens& tokens, const ConditionOptions& options);

}  // namespace lexpack::preprocessor
