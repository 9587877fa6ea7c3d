// The hit/miss flow of one compile. Fast path: closure memo -> action ->
// outputs (about one stat per dependency and probed directory). Slow path:
// search list + closure walk with the file table. Miss: run the compiler,
// self-check its depfile, store outputs of successful compiles only.
#include "ninja_integration/launcher/launcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include "base/byte_codec.h"
#include "base/depfile_flow.h"
#include "base/file_stat.h"
#include "base/file_util.h"
#include "base/process.h"
#include "base/relocation.h"
#include "cache/config.h"
#include "cache/remote/local_copy.h"
#include "cache/remote/remote_tier.h"
#include "cache/remote/upload_queue.h"
#include "cache/store.h"
#include "lexer/kernel.h"
#include "ninja_integration/closure/action_key.h"
#include "ninja_integration/closure/closure_memo.h"
#include "ninja_integration/closure/dependency_closure.h"
#include "ninja_integration/closure/file_state.h"
#include "ninja_integration/closure/key_relocation.h"
#include "ninja_integration/closure/presence_evaluation.h"
#include "ninja_integration/command/compile_command.h"
#include "ninja_integration/compiler/compiler_identity.h"
#include "ninja_integration/compiler/derived_search_list.h"
#include "ninja_integration/compiler/search_list.h"
#include "ninja_integration/launcher/action_payload.h"
#include "ninja_integration/launcher/build_record.h"
#include "ninja_integration/launcher/decision_log.h"
#include "ninja_integration/launcher/output_files.h"
#include "ninja_integration/launcher/self_check.h"
#include "ninja_integration/launcher/temp_files.h"
#include "ninja_integration/ninja/build_counts.h"
#include "ninja_integration/ninja/ninja_wrapper.h"
#include "ninja_integration/serve/serve_reads.h"

namespace lexpack::launcher {
namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

std::string current_dir() {
  std::string buf(4096, '\0');
  if (!::getcwd(buf.data(), buf.size())) return {};
  buf.resize(std::char_traits<char>::length(buf.c_str()));
  return buf;
}

std::string encode_args(const command::CompileCommand& c) {
  base::VarintWriter w;
  w.str(c.compiler);
  w.u64(c.args.size());
  for (const std::string& a : c.args) w.str(a);
  return w.take();
}

bool decode_args(std::string_view bytes, std::vector<std::string>* out) {
  base::VarintReader r(bytes);
  std::string compiler;
  uint64_t n = 0;
  if (!r.str(&compiler) || !r.u64(&n) || n > bytes.size()) return false;
  out->push_back(compiler);
  for (uint64_t i = 0; i < n; ++i) {
    std::string a;
    if (!r.str(&a)) return false;
    out->push_back(std::move(a));
  }
  return r.done();
}

// The closure of the latest compile of a translation unit, kept for explain
// only, when its files were too fresh for a closure memo (the memo then still
// describes some older build). Emptied when a memo is stored or used.
constexpr std::string_view kExplainMemoTable = "closure-explain";

// The arguments that decide the object: without the depfile options, which
// change only the depfile's name and targets, and the output name.
std::vector<std::string> object_arguments(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-MD" || a == "-MMD" || a == "-MP") continue;
    if (a == "-MF" || a == "-MT" || a == "-MQ" || a == "-o") {
      ++i;
      continue;
    }
    if (a.starts_with("-MF") || a.starts_with("-MT") || a.starts_with("-MQ") ||
        (a.starts_with("-o") && !a.starts_with("-obj"))) {  // not clang's -objcmt-...
      continue;
    }
    out.emplace_back(a);
  }
  return out;
}

class Launcher {
 public:
  Launcher(const std::vector<std::string>& argv, bool explain) : argv_(argv), explain_(explain) {}
  LaunchResult run();

