// The hit/miss flow of one compile. Fast path: closure memo -> action ->
// outputs (about one stat per dependency and probed directory). Slow path:
// search list + closure walk with the file table. Miss: run the compiler,
// self-check its depfile, store outputs of successful compiles only.
#include "launcher/launcher.h"

#include "base/heap_pages.h"
#include "closure/closure_snapshot.h"
#include "launcher/launcher_impl.h"

namespace lexpack::launcher {
namespace detail {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

LaunchResult Launcher::passthrough(std::string_view why) {
  if (early_) return early_result(why);  // the compiler runs already
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
  cmd_ = compiler::parse_compile_command(argv_);
  log_.set_subject(cmd_.source.empty() ? cmd_.compiler : cmd_.source);
  if (!explain_ && env_flag("LEXPACK_DISABLE")) return passthrough("LEXPACK_DISABLE is set");
  if (!cmd_.uncacheable.empty()) {
    if (open_store()) count("uncacheable_" + cmd_.uncacheable);
    return passthrough(
        "uncacheable: " + cmd_.uncacheable +
        (cmd_.uncacheable_detail.empty() ? "" : " (" + cmd_.uncacheable_detail + ")"));
  }
  cwd_ = base::working_dir();  // as the compiler names it (-g records it)
  if (cwd_.empty()) return passthrough("cannot read the working directory");
  if (!open_store()) return passthrough("no cache");
  load_settings();
  if (explain_) adopt_build_command();
  if (std::optional<std::string> why = identify()) return passthrough(*why);

  // Fast path: the closure memo of this translation unit.
  cache::Hash128 tu = closure::translation_unit_key(identity_, cmd_, cwd_, base_dir_);
  std::string stale_memo;
  if (!key_from_memo(tu, &stale_memo)) {
    if (std::optional<std::string> why = key_from_scan(tu, stale_memo)) return passthrough(*why);
  }
  if (explain_ && !base_dir_.empty() && !have_closure_ && !slow_path()) {
    return passthrough(result_.error);
  }
  cache::Hash128 key = uses_date_ ? closure::dated_key(key_) : key_;
  if (explain_) note("action key: " + key.hex());

  std::string why_miss = "no cached result for this key";
  // A compile started early is the answer unless the key has an entry.
  if (settle_early_compile(key)) {
    note("miss: " + why_miss);
  } else if (std::optional<LaunchResult> answered = look_up(key, &why_miss)) {
    return *answered;
  } else if (!explain_) {
    note("miss: " + why_miss);
  }
  if (!explain_ && miss_cause_.empty()) miss_cause_ = changed_since_previous_memo(tu);
  // A memo that holds with no entry: stored by a build's prefetch (or
  // another launcher) for a compile this output never had stored.
  if (!explain_ && miss_cause_.empty() && !compiled_before_with_these_arguments()) {
    miss_cause_ = "never compiled with these arguments";
  }
  if (!have_closure_ && !closure_from_kept_snapshot(tu) && !slow_path()) {
    return passthrough(result_.error);
  }
  if (!early_) {
    if (std::optional<LaunchResult> answered = look_up_tokens(key)) return *answered;
  }
  if (explain_) return explain_miss(why_miss);
  // has_computed_include: one the evaluation did not expand, whose files
  // only the depfile names (and -MMD leaves system headers out of it).
  if (cmd_.wants_depfile && closure_.has_computed_include) {
    for (const std::string& a : cmd_.args) {
      if (a == "-MMD") return passthrough("computed include and -MMD: system headers unseen");
    }
  }
  return compile_and_store();
}

void Launcher::load_settings() {
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

std::optional<std::string> Launcher::identify() {
  compiler::RemoteAnswers answers;
  answers.tier = remote_.get();
  answers.count = [this](std::string_view name, int64_t delta) { count(name, delta); };
  auto identity =
      compiler::compiler_identity(store_.get(), cmd_.compiler, remote_ ? &answers : nullptr);
  if (!answers.note.empty()) note(answers.note);
  if (!identity.ok()) return "compiler identity: " + identity.message();
  identity_ = identity.value();
  if (identity_.kind == compiler::CompilerKind::kUnknown) {
    count("uncacheable_unsupported_compiler");
    return "not gcc or clang: " + identity_.program;
  }
  if (std::string why, reason = compiler::refused_by_compiler(cmd_, identity_.kind, &why);
      !reason.empty()) {
    count("uncacheable_" + reason);
    return "uncacheable: " + why;
  }
  if (explain_) note("compiler: " + identity_.program + " (" + identity_.version + ")");
  std::string err;
  kernel_ = lexer::default_kernel(&err);
  if (!kernel_) return "lexer: " + err;
  files_ = std::make_unique<closure::FileStates>(read_only_ ? nullptr : store_.get(), kernel_);
  return std::nullopt;
}

bool Launcher::key_from_memo(const cache::Hash128& tu, std::string* stale_memo) {
  bool have_key = false;
  // Checked where the index holds it: copying a memo of a few hundred paths
  // into fresh heap pages cost more than reading it.
  cache::Hash128 memo_key;
  bool memo_uses_date = false, memo_valid = false;
  std::string changed;
  std::vector<closure::MemoRefresh> refresh;
  std::string memo_copy;  // only when it must be checked again, refreshed or replaced
  bool have_memo = store_->visit_memo("closure", tu.hex(), [&](std::string_view bytes) {
    memo_valid = closure::check_encoded_closure_memo(bytes, nullptr, &memo_key, &memo_uses_date,
                                                     &changed, nullptr, nullptr, &refresh);
    if (memo_valid && (!changed.empty() || !refresh.empty())) memo_copy.assign(bytes);
  });
  if (!memo_copy.empty()) {
    // A dependency whose signature moved may hold the same bytes (a fresh
    // configure rewrites generated headers): checked again with content
    // hashes from the file table (outside the index read above), and the
    // memo takes the new signatures so the next hit is plain again.
    if (changed.rfind("changed: ", 0) == 0) {
      closure::ContentLookup content = content_lookup();
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
  // Out of date: the closure before it may hold again.
  if (have_memo && memo_valid && !changed.empty()) {
    if (use_previous_memo(tu, memo_copy, &memo_key, &memo_uses_date)) {
      note("closure memo out of date (" + changed + "); the previous one holds");
      changed.clear();
    } else {
      *stale_memo = std::move(memo_copy);
    }
  }
  // A newer closure than the memo's, when the latest compile could not leave
  // a memo: what changed since then is what makes this compile miss now.
  // Read for explain, and for a compile without a memo, whose miss the build
  // summary names a cause for (it costs one index read on the way to a miss).
  std::string explain_changed;
  bool have_explain_memo = false;
  if (explain_ || !have_memo) {
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
      source_changed_ = changed == "changed: " + cmd_.source;
      miss_cause_ = have_explain_memo ? explain_changed : changed;
      if (!miss_cause_.empty()) note("closure memo out of date: " + miss_cause_);
    }
  } else if (have_explain_memo) {
    source_changed_ = explain_changed == "changed: " + cmd_.source;
    miss_cause_ = explain_changed;
    if (!miss_cause_.empty()) note("closure memo out of date: " + miss_cause_);
  } else if (!have_memo) {
    never_compiled_ = true;
    miss_cause_ = "never compiled with these arguments";
    if (explain_) note("no closure memo for this command (first compile, or arguments changed)");
  }
  return have_key;
}

std::optional<std::string> Launcher::key_from_scan(const cache::Hash128& tu,
                                                   const std::string& stale_memo) {
  const bool taken = closure_from_snapshot(tu, stale_memo);
  if (!taken && early_compile_applies()) start_early_compile();
  if (!taken && !closure_from_remote() && !closure_from_elsewhere(tu) && !slow_path()) {
    return result_.error;
  }
  if (closure_.uses_time) {
    count("uncacheable_time_macro");
    return "uncacheable: __TIME__ or __TIMESTAMP__ in the closure";
  }
  if (!closure_.unsure.empty()) {
    count(closure_.assembler_include ? "uncacheable_assembler_include"
                                     : "uncacheable_unsure_closure");
    return "uncacheable: " + closure_.unsure;
  }
  if (!read_only_ && !explain_ && !memo_stored_elsewhere_) {
    if (std::optional<std::string> memo = closure::encode_closure_memo(closure_, list_, key_)) {
      if (closure_.source_inert.is_zero()) closure::note_source_inert(&closure_, *kernel_);
      if (!stale_memo.empty()) store_->put_memo(kPreviousMemoTable, tu.hex(), stale_memo);
      store_->put_memo("closure", tu.hex(), *memo);
      store_->put_memo(closure::kClosureSnapshotTable, tu.hex(),
                       closure::encode_closure_snapshot(closure_, key_));
      drop_explain_memo(tu);
    } else {
      std::string latest = closure::encode_explain_memo(closure_, list_, key_);
      if (!latest.empty()) store_->put_memo(kExplainMemoTable, tu.hex(), latest);
    }
  }
  return std::nullopt;
}

std::optional<LaunchResult> Launcher::look_up(cache::Hash128 key, std::string* why_miss) {
  std::optional<cache::ActionRecord> action = store_->get_action(key);
  if (!action && !base_dir_.empty()) {
    // A relocated result that names this checkout was kept for it alone.
    const cache::Hash128 pinned = closure::pinned_key(key, cwd_);
    action = store_->get_action(pinned);
    if (action) key = pinned;
  }
  if (!action && remote_ && !explain_ && !read_only_) action = fetch_remote(key);
  if (!action) return std::nullopt;
  std::string changed;
  size_t outside = 0;
  if (action->exit_code != 0 ||
      !check_encoded_payload(action->payload, files_.get(), cwd_, &changed, &outside)) {
    *why_miss = "cached entry unreadable";
  } else if (!changed.empty()) {
    *why_miss = "file outside the scan " + changed;
  } else if (explain_) {
    note("cached entry: " + std::to_string(outside) + " files outside the scan checked");
    note("would hit");
    LaunchResult r;
    r.explanation = result_.explanation;
    return r;
  } else if (std::optional<LaunchResult> hit = serve_hit(*action, outside)) {
    ninja_integration::note_build_use(key);
    return hit;
  } else {
    *why_miss = "cached outputs unavailable";
  }
  return std::nullopt;
}

LaunchResult Launcher::explain_miss(std::string why_miss) {
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

bool Launcher::slow_path() {
  // A closure of a thousand headers builds tens of megabytes of short-lived
  // tables: in 2 MB pages, a fault each, not one per 4 kB.
  base::use_huge_heap_pages(size_t(64) << 20);
  auto computed = compute_compile_key(store_.get(), !read_only_, files_.get(), identity_, cmd_,
                                      cwd_, base_dir_, kernel_);
  if (!computed.ok()) {
    result_.error = computed.message();
    return false;
  }
  list_ = std::move(computed->list);
  closure_ = std::move(computed->closure);
  have_closure_ = true;
  relocation_ = std::move(computed->relocation);
  key_ = computed->key;
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
    explain_precompiled_headers();
  }
  return true;
}

void Launcher::explain_precompiled_headers() {
  if (cmd_.makes_pch) {
    note("precompiled header: known to the compiles that take it as made by " +
         closure::pch_maker_key(identity_, cmd_, cwd_, closure_, relocation_).hex());
  }
  for (const closure::ClosureFile& f : closure_.files) {
    if (!f.opaque) continue;
    note("precompiled header " + std::string(f.path) + ": " +
         (f.made_by.is_zero() ? "keyed by its bytes (not made through lexpack here)"
                              : "keyed by its maker " + f.made_by.hex()));
  }
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
  if (cmd_.makes_pch && !read_only_) note_served_pch_maker(store_.get(), action);
  count("hits");
  count("time_saved_us", int64_t(action.compile_time_us));
  note("hit (" + std::to_string(elapsed_us()) + " us, " + std::to_string(outside) +
       " files outside the scan checked)");
  LaunchResult r;
  r.out = std::move(out_text);
  r.err = std::move(err_text);
  return r;
}

closure::ContentLookup Launcher::content_lookup() {
  return closure::content_lookup(files_.get(), cwd_);
}

std::string Launcher::changed_since_previous_memo(const cache::Hash128& tu) {
  std::string previous;
  store_->visit_memo(kPreviousMemoTable, tu.hex(),
                     [&](std::string_view bytes) { previous.assign(bytes); });
  if (previous.empty()) return {};
  const closure::ContentLookup content = content_lookup();
  std::string changed;
  cache::Hash128 k;
  bool dated = false;
  if (!closure::check_encoded_closure_memo(previous, nullptr, &k, &dated, &changed, nullptr,
                                           &content)) {
    return {};
  }
  return changed;
}

bool Launcher::use_previous_memo(const cache::Hash128& tu, const std::string& latest,
                                 cache::Hash128* key, bool* uses_date) {
  std::string previous;
  store_->visit_memo(kPreviousMemoTable, tu.hex(),
                     [&](std::string_view bytes) { previous.assign(bytes); });
  if (previous.empty()) return false;
  closure::ContentLookup content = content_lookup();
  std::vector<closure::MemoRefresh> refresh;
  std::string changed;
  cache::Hash128 k;
  bool dated = false;
  if (!closure::check_encoded_closure_memo(previous, nullptr, &k, &dated, &changed, nullptr,
                                           &content, &refresh) ||
      !changed.empty()) {
    return false;
  }
  closure::ClosureMemo memo;
  if (!read_only_ && !explain_ && closure::decode_closure_memo(previous, &memo)) {
    // The signatures that moved are taken now, so the next hit is plain.
    closure::apply_memo_refresh(refresh, base::now_ns(), &memo);
    store_->put_memo("closure", tu.hex(), closure::encode_closure_memo(memo));
    if (!latest.empty()) store_->put_memo(kPreviousMemoTable, tu.hex(), latest);
  }
  *key = k;
  *uses_date = dated;
  return true;
}

}  // namespace detail

LaunchResult launch(const std::vector<std::string>& argv, bool explain,
                    const EvaluateElsewhere& elsewhere) {
  detail::Launcher launcher(argv, explain, elsewhere);
  return launcher.run();
}

}  // namespace lexpack::launcher
