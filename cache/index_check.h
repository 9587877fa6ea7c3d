// A structural check of the LMDB index file (internal to cache/). LMDB trusts
// its pages; a damaged page can crash a reader or corrupt a writer's memory.
// This walks every page reachable from one snapshot with every offset bounds-
// checked, so damage is found before LMDB is asked to use it.
#pragma once

#include <cstdint>
#include <string>

namespace lexpack::cache {

// map: the mapped index file, file_size bytes long; txnid: the snapshot to
// check (its meta page must still hold it). Returns an empty string when the
// structure is sound, else what is wrong. *stale is set when the snapshot's
// meta page was already reused by later commits (nothing was checked).
std::string check_lmdb_pages(const char* map, uint64_t file_size, uint64_t txnid, bool* stale);

}  // namespace lexpack::cache
