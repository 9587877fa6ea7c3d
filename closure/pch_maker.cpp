#include "closure/pch_maker.h"

#include <optional>
#include <string>

namespace lexpack::closure {

cache::Hash128 pch_maker(cache::Store* store, const cache::Hash128& content) {
  cache::Hash128 maker;
  if (!store) return maker;
  std::optional<std::string> hex = store->get_memo(kPchMakerTable, content.hex());
  if (!hex || !cache::Hash128::from_hex(*hex, &maker)) return cache::Hash128();
  return maker;
}

void note_pch_maker(cache::Store* store, const cache::Hash128& content,
                    const cache::Hash128& maker) {
  if (!store || maker.is_zero() || pch_maker(store, content) == maker) return;
  // Best effort: without the record, the takers key the bytes.
  (void)store->put_memo(kPchMakerTable, content.hex(), maker.hex());
}

}  // namespace lexpack::closure
