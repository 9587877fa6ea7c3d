// Which compile made a precompiled header, by the header's bytes.
//
// A .gch records the paths of the headers it holds, so two checkouts make
// two .gch files from one relocated compile, and a key with the .gch's
// bytes in it would never be shared. Where lexpack made (or served) a .gch
// itself, it records the maker: the key the making compile has with its
// paths relocated. A compile that takes that .gch has the maker's key in
// its own key instead of the bytes. The bytes are still what the closure
// checks (a .gch made again with other bytes is a file that changed), and a
// .gch lexpack did not make keeps its bytes in the key.
#pragma once

#include <string_view>

#include "cache/hash/hash.h"
#include "cache/store.h"

namespace lexpack::closure {

inline constexpr std::string_view kPchMakerTable = "pch_maker";

// The recorded maker of a .gch with these bytes; zero when none is (or
// `store` is null).
cache::Hash128 pch_maker(cache::Store* store, const cache::Hash128& content);

// Records `maker` for `content`, unless it is recorded already.
void note_pch_maker(cache::Store* store, const cache::Hash128& content,
                    const cache::Hash128& maker);

}  // namespace lexpack::closure
