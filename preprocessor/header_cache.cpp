// The header cache's store and the recorder of a header's inputs. A name is
// an input of a header when it is read before anything inside that header
// (or a header it entered) wrote it: each write takes a sequence number, each
// recording starts at one, and a read is an input of every recording that
// started after the name's last write.
#include "preprocessor/header_cache.h"

namespace lexpack::preprocessor {

std::vector<std::shared_ptr<const HeaderTrace>> HeaderCache::find(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = traces_.find(key);
  if (it == traces_.end()) return {};
  return it->second;
}

void HeaderCache::add(const std::string& key, std::shared_ptr<const HeaderTrace> trace) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const HeaderTrace>>& v = traces_[key];
  if (v.size() < kMaxVariants) v.push_back(std::move(trace));
}

bool same_macro(const Macro* a, const Macro* b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->name != b->name || a->function_like != b->function_like || a->variadic != b->variadic ||
      a->params != b->params || a->body.size() != b->body.size()) {
    return false;
  }
  for (size_t i = 0; i < a->body.size(); ++i) {
    const Token& x = a->body[i];
    const Token& y = b->body[i];
    if (x.kind != y.kind || x.space_before != y.space_before || x.hide != y.hide ||
        x.text != y.text) {
      return false;
    }
  }
  return true;
}

void TraceRecorder::begin(uint32_t depth) {
  Active a;
  a.start = ++seq_;
  a.trace = std::make_shared<HeaderTrace>();
  a.trace->inputs.depth = depth;
  stack_.push_back(std::move(a));
}

std::shared_ptr<HeaderTrace> TraceRecorder::end() {
  std::shared_ptr<HeaderTrace> t = std::move(stack_.back().trace);
  if (stack_.back().spoiled) t.reset();
  stack_.pop_back();
  if (stack_.empty()) {
    // Writes before the next recording starts are older than it anyway.
    last_write_.clear();
    last_once_write_.clear();
  }
  return t;
}

void TraceRecorder::spoil() {
  for (Active& a : stack_) a.spoiled = true;
}

void TraceRecorder::looked_up(std::string_view name, const std::shared_ptr<const Macro>* found) {
  if (stack_.empty()) return;
  uint64_t written = 0;
  if (!last_write_.empty()) {
    auto w = last_write_.find(name);
    if (w != last_write_.end()) written = w->second;
  }
  // Innermost first: the recordings that started after the last write are
  // the innermost ones, and one that has the name already means every
  // outer one has it too.
  for (size_t i = stack_.size(); i-- > 0;) {
    Active& a = stack_[i];
    if (a.start <= written) break;
    if (a.macros_seen.find(name) != a.macros_seen.end()) break;
    a.macros_seen.emplace(name);
    a.trace->inputs.macros.emplace_back(std::string(name),
                                        found ? *found : std::shared_ptr<const Macro>());
  }
}

void TraceRecorder::wrote(std::string_view name) {
  if (stack_.empty()) return;
  if (auto w = last_write_.find(name); w != last_write_.end()) {
    w->second = ++seq_;
  } else {
    last_write_.emplace(std::string(name), ++seq_);
  }
}

void TraceRecorder::once_read(const std::string& file_key, OnceState state) {
  if (stack_.empty()) return;
  uint64_t written = 0;
  if (auto w = last_once_write_.find(file_key); w != last_once_write_.end()) written = w->second;
  for (size_t i = stack_.size(); i-- > 0;) {
    Active& a = stack_[i];
    if (a.start <= written) break;
    if (a.once_seen.find(file_key) != a.once_seen.end()) break;
    a.once_seen.insert(file_key);
    a.trace->inputs.once.emplace_back(file_key, state);
  }
}

void TraceRecorder::once_wrote(const std::string& file_key) {
  if (stack_.empty()) return;
  if (auto w = last_once_write_.find(file_key); w != last_once_write_.end()) {
    w->second = ++seq_;
  } else {
    last_once_write_.emplace(file_key, ++seq_);
  }
}

void TraceRecorder::query(std::string_view op, std::string_view argument,
                          std::optional<intmax_t> answer) {
  for (Active& a : stack_) {
    a.trace->inputs.queries.push_back({std::string(op), std::string(argument), answer});
  }
}

void TraceRecorder::read_depth() {
  for (Active& a : stack_) a.trace->inputs.reads_depth = true;
}

void TraceRecorder::entered(uint32_t depth) {
  for (Active& a : stack_) {
    HeaderInputs& in = a.trace->inputs;
    if (depth > in.depth && depth - in.depth > in.max_rel_depth) {
      in.max_rel_depth = depth - in.depth;
    }
  }
}

}  // namespace lexpack::preprocessor
