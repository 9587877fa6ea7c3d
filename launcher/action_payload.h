// What a cached compile keeps beside its outputs: files the compiler read
// that the scan did not reach (computed includes, scanner disagreements) with
// their content hashes, and the candidates around them whose presence or
// absence must not change. Checked on every hit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/hash/hash.h"
#include "cache/store.h"
#include "closure/absence.h"
#include "closure/file_state.h"

namespace lexpack::launcher {

struct ActionPayload {
  struct ExtraFile {
    std::string path;
    cache::Hash128 content;
  };
  std::vector<ExtraFile> extra_files;
  // The candidates around them: those that existed must still, and the
  // missing ones are held by their directories' signatures (absence.h).
  std::vector<std::string> present_probes;
  std::string absent_probes;  // closure::AbsenceProof::encode()
  // A compile that makes a precompiled header: the key its takers know it by
  // (closure::pch_maker_key), recorded for the object's bytes wherever the
  // entry is served; zero otherwise.
  cache::Hash128 pch_maker;
};

std::string encode_payload(const ActionPayload& payload);
bool decode_payload(std::string_view bytes, ActionPayload* payload);

// Empty when every extra file has the recorded content and every probe the
// recorded presence; else what differs.
std::string check_payload(const ActionPayload& payload, closure::FileStates* files,
                          const std::string& cwd);
// The same on an encoded payload, its missing candidates checked where they
// lie (the hit path: they can be megabytes). False when `bytes` is not a
// payload; else *changed is set, and *extra_files (when given) to the
// number of files outside the scan it holds.
bool check_encoded_payload(std::string_view bytes, closure::FileStates* files,
                           const std::string& cwd, std::string* changed,
                           size_t* extra_files = nullptr);

// The payload's pch_maker; zero when it has none or is not a payload.
cache::Hash128 payload_pch_maker(std::string_view bytes);

// A served entry of a compile that makes a precompiled header: its payload's
// maker recorded for the object's bytes (closure/pch_maker.h), so that the
// compiles taking it key the maker, as where it was made.
void note_served_pch_maker(cache::Store* store, const cache::ActionRecord& action);

}  // namespace lexpack::launcher