 private:
  LaunchResult passthrough(std::string_view why);
  // Counters tell what builds did: explain (and warm, which runs it) compiles
  // nothing and counts nothing.
  void count(std::string_view name, int64_t delta = 1) {
    ninja::note_build_count(name, delta);  // this build's own summary, even read-only
    if (store_ && !read_only_ && !explain_) store_->add_counter(name, delta);
  }
  void note(std::string line) {
    log_.write(line);
    if (explain_) result_.explanation += line + "\n";
  }
  bool open_store();
  bool slow_path();  // fills list_, closure_, key_
  // A valid remote entry for `key`, written into the local store; its record.
  std::optional<cache::ActionRecord> fetch_remote(const cache::Hash128& key);
  // `outside`: the files outside the scan its payload checked (for the log).
  std::optional<LaunchResult> serve_hit(const cache::ActionRecord& action, size_t outside);
  LaunchResult compile_and_store();
  std::string own_depfile_path();
  std::string describe_arg_change();
  void adopt_build_command();
  // The explain memo of `tu` holds only while no closure memo is newer.
  void drop_explain_memo(const cache::Hash128& tu);

  // Microseconds since the launcher started, for the decision log.
  int64_t elapsed_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 start_)
        .count();
  }

  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<std::string> argv_;
  bool explain_;
  DecisionLog log_;
  LaunchResult result_;
  command::CompileCommand cmd_;
  std::string cwd_;
  std::unique_ptr<cache::Store> store_;
  bool read_only_ = false;
  compiler::CompilerIdentity identity_;
  const lexer::Kernel* kernel_ = nullptr;
  std::unique_ptr<closure::FileStates> files_;
  compiler::SearchList list_;
  closure::Closure closure_;
  bool have_closure_ = false;
  cache::Hash128 key_;  // before the date
  bool uses_date_ = false;
  std::string miss_cause_;  // explain: what changed since the last compile
  std::string base_dir_;    // config base_dir (empty: off)
  std::unique_ptr<cache::remote::RemoteTier> remote_;  // null: no remote configured
  std::vector<std::string> prefix_;    // prefix_command's words (a miss runs through it)
  closure::KeyRelocation relocation_;  // set by slow_path
};

// Paths in `bytes` as this checkout names them (a no-op on text stored
// without relocation).
bool restore_paths(std::string_view bytes, const std::string& cwd, std::string* out) {
  if (bytes.find(base::kRelocationMarker) == std::string_view::npos) {
    out->assign(bytes);
    return true;
  }
  return base::restore_text(bytes, cwd, out);
}

// A relocated depfile starts with the compiler whose line wrapping it has,
// so it is wrapped again once its paths name this checkout.
constexpr std::string_view kGccFlow = "\x01lexpack-flow:gcc\x01";
constexpr std::string_view kClangFlow = "\x01lexpack-flow:clang\x01";

bool relocate_depfile(std::string_view bytes, const std::string& base_dir, const std::string& cwd,
                      std::string* out) {
  std::string text;
  if (!base::relocate_text(bytes, base_dir, cwd, &text)) return false;
  base::DepfileFlow flow = base::detect_depfile_flow(bytes);
  *out = flow == base::DepfileFlow::kGcc     ? std::string(kGccFlow) + text
         : flow == base::DepfileFlow::kClang ? std::string(kClangFlow) + text
                                             : text;
  return true;
}

bool restore_depfile(std::string_view bytes, const std::string& cwd, std::string* out) {
  base::DepfileFlow flow = base::DepfileFlow::kNone;
  if (bytes.substr(0, kGccFlow.size()) == kGccFlow) {
    flow = base::DepfileFlow::kGcc;
    bytes.remove_prefix(kGccFlow.size());
  } else if (bytes.substr(0, kClangFlow.size()) == kClangFlow) {
    flow = base::DepfileFlow::kClang;
    bytes.remove_prefix(kClangFlow.size());
  }
  if (!restore_paths(bytes, cwd, out)) return false;
  if (flow != base::DepfileFlow::kNone) *out = base::reflow_depfile(*out, flow);
  return true;
}

// True when `bytes` names a path under `dir` (whole component).
bool names_dir(std::string_view bytes, std::string_view dir) {
  for (size_t at = bytes.find(dir); at != std::string_view::npos; at = bytes.find(dir, at + 1)) {
    size_t end = at + dir.size();
    if (end == bytes.size() || bytes[end] == '/' || bytes[end] == '\0') return true;
  }
  return false;
}

LaunchResult Launcher::passthrough(std::string_view why) {
  note("passthrough: " + std::string(why));
  LaunchResult r;
  r.exec_compiler = true;
  r.explanation = result_.explanation;
  return r;
}

