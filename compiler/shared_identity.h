// A compiler's answers carried through the remote tier: the first machine
// that asks a compiler who it is stores the answer under a key made of the
// driver's content; a fresh machine with the same driver takes it instead of
// running the compiler, once every machine-local fact in it checks out here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/remote/remote_tier.h"
#include "compiler/identity_types.h"
#include "compiler/search_list.h"

namespace lexpack::compiler {

// The remote to ask, and where its events are counted and noted.
struct RemoteAnswers {
  cache::remote::RemoteTier* tier = nullptr;
  // When `tier` is null: opens it, once, only when an answer is to be asked
  // (what the store remembers costs no remote); may return null.
  std::function<cache::remote::RemoteTier*()> open_tier;
  cache::remote::CountFn count = [](std::string_view, int64_t) {};
  std::string note;  // what happened, for the decision log
};

// What an identity rests on beyond the driver's bytes: the files the
// driver runs or reads (cc1, cc1plus, the specs file beside them: path and
// content digest, "unreadable:<path>" for one that cannot be read) and the
// bare search list per language (c, c++) when it was a memoizable base
// answer.
struct IdentityFacts {
  std::vector<std::pair<std::string, std::string>> programs;
  std::optional<SearchList> bare_lists[2];
};

// The digest of a file's bytes, or of its name when it cannot be read.
std::string file_digest(const std::string& path);

// Why `list`, another machine's answer, cannot be this machine's (a dir it
// lists is no directory here, one it found missing exists), or "".
std::string list_mismatch(const SearchList& list);

// The remote key of `program`'s identity: its path (as found and resolved),
// the digest of its bytes and the environment variables that change the
// answers. Null (all zero) when no answer may be shared for it.
cache::Hash128 identity_answer_key(const std::string& program, const std::string& driver_digest);

std::string encode_identity_answer(const CompilerIdentity& id, const IdentityFacts& facts);

// The identity in `bytes` for `program`, only when every fact it rests on
// holds on this machine: the programs it names have the same bytes, the
// driver's assembler is found at the same path with the same bytes, the
// directories where clang looked for GCC installations hold the same names,
// every dir of its search lists is a directory here and every dir it found
// missing is still missing. The watched dirs get this machine's signatures.
// False with the reason in *why otherwise.
bool accept_identity_answer(std::string_view bytes, const std::string& program,
                            CompilerIdentity* id, IdentityFacts* facts, std::string* why);

}  // namespace lexpack::compiler
