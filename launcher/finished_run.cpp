// The parts of a finished step's way out that are not templates; see
// finished_run.h.
#include "launcher/finished_run.h"

#include <unistd.h>

namespace lexpack::launcher {

void finish_run(const std::string& temp_depfile, const std::string& why, const RunNote& note) {
  if (!temp_depfile.empty()) ::unlink(temp_depfile.c_str());
  if (!why.empty()) note(why);
}

bool put_output_blob(cache::Store* store, std::string_view bytes, cache::BlobId* id,
                     std::string* error) {
  if (bytes.empty()) return true;
  auto stored = store->put_blob(bytes);
  if (!stored.ok()) {
    *error = stored.message();
    return false;
  }
  *id = stored.value();
  return true;
}

}  // namespace lexpack::launcher
