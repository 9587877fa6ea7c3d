// The walk over one entered file (Preprocessor::Run), shared by the
// directive driver (preprocessor.cpp) and the header cache's replay
// (header_replay.cpp). Private to this library.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "preprocessor/expression.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::preprocessor {
namespace detail {

// A conditional group being walked.
struct Frame {
  bool outer_active = false;  // the enclosing region is processed
  bool done = false;          // a branch was taken for certain: skip the rest
  bool any_fallback = false;  // a branch was taken as a fallback
  bool active = false;        // the current branch is processed
  bool fallback = false;      // ... as a fallback
};

}  // namespace detail

// The walk over one entered file; also answers the expander's questions
// about builtins and __has_include for the directive being evaluated.
class Preprocessor::Run : public ExpansionHooks {
 public:
  Run(Preprocessor& pp, FileHandle file, const FileContent& content, uint32_t depth)
      : pp_(pp),
        file_(file),
        content_(content),
        depth_(depth),
        expander_(pp.table_, pp.hide_sets_, *this) {}

  void process();

  BuiltinKind builtin_kind(std::string_view name) const override {
    if (pp_.options_.builtins.empty()) return BuiltinKind::kNone;
    auto it = pp_.options_.builtins.find(std::string(name));
    return it == pp_.options_.builtins.end() ? BuiltinKind::kNone : it->second;
  }
  std::optional<std::string> builtin_value(std::string_view name) override {
    if (name == "__LINE__") return std::to_string(line_);
    if (name == "__INCLUDE_LEVEL__") {
      pp_.recorder_.read_depth();
      return std::to_string(depth_);
    }
    return std::nullopt;
  }
  std::optional<intmax_t> builtin_query(std::string_view name, std::string_view arg) override {
    std::optional<intmax_t> answer = pp_.host_.builtin_query(name, arg);
    pp_.recorder_.query(name, arg, answer);
    return answer;
  }
  bool has_include(std::string_view name, bool angled, bool next) override {
    IncludeQuestion q;
    if (pp_.options_.keep_question_names) q.name = std::string(name);
    q.angled = angled;
    q.next = next;
    q.includer = file_;
    q.line = line_;
    q.answer = pp_.host_.resolve(name, angled, next, file_);
    const bool found = q.answer.has_value();
    if (own_) {
      HeaderOp op;
      op.kind = HeaderOp::Kind::kHasInclude;
      op.name = std::string(name);
      op.angled = angled;
      op.next = next;
      op.line = line_;
      if (found) op.answer = pp_.id_of(*q.answer);
      own_->ops.push_back(std::move(op));
    }
    pp_.result_.has_includes.push_back(std::move(q));
    return found;
  }

  // Does what `trace` recorded of this file's directives.
  // `answers`: of its includes and __has_include questions and those of its
  // nested traces, when applies() found them (else they are asked here),
  // from (*answers)[*next] on; *next moves past those it takes.
  void replay(const HeaderTrace& trace, const std::vector<std::optional<FileHandle>>* answers,
              size_t* next);

  // Enters `target` for an include (or for the command when includer is none).
  // Returns the header's trace when it was shared (recorded or replayed);
  // `known`: the trace a replayed includer found applies here, with its
  // answers from (*answers)[*next] on (*next moves past all of them,
  // whether it is replayed or not).
  static std::shared_ptr<const HeaderTrace> enter(
      Preprocessor& pp, FileHandle target, EntryKind how, std::optional<FileHandle> includer,
      uint32_t line, uint32_t depth, const HeaderTrace* known = nullptr,
      const std::vector<std::optional<FileHandle>>* answers = nullptr, size_t* next = nullptr);

 private:
  void inexact(Inexact kind, const std::string& message) {
    pp_.result_.inexact.push_back(
        {kind, std::string(content_.display_name) + ":" + std::to_string(line_) + ": " + message});
  }
  ConditionResult::State evaluate(const lexer::Directive& d);
  ConditionResult::State evaluate_if(std::string_view text);
  void enter_branch(detail::Frame* f, ConditionResult::State s);
  void leave_branch(detail::Frame* f);
  void define(const lexer::Directive& d);
  void include(const lexer::Directive& d);
  bool computed_name(std::string_view text, std::string* name, bool* angled);

  Preprocessor& pp_;
  const FileHandle file_;
  const FileContent content_;
  const uint32_t depth_;
  uint32_t line_ = 0;
  MacroExpander expander_;
  std::vector<detail::Frame> frames_;

 public:
  HeaderTrace* own_ = nullptr;  // this file's own effects are recorded here
};

}  // namespace lexpack::preprocessor
