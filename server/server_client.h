// The launcher's side of `lexpack server`: ask the server for a hit before
// doing anything else. Every failure (no server, a slow or incompatible one,
// any error) gives nullopt, and the launcher takes its normal path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/launcher.h"
#include "scan/scan_memo.h"
#include "server/protocol.h"

namespace lexpack::server {

// True unless LEXPACK_SERVER=0 or LEXPACK_DISABLE turns the server off.
bool server_enabled();

// True when lexpack-client already asked the server about this compile and
// was told "miss" (LEXPACK_SERVER_DECLINED, which this takes out of the
// environment, so that neither the compiler nor a server sees it).
// *busy: it did not answer in time, or it is of another binary and leaves
// ("replace": this binary's server is started in its place); nothing more is
// asked of it then.
bool take_declined_mark(bool* busy = nullptr);

// A hit served by the server (outputs already in place), or nullopt (with
// *declined set when the server answered "miss"). With `start`, a missing or
// incompatible server is started in the background.
std::optional<launcher::LaunchResult> try_server(const std::vector<std::string>& argv, bool start,
                                                 bool* declined);

// After the launcher ran a compile the server declined: tells the server,
// which then checks that compile's closure memo when it is idle, so that the
// next request for it is answered from memory. Does not wait.
void tell_server_done(const std::vector<std::string>& argv);

// Has the server check now the closures of compiles a build is about to run
// (each a kPrepare entry: working directory and arguments, in this process's
// environment), so that they are answered from memory when they come. Waits
// up to about `wait_ms` (checks take a while), and up to a second for a
// server started a moment ago to listen; its answer, or nullopt.
struct Prepared {
  std::string said;            // "N of M compiles answered from memory..."
  std::vector<bool> answered;  // per compile: answered from memory when it comes
};
std::optional<Prepared> prepare_compiles(std::vector<Request::Compile> compiles, int wait_ms);
// How long `lexpack ninja`, `warm` and `scan` wait for such an answer at most.
constexpr int kPrepareWaitMs = 20000;

// What a running server knows of `lexpack scan`'s TUs: per compile, its
// answer when nothing it rests on changed since it was checked, else empty;
// nullopt when no server answered.
std::optional<scan::KnownScans> scan_answers(std::vector<Request::Compile> compiles, int wait_ms);

// Has the server evaluate this compile's closure with every header
// evaluation it keeps, and store its closure memo and snapshot; "" when it
// did, else why not (launcher::EvaluateElsewhere). Waits up to about 10 s.
// `how` says how the launcher checks what it is given.
std::string evaluate_with_server(const std::vector<std::string>& argv, launcher::ElsewhereAsk how);

// What the running server would answer to this compile ("would hit ...",
// "would decline: ..."), without starting one; nullopt: no server answered.
std::optional<std::string> explain_with_server(const std::vector<std::string>& argv);

// One control request (status, stop, drop trust) to the server of the
// default cache directory. nullopt: no server answered.
std::optional<Reply> control(RequestKind kind);
// What the mark beside the socket says while it holds ("marked: its process
// N did not answer in time; ..."): compiles skip that server. Empty: none.
std::string unavailable_mark();

// Starts a detached server (own session, no terminal) for the default cache
// directory; returns at once. `lexpack` must be the running program. Not
// when one runs (holds the lock), unless it is `replacing` one of another
// binary that is leaving (the new one waits a moment for the lock).
// *started: whether a new server was started (none ran).
bool start_server(bool replacing = false, bool* started = nullptr);

}  // namespace lexpack::server
