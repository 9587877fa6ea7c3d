// The Preprocessor's side of the header cache: whether a recorded header
// evaluation applies to the state on entry, and the #pragma once states it
// reads, by the host's file keys so that translation units compare.
#include <algorithm>
#include <string>

#include "preprocessor/file_walk.h"
#include "preprocessor/preprocessor.h"

namespace lexpack::preprocessor {

void Preprocessor::use_header_cache(HeaderCache* cache, std::string_view context) {
  cache_ = cache;
  // The options decide which names are builtins: part of every key.
  std::vector<std::string> builtins;
  for (const auto& [name, kind] : options_.builtins) {
    builtins.push_back(name + '=' + std::to_string(int(kind)));
  }
  std::sort(builtins.begin(), builtins.end());
  std::string named = std::to_string(options_.max_include_depth);
  for (const std::string& b : builtins) named += ',' + b;
  named.push_back('\0');
  named.append(context);
  named.push_back('\0');
  if (cache) cache_context_ = cache->intern(named);
  ids_.clear();  // numbered by this cache from now on
  table_.set_observer(cache ? &recorder_ : nullptr);
}

uint32_t Preprocessor::id_of(FileHandle file) {
  if (file >= ids_.size()) ids_.resize(file + 1, kNotAsked);
  if (ids_[file] == kNotAsked) ids_[file] = cache_ ? cache_->intern(host_.file_key(file)) : 0;
  return ids_[file];
}

void Preprocessor::set_once(FileHandle file) {
  Once& once = once_[file];
  once.certain = once.certain || fallback_depth_ == 0;
  if (!cache_) return;
  const uint32_t id = id_of(file);
  if (id == 0) return;
  once_by_id_[id] = once.certain ? OnceState::kCertain : OnceState::kUncertain;
  recorder_.once_wrote(id);
}

OnceState Preprocessor::once_state(FileHandle file) const {
  auto it = once_.find(file);
  if (it == once_.end()) return OnceState::kNone;
  return it->second.certain ? OnceState::kCertain : OnceState::kUncertain;
}

bool Preprocessor::applies(const HeaderTrace& trace, FileHandle file, uint32_t depth,
                           std::vector<std::optional<FileHandle>>* answers) {
  const HeaderInputs& in = trace.inputs;
  if (depth + in.max_rel_depth > options_.max_include_depth) return false;
  if (in.reads_depth && depth != in.depth) return false;
  for (size_t i = 0; i < in.macros.size(); ++i) {
    const auto& [name, macro] = in.macros[i];
    const std::shared_ptr<const Macro>* now = table_.find_quiet({name, in.macro_hashes[i]});
    if (!same_macro(now ? now->get() : nullptr, macro.get())) return false;
  }
  for (const auto& [id, state] : in.once) {
    auto it = once_by_id_.find(id);
    if ((it == once_by_id_.end() ? OnceState::kNone : it->second) != state) return false;
  }
  for (const HeaderInputs::Query& q : in.queries) {
    if (host_.builtin_query(q.op, q.argument) != q.answer) return false;
  }
  answers->clear();
  answers->reserve(trace.answer_count);
  return same_answers(trace, file, answers);
}

bool Preprocessor::same_answers(const HeaderTrace& trace, FileHandle file,
                                std::vector<std::optional<FileHandle>>* answers) {
  // The same file found at the same place (a file's handle keeps where it
  // was first found in a TU, which its own quoted includes start from), for
  // nested headers too: the cache is shared by TUs with other include
  // directories, so where a nested header finds its includes is an input.
  for (const HeaderOp& op : trace.ops) {
    if (op.kind != HeaderOp::Kind::kInclude && op.kind != HeaderOp::Kind::kHasInclude) continue;
    std::optional<FileHandle> answer = host_.resolve(op.name, op.angled, op.next, file);
    if ((answer ? id_of(*answer) : 0) != op.answer) return false;
    answers->push_back(answer);
    if (op.kind == HeaderOp::Kind::kInclude && op.nested && answer &&
        !same_answers(*op.nested, *answer, answers)) {
      return false;
    }
  }
  return true;
}

void Preprocessor::note_replayed(const HeaderTrace& trace, uint32_t depth) {
  const HeaderInputs& in = trace.inputs;
  // What the replayed header read (its nested headers' reads among them),
  // as if it had been evaluated here.
  for (size_t h : in.macro_hashes) reads_.add(h);
  if (!recorder_.active()) return;
  for (size_t i = 0; i < in.macros.size(); ++i) {
    // An input that named no definition has its name kept for the whole
    // process (stable_macro_name): no need to look it up there again.
    const MacroName n(in.macros[i].first, in.macro_hashes[i]);
    if (in.macros[i].second) {
      recorder_.looked_up(n, table_.find_quiet(n));
    } else {
      recorder_.replayed_read(n, table_.find_quiet(n));
    }
  }
  for (const auto& [id, state] : in.once) recorder_.once_read(id, state);
  for (const HeaderInputs::Query& q : in.queries) recorder_.query(q.op, q.argument, q.answer);
  if (in.reads_depth) recorder_.read_depth();
  recorder_.entered(depth + in.max_rel_depth);
}

void Preprocessor::Run::replay(const HeaderTrace& trace,
                               const std::vector<std::optional<FileHandle>>* answers,
                               size_t* next) {
  for (const HeaderOp& op : trace.ops) {
    line_ = op.line;
    switch (op.kind) {
      case HeaderOp::Kind::kDefine:
        pp_.table_.set_uncertain(op.macro->name, false);
        pp_.table_.define(op.macro);
        break;
      case HeaderOp::Kind::kUndef:
        pp_.table_.undefine(op.name);
        pp_.table_.set_uncertain(op.name, false);
        break;
      case HeaderOp::Kind::kPragmaOnce:
        pp_.set_once(file_);
        break;
      case HeaderOp::Kind::kModule: {
        ModuleLine m = op.module;
        m.file = file_;
        pp_.result_.modules.push_back(std::move(m));
        break;
      }
      case HeaderOp::Kind::kInclude:
      case HeaderOp::Kind::kHasInclude: {
        IncludeQuestion q;
        if (op.computed || pp_.options_.keep_question_names) q.name = op.name;
        q.angled = op.angled;
        q.next = op.next;
        q.computed = op.computed;
        q.includer = file_;
        q.line = op.line;
        q.answer = answers && *next < answers->size()
                       ? (*answers)[(*next)++]
                       : pp_.host_.resolve(op.name, op.angled, op.next, file_);
        const std::optional<FileHandle> answer = q.answer;
        const bool include = op.kind == HeaderOp::Kind::kInclude;
        (include ? pp_.result_.includes : pp_.result_.has_includes).push_back(std::move(q));
        if ((answer ? pp_.id_of(*answer) : 0) != op.answer) {
          // The same header found elsewhere than where the recording found
          // it: what follows is not known, so the compiler must tell.
          inexact(
              Inexact::kComputedInclude,
              "\"" + op.name + "\" resolves differently than in the header's cached evaluation");
          return;
        }
        if (include) {
          enter(pp_, *answer, op.how, file_, op.line, depth_ + 1, op.nested.get(), answers, next);
        }
        break;
      }
    }
  }
}

}  // namespace lexpack::preprocessor
