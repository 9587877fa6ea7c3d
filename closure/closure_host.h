// The preprocessor's view of one TU's files while its closure is evaluated:
// a handle per file (by device and inode) over where the search found it,
// the bytes and scan read on first use or taken from the evaluation share.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/view_map.h"
#include "closure/compiler_facts.h"
#include "closure/evaluation_share_impl.h"
#include "closure/presence_evaluation.h"
#include "closure/resolution.h"
#include "lexer/kernel.h"
#include "preprocessor/host.h"

namespace lexpack::closure {

class ClosureHost : public preprocessor::Host {
 public:
  // `share` may be null: each file is then read for this TU alone.
  ClosureHost(const PresenceEvaluator::Ask& ask, const lexer::Kernel* kernel,
              const CompilerFacts& facts, EvaluationShare::Impl* share)
      : ask_(ask), kernel_(kernel), facts_(facts), share_(share) {}

  preprocessor::FileHandle handle(const Resolution& r);
  std::optional<preprocessor::FileHandle> resolve(std::string_view name, bool angled, bool is_next,
                                                  preprocessor::FileHandle includer) override;
  std::optional<preprocessor::FileContent> content(preprocessor::FileHandle file) override;
  std::string file_key(preprocessor::FileHandle file) override;
  std::optional<intmax_t> builtin_query(std::string_view op, std::string_view argument) override;

  // Where each file was found, by handle.
  std::vector<Resolution> resolutions() const;
  // The builtin questions asked that the compiler's answers do not hold.
  const std::set<std::string>& unknown() const { return unknown_; }

 private:
  struct File {
    Resolution where;
    std::shared_ptr<const LoadedFile> loaded;
  };
  // The file's bytes and scan, read once per share when there is one (a
  // file whose stat changed since is read again).
  std::shared_ptr<const LoadedFile> load(const Resolution& where);

  const PresenceEvaluator::Ask& ask_;
  const lexer::Kernel* kernel_;
  const CompilerFacts& facts_;
  EvaluationShare::Impl* share_;
  std::deque<File> files_;  // FileContent views point into it
  ByInode<size_t> by_inode_;
  base::ViewMap<std::optional<preprocessor::FileHandle>> angled_;  // see resolve
  std::set<std::string> unknown_;
};

}  // namespace lexpack::closure
