// The header cache's store and the recorder of a header's inputs. A name is
// an input of a header when it is read before anything inside that header
// (or a header it entered) wrote it: each write takes a sequence number, each
// recording starts at one, and a read is an input of every recording that
// started after the name's last write and has not read it yet.
#include "preprocessor/header_cache.h"

#include <algorithm>

namespace lexpack::preprocessor {

uint32_t HeaderCache::intern(std::string_view key) {
  if (key.empty()) return 0;
  std::lock_guard lock(names_mu_);
  if (auto it = names_.find(key); it != names_.end()) return it->second;
  return names_.emplace(std::string(key), uint32_t(names_.size() + 1)).first->second;
}

std::vector<std::shared_ptr<const HeaderTrace>> HeaderCache::find(uint64_t key) const {
  std::lock_guard lock(mu_);
  auto it = traces_.find(key);
  if (it == traces_.end()) return {};
  return it->second;
}

void HeaderCache::add(uint64_t key, std::shared_ptr<const HeaderTrace> trace) {
  used(*trace);
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const HeaderTrace>>& v = traces_[key];
  if (v.size() < kMaxVariants) {
    v.push_back(std::move(trace));
    return;
  }
  auto oldest = std::min_element(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a->last_used.load() < b->last_used.load();
  });
  if ((*oldest)->last_used.load() < carries_.load()) *oldest = std::move(trace);
}

void HeaderCache::keep_only(const std::function<bool(std::string_view file_key)>& keep) {
  std::lock_guard names_lock(names_mu_);
  std::lock_guard lock(mu_);
  const uint32_t now = ++carries_;
  auto recent = [now](const HeaderTrace& t) { return t.last_used.load() + kUnusedCarries >= now; };
  // Each number's verdict, asked once: 0 not asked, 1 kept, 2 dropped.
  std::vector<std::string_view> by_number(names_.size() + 1);
  for (const auto& [name, number] : names_) by_number[number] = name;
  std::vector<uint8_t> verdict(by_number.size(), 0);
  auto file_kept = [&](uint32_t file) {
    if (file == 0 || file >= by_number.size()) return false;
    if (verdict[file] == 0) verdict[file] = keep(by_number[file]) ? 1 : 2;
    return verdict[file] == 1;
  };
  // A nested trace is shared by every includer's: judged once.
  std::unordered_map<const HeaderTrace*, bool> judged;
  std::function<bool(const HeaderTrace&)> nested_kept = [&](const HeaderTrace& trace) {
    if (auto it = judged.find(&trace); it != judged.end()) return it->second;
    bool kept = true;
    for (const HeaderOp& op : trace.ops) {
      if (op.kind != HeaderOp::Kind::kInclude || !op.nested) continue;
      kept = file_kept(op.answer) && nested_kept(*op.nested);
      if (!kept) break;
    }
    judged.emplace(&trace, kept);
    return kept;
  };
  for (auto it = traces_.begin(); it != traces_.end();) {
    std::vector<std::shared_ptr<const HeaderTrace>>& v = it->second;
    if (!file_kept(uint32_t(it->first))) {
      v.clear();
    } else {
      std::erase_if(v, [&](const auto& t) { return !recent(*t) || !nested_kept(*t); });
    }
    it = v.empty() ? traces_.erase(it) : std::next(it);
  }
}

size_t HeaderCache::trace_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, v] : traces_) n += v.size();
  return n;
}

size_t count_answers(const HeaderTrace& trace) {
  size_t n = 0;
  for (const HeaderOp& op : trace.ops) {
    if (op.kind != HeaderOp::Kind::kInclude && op.kind != HeaderOp::Kind::kHasInclude) continue;
    ++n;
    if (op.kind == HeaderOp::Kind::kInclude && op.nested && op.answer != 0) {
      n += op.nested->answer_count;
    }
  }
  return n;
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
  if (stack_.back().spoiled) {
    t.reset();
  } else {
    // Kept for the rest of the scan: at their size, not their growth's.
    t->ops.shrink_to_fit();
    t->inputs.macros.shrink_to_fit();
    t->inputs.macro_hashes.shrink_to_fit();
  }
  stack_.pop_back();
  // Writes before the next recording starts are older than it: their
  // numbers need no clearing.
  return t;
}

void TraceRecorder::spoil() {
  for (Active& a : stack_) a.spoiled = true;
}

template <typename Add>
void TraceRecorder::read(NameSequenceTable::Seqs& s, const Add& add) {
  for (size_t i = stack_.size(); i-- > 0;) {
    Active& a = stack_[i];
    if (a.start <= s.written || a.start <= s.seen) break;
    add(a);
  }
  if (stack_.back().start > s.seen) s.seen = stack_.back().start;
}

void TraceRecorder::looked_up(MacroName name, const std::shared_ptr<const Macro>* found) {
  macro_read(name, found, false);
}

void TraceRecorder::replayed_read(MacroName kept_name, const std::shared_ptr<const Macro>* found) {
  macro_read(kept_name, found, true);
}

void TraceRecorder::macro_read(MacroName name, const std::shared_ptr<const Macro>* found,
                               bool name_kept) {
  if (stack_.empty()) return;
  NameSequenceTable::Seqs& s = macro_seqs_.at(name.name, name.hash);
  read(s, [&](Active& a) {
    if (found) {
      a.trace->inputs.macros.emplace_back((*found)->name, *found);
    } else {
      if (s.kept.empty()) s.kept = name_kept ? name.name : stable_macro_name(name.name);
      a.trace->inputs.macros.emplace_back(s.kept, nullptr);
    }
    a.trace->inputs.macro_hashes.push_back(name.hash);
  });
}

void TraceRecorder::wrote(MacroName name) {
  if (stack_.empty()) return;
  macro_seqs_.at(name.name, name.hash).written = ++seq_;
}

namespace {

// A file number as a name of the once table.
std::string_view number_name(const uint32_t& file) {
  return {reinterpret_cast<const char*>(&file), sizeof file};
}

}  // namespace

void TraceRecorder::once_read(uint32_t file, OnceState state) {
  if (stack_.empty()) return;
  read(once_seqs_.at(number_name(file)),
       [&](Active& a) { a.trace->inputs.once.emplace_back(file, state); });
}

void TraceRecorder::once_wrote(uint32_t file) {
  if (stack_.empty()) return;
  once_seqs_.at(number_name(file)).written = ++seq_;
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
