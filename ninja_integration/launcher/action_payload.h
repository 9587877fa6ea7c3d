// What a cached compile keeps beside its outputs: files the compiler read
// that the scan did not reach (computed includes, scanner disagreements) with
// their content hashes, and the candidates around them whose presence or
// absence must not change. Checked on every hit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/hash.h"
#include "ninja_integration/closure/file_state.h"

namespace lexpack::launcher {

struct ActionPayload {
  struct ExtraFile {
    std::string path;
    cache::Hash128 content;
  };
  struct ExtraProbe {
    std::string path;
    bool exists = false;
  };
  std::vector<ExtraFile> extra_files;
  std::vector<ExtraProbe> extra_probes;
};

std::string encode_payload(const ActionPayload& payload);
bool decode_payload(std::string_view bytes, ActionPayload* payload);

// Empty when every extra file has the recorded content and every probe the
// recorded presence; else what differs.
std::string check_payload(const ActionPayload& payload, closure::FileStates* files,
                          const std::string& cwd);

}  // namespace lexpack::launcher
