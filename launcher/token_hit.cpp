// The token key after a miss: the result of a compile whose files differed
// only in comments and blanks at line ends (closure/token_keys.h), served
// and kept under this compile's action key too, and the token key under
// which a miss's result is stored.
#include "closure/token_keys.h"
#include "launcher/launcher_impl.h"

namespace lexpack::launcher::detail {

void Launcher::find_token_key() {
  // Made by the server with the closure it evaluated for this compile.
  if (memo_stored_elsewhere_) {
    cache::Hash128 made;
    std::optional<std::string> hex = store_->get_memo(closure::kTokenKeyTable, key_.hex());
    if (hex && cache::Hash128::from_hex(*hex, &made)) {
      token_key_ = closure_.uses_date ? closure::dated_key(made) : made;
      return;
    }
  }
  std::string why;
  token_key_ = closure::compile_token_key(identity_, cmd_, cwd_, closure_, relocation_,
                                          store_.get(), !read_only_ && !explain_, &why);
  if (!token_key_) note("no token key: " + why);
}

std::optional<LaunchResult> Launcher::look_up_tokens(const cache::Hash128& key) {
  const int64_t start_us = elapsed_us();
  find_token_key();
  if (!token_key_) return std::nullopt;
  std::optional<cache::ActionRecord> action = store_->get_action(*token_key_);
  if (!action) {
    note("token key " + token_key_->hex() + ": no result either (" +
         std::to_string(elapsed_us() - start_us) + " us)");
    return std::nullopt;
  }
  std::string changed;
  size_t outside = 0;
  if (action->exit_code != 0 ||
      !check_encoded_payload(action->payload, files_.get(), cwd_, &changed, &outside) ||
      !changed.empty()) {
    note("token key " + token_key_->hex() + ": its entry does not hold" +
         (changed.empty() ? "" : " (file outside the scan " + changed + ")"));
    return std::nullopt;
  }
  note("token key " + token_key_->hex() +
       ": the files differ from its entry's in comments and blanks at line ends only");
  if (explain_) {
    note("would hit");
    LaunchResult r;
    r.explanation = result_.explanation;
    return r;
  }
  std::optional<LaunchResult> hit = serve_hit(*action, outside);
  if (!hit) return std::nullopt;
  count("token_hits");
  if (!read_only_) (void)store_->put_action(key, *action);  // the next lookup finds it at once
  ninja_integration::note_build_use(key);
  return hit;
}

void Launcher::store_under_token_key(const cache::ActionRecord& action, const LaunchResult& r) {
  // A message quotes source lines, comments and all.
  if (!token_key_ || !r.out.empty() || !r.err.empty() || read_only_) return;
  (void)store_->put_action(*token_key_, action);
}

}  // namespace lexpack::launcher::detail