bool Launcher::open_store() {
  cache::StoreOptions options;
  auto opened = cache::Store::open(options);
  if (!opened.ok()) {
    note("cache not writable (" + opened.message() + "), trying read-only");
    options.read_only = true;
    opened = cache::Store::open(options);
    if (!opened.ok()) {
      note("cache unavailable: " + opened.message());
      return false;
    }
    read_only_ = true;
  }
  store_ = std::move(opened.value());
  return true;
}

LaunchResult Launcher::run() {
  cmd_ = command::parse_compile_command(argv_);
  log_.set_subject(cmd_.source.empty() ? cmd_.compiler : cmd_.source);
  if (!explain_ && env_flag("LEXPACK_DISABLE")) return passthrough("LEXPACK_DISABLE is set");
  if (!cmd_.uncacheable.empty()) {
    if (open_store()) count("uncacheable_" + cmd_.uncacheable);
    return passthrough(
        "uncacheable: " + cmd_.uncacheable +
        (cmd_.uncacheable_detail.empty() ? "" : " (" + cmd_.uncacheable_detail + ")"));
  }
  cwd_ = current_dir();
  if (cwd_.empty()) return passthrough("cannot read the working directory");
  if (!open_store()) return passthrough("no cache");
  {
    cache::Config config = cache::load_config("");
    base_dir_ = config.base_dir;
    for (size_t i = 0; i < config.prefix_command.size();) {
      size_t j = config.prefix_command.find_first_of(" \t", i);
      if (j == std::string::npos) j = config.prefix_command.size();
      if (j > i) prefix_.push_back(config.prefix_command.substr(i, j - i));
      i = j + 1;
    }
    std::string error;
    remote_ = cache::remote::RemoteTier::open(config, &error);
    if (!error.empty()) note(error);
  }
  if (explain_) adopt_build_command();

  compiler::RemoteAnswers answers;
  answers.tier = remote_.get();
  answers.count = [this](std::string_view name, int64_t delta) { count(name, delta); };
  auto identity =
      compiler::compiler_identity(store_.get(), cmd_.compiler, remote_ ? &answers : nullptr);
  if (!answers.note.empty()) note(answers.note);
  if (!identity.ok()) return passthrough("compiler identity: " + identity.message());
  identity_ = identity.value();
  if (identity_.kind == compiler::CompilerKind::kUnknown) {
    count("uncacheable_unsupported_compiler");
    return passthrough("not gcc or clang: " + identity_.program);
  }
  if (explain_) note("compiler: " + identity_.program + " (" + identity_.version + ")");
  std::string err;
  kernel_ = lexer::default_kernel(&err);
  if (!kernel_) return passthrough("lexer: " + err);
  files_ = std::make_unique<closure::FileStates>(read_only_ ? nullptr : store_.get(), kernel_);

  // Fast path: the closure memo of this translation unit.
  cache::Hash128 tu = closure::translation_unit_key(identity_, cmd_, cwd_, base_dir_);
  bool have_key = false;
  // Checked where the index holds it: copying a memo of a few hundred paths
  // into fresh heap pages cost more than reading it.
  cache::Hash128 memo_key;
  bool memo_uses_date = false, memo_valid = false;
  std::string changed;
  std::vector<closure::MemoRefresh> refresh;
  std::string memo_copy;  // only when it must be checked again or refreshed
  bool have_memo = store_->visit_memo("closure", tu.hex(), [&](std::string_view bytes) {
    memo_valid = closure::check_encoded_closure_memo(bytes, nullptr, &memo_key, &memo_uses_date,
                                                     &changed, nullptr, nullptr, &refresh);
    if (memo_valid &&
        (changed.rfind("changed: ", 0) == 0 || (changed.empty() && !refresh.empty()))) {
      memo_copy.assign(bytes);
    }
  });
  if (!memo_copy.empty()) {
    // A dependency whose signature moved may hold the same bytes (a fresh
    // configure rewrites generated headers): checked again with content
    // hashes from the file table (outside the index read above), and the
    // memo takes the new signatures so the next hit is plain again.
    if (!changed.empty()) {
      closure::ContentLookup content =
          [this](std::string_view path,
                 const base::StatSignature& sig) -> std::optional<cache::Hash128> {
        std::string p(path);
        base::Result<cache::Hash128> h = files_->content_hash(p, base::absolute_path(p, cwd_), sig);
        if (!h.ok()) return std::nullopt;
        return h.value();
      };
      memo_valid = closure::check_encoded_closure_memo(
          memo_copy, nullptr, &memo_key, &memo_uses_date, &changed, nullptr, &content, &refresh);
    }
    closure::ClosureMemo memo;
    if (memo_valid && changed.empty() && !read_only_ && !explain_ &&
        closure::decode_closure_memo(memo_copy, &memo) &&
        closure::apply_memo_refresh(refresh, base::now_ns(), &memo)) {
      store_->put_memo("closure", tu.hex(), closure::encode_closure_memo(memo));
    }
  }
  // A newer closure than the memo's, when the latest compile could not leave
  // a memo: what changed since then is what makes this compile miss now.
  std::string explain_changed;
  bool have_explain_memo = false;
  if (explain_) {
    store_->visit_memo(kExplainMemoTable, tu.hex(), [&](std::string_view bytes) {
      cache::Hash128 k;
      bool d = false;
      have_explain_memo =
          !bytes.empty() && closure::check_encoded_closure_memo(bytes, &k, &d, &explain_changed);
    });
  }
  if (have_memo && memo_valid) {
    if (changed.empty()) {
      key_ = memo_key;
      uses_date_ = memo_uses_date;
      have_key = true;
      if (!explain_) drop_explain_memo(tu);
    } else {
      miss_cause_ = have_explain_memo ? explain_changed : changed;
      if (!miss_cause_.empty()) note("closure memo out of date: " + miss_cause_);
    }
  } else if (have_explain_memo) {
    miss_cause_ = explain_changed;
    if (!miss_cause_.empty()) note("closure memo out of date: " + miss_cause_);
  } else if (!have_memo && explain_) {
    miss_cause_ = "never compiled with these arguments";
    note("no closure memo for this command (first compile, or arguments changed)");
  }
  if (!have_key) {
    if (!slow_path()) return passthrough(result_.error);
    if (closure_.uses_time) {
      count("uncacheable_time_macro");
      return passthrough("uncacheable: __TIME__ or __TIMESTAMP__ in the closure");
    }
    if (!closure_.unsure.empty()) {
      count("uncacheable_unsure_closure");
      return passthrough("uncacheable: " + closure_.unsure);
    }
    if (!read_only_ && !explain_) {
      if (std::optional<std::string> memo = closure::encode_closure_memo(closure_, list_, key_)) {
        store_->put_memo("closure", tu.hex(), *memo);
        drop_explain_memo(tu);
      } else {
        std::string latest = closure::encode_explain_memo(closure_, list_, key_);
        if (!latest.empty()) store_->put_memo(kExplainMemoTable, tu.hex(), latest);
      }
    }
  }
  if (explain_ && !base_dir_.empty() && !have_closure_ && !slow_path()) {
    return passthrough(result_.error);
  }
  cache::Hash128 key = uses_date_ ? closure::dated_key(key_) : key_;
  if (explain_) note("action key: " + key.hex());

  std::string why_miss = "no cached result for this key";
  std::optional<cache::ActionRecord> action = store_->get_action(key);
  if (!action && remote_ && !explain_ && !read_only_) action = fetch_remote(key);
  if (action) {
    std::string changed;
    size_t outside = 0;
    if (action->exit_code != 0 ||
        !check_encoded_payload(action->payload, files_.get(), cwd_, &changed, &outside)) {
      why_miss = "cached entry unreadable";
    } else if (!changed.empty()) {
      why_miss = "file outside the scan " + changed;
    } else if (explain_) {
      note("cached entry: " + std::to_string(outside) + " files outside the scan checked");
      note("would hit");
      LaunchResult r;
      r.explanation = result_.explanation;
      return r;
    } else if (std::optional<LaunchResult> hit = serve_hit(*action, outside)) {
      note_build_use(key);
      return *hit;
    } else {
      why_miss = "cached outputs unavailable";
    }
  }
  if (explain_) {
    if (why_miss == "no cached result for this key") {
      why_miss += " (" +
                  (miss_cause_.empty() ? "nothing changed since the last compile: its result "
                                         "was not stored, or evicted since"
                                       : miss_cause_) +
                  ")";
    }
    note("would miss: " + why_miss);
    std::string args = describe_arg_change();
    if (!args.empty()) note(args);
    LaunchResult r;
    r.explanation = result_.explanation;
    return r;
  }
  note("miss: " + why_miss);
  if (!have_closure_ && !slow_path()) return passthrough(result_.error);
  // has_computed_include: one the evaluation did not expand, whose files
  // only the depfile names (and -MMD leaves system headers out of it).
  if (cmd_.wants_depfile && closure_.has_computed_include) {
    for (const std::string& a : cmd_.args) {
      if (a == "-MMD") return passthrough("computed include and -MMD: system headers unseen");
    }
  }
  return compile_and_store();
}

