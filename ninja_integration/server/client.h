// The launcher's side of `lexpack server`: ask the server for a hit before
// doing anything else. Every failure (no server, a slow or incompatible one,
// any error) gives nullopt, and the launcher takes its normal path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ninja_integration/launcher/launcher.h"
#include "ninja_integration/server/protocol.h"

namespace lexpack::server {

// True unless LEXPACK_SERVER=0 or LEXPACK_DISABLE turns the server off.
bool server_enabled();

// True when lexpack-client already asked the server about this compile and
// was told "miss" (LEXPACK_SERVER_DECLINED, which this takes out of the
// environment, so that neither the compiler nor a server sees it).
bool take_declined_mark();

// A hit served by the server (outputs already in place), or nullopt (with
// *declined set when the server answered "miss"). With `start`, a missing or
// incompatible server is started in the background.
std::optional<launcher::LaunchResult> try_server(const std::vector<std::string>& argv, bool start,
                                                 bool* declined);

// After the launcher ran a compile the server declined: tells the server,
// which then checks that compile's closure memo when it is idle, so that the
// next request for it is answered from memory. Does not wait.
void tell_server_done(const std::vector<std::string>& argv);

// What the running server would answer to this compile ("would hit ...",
// "would decline: ..."), without starting one; nullopt: no server answered.
std::optional<std::string> explain_with_server(const std::vector<std::string>& argv);

// One control request (status, stop, drop trust) to the server of the
// default cache directory. nullopt: no server answered.
std::optional<Reply> control(RequestKind kind);

// Starts a detached server (own session, no terminal) for the default cache
// directory; returns at once. `lexpack` must be the running program. Not
// when one runs (holds the lock), unless it is `replacing` one of another
// binary that is leaving (the new one waits a moment for the lock).
bool start_server(bool replacing = false);

}  // namespace lexpack::server