bool Launcher::slow_path() {
  auto list = compiler::search_list_for(store_.get(), identity_, cmd_, cwd_);
  if (!list.ok()) {
    result_.error = "search list: " + list.message();
    return false;
  }
  list_ = list.value();
  closure::CompilerPresenceEvaluator presence(read_only_ ? nullptr : store_.get(), identity_, cmd_,
                                              cwd_, kernel_);
  auto closure =
      closure::compute_closure(files_.get(), cmd_, list_, identity_.kind, cwd_, &presence);
  if (!closure.ok()) {
    result_.error = "dependency scan: " + closure.message();
    return false;
  }
  closure_ = std::move(closure.value());
  have_closure_ = true;
  relocation_ = closure::decide_relocation(cmd_, cwd_, closure_, base_dir_);
  key_ = closure::action_key(identity_, cmd_, cwd_, closure_, relocation_);
  uses_date_ = closure_.uses_date;
  if (explain_ && !base_dir_.empty()) {
    note(relocation_.relocated
             ? "relocatable: paths under " + base_dir_ + " are keyed relative to " + cwd_
             : "not relocatable: " + relocation_.not_relocatable);
  }
  if (explain_) {
    note("closure: " + std::to_string(closure_.files.size()) + " files, " +
         std::to_string(closure_.failed_probes.size()) + " missing candidates");
    if (closure_.presence_evaluated) {
      note("__has_include reached through macros: answered by evaluating the conditionals");
    }
    if (closure_.computed_evaluated) {
      note("computed includes: expanded by evaluating the translation unit, in the closure");
    } else if (closure_.has_computed_include) {
      note("computed includes: not expanded exactly, their files checked one by one on a hit");
    }
  }
  return true;
}

std::optional<cache::ActionRecord> Launcher::fetch_remote(const cache::Hash128& key) {
  std::string what;
  auto counter = [this](std::string_view name, int64_t delta) { count(name, delta); };
  std::optional<cache::remote::RemoteEntry> entry = remote_->fetch(key, counter, &what);
  if (!what.empty()) note(what);
  if (!entry) return std::nullopt;
  return cache::remote::store_entry(*store_, key, *entry);
}

std::optional<LaunchResult> Launcher::serve_hit(const cache::ActionRecord& action, size_t outside) {
  auto blob = [this](const cache::BlobId& id) -> std::optional<std::string_view> {
    if (id.is_zero()) return std::string_view();
    return store_->get_blob(id);
  };
  std::optional<std::string_view> out = blob(action.stdout_blob);
  std::optional<std::string_view> err = blob(action.stderr_blob);
  if (!out || !err) return std::nullopt;
  // Text stored relocated comes back naming this checkout's paths.
  std::string out_text, err_text, depfile_text;
  if (!restore_paths(*out, cwd_, &out_text) || !restore_paths(*err, cwd_, &err_text)) {
    note("cached messages hold a malformed relocated path");
    return std::nullopt;
  }
  struct Pending {
    std::string path;
    std::string_view bytes;
    cache::BlobId blob;  // zero: bytes not stored as they are written (the depfile)
  };
  std::vector<Pending> writes;
  bool have_object = false, have_depfile = false;
  for (const auto& o : action.outputs) {
    std::optional<std::string_view> bytes = store_->get_blob(o.blob);
    if (!bytes) {
      note("blob of " + o.role + " missing from the cache");
      return std::nullopt;
    }
    if (o.role == "object") {
      writes.push_back({cmd_.output, *bytes, o.blob});
      have_object = true;
    } else if (o.role == "dwo" && cmd_.split_dwarf) {
      writes.push_back({cmd_.dwo_output, *bytes, o.blob});
    } else if (o.role == "depfile" && cmd_.wants_depfile) {
      if (!restore_depfile(*bytes, cwd_, &depfile_text)) {
        note("cached depfile holds a malformed relocated path");
        return std::nullopt;
      }
      writes.push_back({cmd_.depfile, depfile_text, {}});
      have_depfile = true;
    }
  }
  if (!have_object || (cmd_.wants_depfile && !have_depfile)) return std::nullopt;
  // The objects written are vouched for in the file table by the signature
  // they have now, so that a link reading them right after does not hash
  // them again (their content is the blob's id).
  std::vector<cache::Store::FileWrite> vouched_files;
  for (const Pending& w : writes) {
    std::string error;
    std::optional<base::StatSignature> vouched;
    if (!touch_if_identical(w.path, w.bytes) &&
        !write_file_atomic(w.path, w.bytes, &error, 0666, w.blob.is_zero() ? nullptr : &vouched)) {
      note("cannot write output: " + error);
      return std::nullopt;
    }
    if (vouched) {
      vouched_files.push_back({base::normal_path(w.path, cwd_), {*vouched, w.blob, {}}});
    }
  }
  if (!vouched_files.empty() && !read_only_) store_->put_records(vouched_files, {});
  count("hits");
  count("time_saved_us", int64_t(action.compile_time_us));
  note("hit (" + std::to_string(elapsed_us()) + " us, " + std::to_string(outside) +
       " files outside the scan checked)");
  LaunchResult r;
  r.out = std::move(out_text);
  r.err = std::move(err_text);
  return r;
}

LaunchResult Launcher::compile_and_store() {
  std::vector<std::string> run_argv = argv_;
  std::string own_depfile;
  if (!cmd_.wants_depfile) {
    own_depfile = own_depfile_path();
    for (const char* a : {"-MD", "-MF"}) run_argv.push_back(a);
    run_argv.push_back(own_depfile);
  }
  std::optional<TempFileGuard> depfile_guard;
  if (!own_depfile.empty()) depfile_guard.emplace(own_depfile);
  // Served reads: the compiler reads the closure from the packs, so the bytes
  // it compiles are the bytes hashed into the key.
  serve::ServedReads served;
  bool serving = false;
  if (env_flag("LEXPACK_SERVE_READS") && !read_only_) {
    std::string plugin = ninja::find_plugin(ninja::self_executable());
    if (plugin.empty()) {
      note("reads not served: the plugin was not found");
    } else if (base::Status prepared = served.prepare(store_.get(), closure_, cwd_, plugin);
               !prepared.ok()) {
      note("reads not served: " + prepared.message());
    } else {
      serving = true;
      note("serving reads: " + std::to_string(served.files()) + " files (" +
           std::to_string(served.stored()) + " newly stored), " + std::to_string(served.missing()) +
           " missing paths, " + std::to_string(served.skipped()) + " left to the filesystem");
    }
  }
  // prefix_command (distcc, icecc) runs the compile elsewhere; the key and
  // the outputs are the same.
  run_argv.insert(run_argv.begin(), prefix_.begin(), prefix_.end());
  int64_t before_compile = elapsed_us();
  base::ProcessResult p = base::run_captured(run_argv, false, serving ? &served.env() : nullptr);
  if (serving && (!p.started || p.exit_code != 0)) {
    // Whatever went wrong, serving must not be why a compile fails: the
    // compiler runs again reading the filesystem, and that run is the answer.
    note("compile with served reads failed (exit " + std::to_string(p.exit_code) +
         "); running it again without");
    count("served_compile_retried");
    p = base::run_captured(run_argv, false, nullptr);
    serving = false;
  }
  int64_t after_compile = elapsed_us();
  int64_t check_us = 0;
  LaunchResult r;
  r.exit_code = p.exit_code;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  auto finish = [&](std::string why) {
    if (!own_depfile.empty()) ::unlink(own_depfile.c_str());
    if (!why.empty()) note(why);
    return r;
  };
  if (!p.started) {
    r.error = p.error;
    r.exit_code = 127;
    return finish("");
  }
  if (p.exit_code != 0) {
    count("compile_failed");
    return finish("compiler failed (exit " + std::to_string(p.exit_code) + "), not cached");
  }
  count("misses");
  if (read_only_) return finish("cache read-only, result not stored");

  const std::string& depfile = own_depfile.empty() ? cmd_.depfile : own_depfile;
  base::Result<std::string> depfile_bytes = base::read_file(depfile);
  if (!depfile_bytes.ok()) return finish("not stored: " + depfile_bytes.message());
  SelfCheckResult check = self_check(*depfile_bytes, closure_, list_, files_.get(), cwd_);
  check_us = elapsed_us() - after_compile;
  if (!check.disagreements.empty()) {
    count("scanner_disagreements", int64_t(check.disagreements.size()));
    for (const std::string& d : check.disagreements) {
      note("scanner disagreement: the compiler read " + d + " which the scan of " + cmd_.source +
           " did not reach");
    }
  }
  if (!check.unsure.empty()) return finish("not stored: " + check.unsure);
  for (const closure::ClosureFile& f : closure_.files) {
    base::StatSignature now;
    std::string path(f.path);
    if (!base::stat_file(path, &now) || !(now == f.stat)) {
      return finish("not stored: " + path + " changed during the compile");
    }
  }
  // What the plugin served came unchecked from the packs: prove it now.
  if (std::string why; serving && !served.served_bytes_intact(&why)) {
    count("served_bytes_changed");
    return finish("not stored: " + why);
  }

  // A relocated key is shared by other checkouts: nothing stored under it may
  // name this one, except text written back relocated.
  std::string stored_depfile = *depfile_bytes, stored_out = r.out, stored_err = r.err;
  if (relocation_.relocated) {
    if (!check.payload.extra_files.empty() || !check.payload.present_probes.empty() ||
        !check.payload.absent_probes.empty()) {
      count("not_relocatable");
      return finish("not stored: the compiler read files outside the scan (relocated key)");
    }
    if (!relocate_depfile(*depfile_bytes, base_dir_, cwd_, &stored_depfile) ||
        !base::relocate_text(r.out, base_dir_, cwd_, &stored_out) ||
        !base::relocate_text(r.err, base_dir_, cwd_, &stored_err)) {
      count("not_relocatable");
      return finish("not stored: the depfile or messages name " + base_dir_ +
                    " in a form that cannot be relocated");
    }
  }

  cache::ActionRecord action;
  action.exit_code = 0;
  // CPU time, not wall time: with every core busy the wall time of one
  // compile grows with the others, and a sum of those exceeds the build.
  action.compile_time_us = p.cpu_us;
  action.payload = encode_payload(check.payload);
  std::string err;
  auto put = [&](std::string_view bytes, cache::BlobId* id, bool aligned) -> bool {
    if (bytes.empty()) return true;
    cache::BlobOptions options;
    options.page_aligned = aligned;
    auto stored = store_->put_blob(bytes, options);
    if (!stored.ok()) {
      err = stored.message();
      return false;
    }
    *id = stored.value();
    return true;
  };
  base::Result<std::string> object_bytes = base::read_file(cmd_.output);
  if (!object_bytes.ok()) return finish("not stored: " + object_bytes.message());
  if (relocation_.relocated && names_dir(*object_bytes, base_dir_)) {
    count("not_relocatable");
    return finish("not stored: the object names a path under " + base_dir_ +
                  " (not relocatable; add -ffile-prefix-map=" + base_dir_ + "=.)");
  }
  cache::ActionRecord::Output object{"object", {}};
  if (!put(*object_bytes, &object.blob, false) || object.blob.is_zero()) {
    return finish("not stored: " + err);
  }
  action.outputs.push_back(object);
  base::Result<std::string> dwo_bytes =
      cmd_.split_dwarf ? base::read_file(cmd_.dwo_output) : base::Status::error("no .dwo");
  if (dwo_bytes.ok() && relocation_.relocated && names_dir(*dwo_bytes, base_dir_)) {
    count("not_relocatable");
    return finish("not stored: the .dwo names a path under " + base_dir_);
  }
  if (dwo_bytes.ok()) {
    cache::ActionRecord::Output dwo{"dwo", {}};
    if (!put(*dwo_bytes, &dwo.blob, false)) return finish("not stored: " + err);
    if (!dwo.blob.is_zero()) action.outputs.push_back(dwo);
  }
  if (cmd_.wants_depfile) {
    cache::ActionRecord::Output dep{"depfile", {}};
    if (!put(stored_depfile, &dep.blob, false) || dep.blob.is_zero()) {
      return finish("not stored: empty depfile");
    }
    action.outputs.push_back(dep);
  }
  if (!put(stored_out, &action.stdout_blob, false) ||
      !put(stored_err, &action.stderr_blob, false)) {
    return finish("not stored: " + err);
  }
  cache::Hash128 key = uses_date_ ? closure::dated_key(key_) : key_;
  base::Status stored = store_->put_action(key, action);
  if (!stored.ok()) return finish("not stored: " + stored.message());
  note_build_use(key);
  store_->put_memo("last", base::absolute_path(cmd_.output, cwd_), encode_args(cmd_));
  if (remote_ && cache::remote::queue_upload(key)) {
    note("queued for the build's uploader");
  } else if (remote_) {
    // Not under `lexpack ninja`: upload here, after the outputs are in place.
    cache::remote::RemoteEntry entry;
    entry.compile_time_us = action.compile_time_us;
    entry.payload = action.payload;
    entry.outputs.push_back({"object", std::move(*object_bytes)});
    if (dwo_bytes.ok()) entry.outputs.push_back({"dwo", std::move(*dwo_bytes)});
    if (cmd_.wants_depfile) entry.outputs.push_back({"depfile", stored_depfile});
    entry.out = stored_out;
    entry.err = stored_err;
    std::string what;
    remote_->upload(
        key, entry, [this](std::string_view n, int64_t d) { count(n, d); }, &what);
    if (!what.empty()) note(what);
  }
  return finish("stored " + key.hex() + " (lexpack " +
                std::to_string(before_compile + elapsed_us() - after_compile) + " us: scan " +
                std::to_string(before_compile) + ", check " + std::to_string(check_us) +
                ", compiler " + std::to_string(p.elapsed_us) + " us)");
}

// The depfile lexpack asks for when the command has none: in the cache's
// tmp/, which clear and gc sweep if this process is killed, never beside the
// output, where nothing would clean it; the system's temporary directory for
// a read-only cache.
std::string Launcher::own_depfile_path() {
  if (store_ && !read_only_) {
    auto made = store_->make_temp(".d");
    if (made.ok()) return *made;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lexpack-XXXXXX.d";
  int fd = ::mkostemps(pattern.data(), 2, O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return pattern;
}

void Launcher::drop_explain_memo(const cache::Hash128& tu) {
  bool present = store_->visit_memo(kExplainMemoTable, tu.hex(),
                                    [&](std::string_view bytes) { present = !bytes.empty(); });
  if (present) store_->put_memo(kExplainMemoTable, tu.hex(), "");
}

// A command from compile_commands.json lacks the depfile options the build
// passes (CMake leaves them out there): when the last stored compile of this
// output differs from it only in those, that compile is the one explained.
void Launcher::adopt_build_command() {
  std::optional<std::string> last =
      store_->get_memo("last", base::absolute_path(cmd_.output, cwd_));
  std::vector<std::string> before;
  if (!last || !decode_args(*last, &before)) return;
  std::vector<std::string> now = {cmd_.compiler};
  now.insert(now.end(), cmd_.args.begin(), cmd_.args.end());
  if (before == now || object_arguments(before) != object_arguments(now)) return;
  note("explaining the build's compile of this output (it differs only in depfile options)");
  argv_ = before;
  cmd_ = command::parse_compile_command(argv_);
}

std::string Launcher::describe_arg_change() {
  std::optional<std::string> last =
      store_->get_memo("last", base::absolute_path(cmd_.output, cwd_));
  std::vector<std::string> before;
  if (!last || !decode_args(*last, &before)) return "no earlier compile of this output is known";
  std::vector<std::string> now = {cmd_.compiler};
  now.insert(now.end(), cmd_.args.begin(), cmd_.args.end());
  if (before == now) return "arguments unchanged since the last stored compile of this output";
  // Depfile options and the output name do not change the object.
  before = object_arguments(before);
  now = object_arguments(now);
  if (before == now) return "arguments unchanged since the last stored compile of this output";
  std::string out = "arguments changed since the last stored compile of this output:";
  for (const std::string& a : before) {
    if (std::find(now.begin(), now.end(), a) == now.end()) out += " -[" + a + "]";
  }
  for (const std::string& a : now) {
    if (std::find(before.begin(), before.end(), a) == before.end()) out += " +[" + a + "]";
  }
  if (out.back() == ':') out += " their order";
  return out;
}

}  // namespace

LaunchResult launch(const std::vector<std::string>& argv, bool explain) {
  Launcher launcher(argv, explain);
  return launcher.run();
}

}  // namespace lexpack::launcher
