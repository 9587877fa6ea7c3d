// The wire format between the launcher and `lexpack server`: one framed
// request per connection and one framed reply, over a Unix socket that lives
// in a directory only its user can enter. Kept apart so client and server
// cannot disagree on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lexpack::server {

// Both ends put this in every request; a server that sees another one leaves
// so that a server of the new binary can start (the binary's signature is in
// it, so a rebuilt lexpack never talks to an old server).
std::string protocol_version();

// kExplain: what the server would answer to this compile, writing nothing
// (a kInfo reply saying "hit ..." or why not).
enum class RequestKind : uint8_t {
  kCompile = 1,
  kStatus = 2,
  kStop = 3,
  kDropTrust = 4,
  kExplain = 5,
  kLearn = 6,        // the launcher of a declined compile hit on its own: no reply
  kPrepare = 7,      // `compiles` are about to be run: check them now (a kInfo reply)
  kScanAnswers = 8,  // `lexpack scan`: what is known of `compiles` (a kInfo reply's answers)
  kClosure = 9,      // evaluate this compile's closure, store its memo (a kInfo reply)
  // kClosure for a compile already running, whose launcher checks each file
  // of the closure after it: only the memo's directories are checked first.
  kClosureCheckedAfter = 10,
  // kClosureCheckedAfter again: a file of the closure the server gave had
  // changed when its launcher checked it (what the server kept may be out
  // of date, so it is walked anew first).
  kClosureAgain = 11,  // the last kind
};
// A request to evaluate a compile's closure, in any of its three forms.
inline bool is_closure_request(RequestKind kind) {
  return kind == RequestKind::kClosure || kind == RequestKind::kClosureCheckedAfter ||
         kind == RequestKind::kClosureAgain;
}
enum class ReplyKind : uint8_t { kHit = 1, kMiss = 2, kIncompatible = 3, kInfo = 4 };

struct Request {
  RequestKind kind = RequestKind::kCompile;
  std::string version;
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // "NAME=value"
  uint32_t umask = 022;
  // kPrepare: the compiles of a build (the environment is the request's).
  struct Compile {
    std::string cwd;
    std::vector<std::string> argv;
  };
  std::vector<Compile> compiles;
};

struct Reply {
  ReplyKind kind = ReplyKind::kMiss;
  int32_t exit_code = 0;
  std::string out, err;
  std::string info;  // kMiss: why; kInfo: the status text; kHit: compile time saved (us)
  // kHit: outputs the server wrote under temporary names; the client renames
  // each onto its final path (so a client that gave up leaves nothing behind).
  struct Rename {
    std::string from, to;
  };
  std::vector<Rename> renames;
  // kScanAnswers: one per compile asked, empty where the server knows none,
  // and the paths they name by number (scan::KnownScans). kPrepare: one per
  // compile asked, kTrustedAnswer where the server answers it from memory.
  std::vector<std::string> answers;
  std::vector<std::string> paths;
};

inline constexpr char kTrustedAnswer[] = "trusted";
// kClosure: the kInfo reply's text when the memo and snapshot are stored.
inline constexpr char kEvaluatedAnswer[] = "evaluated";

std::string encode_request(const Request& r);
bool decode_request(const std::string& bytes, Request* r);
std::string encode_reply(const Reply& r);
bool decode_reply(const std::string& bytes, Reply* r);

// Frames: a 4-byte little-endian length, then the bytes. Both honour the
// socket's timeouts; false on any error, short read or oversized frame.
bool send_frame(int fd, const std::string& bytes);
bool recv_frame(int fd, std::string* bytes);

// Where the socket of this user's server for `cache_dir` lives:
// `<cache_dir>/server-<uid>` when the path fits a socket address, else a
// per-user directory under $XDG_RUNTIME_DIR or /tmp named after the cache
// directory. Empty: none.
std::string server_dir(const std::string& cache_dir);
// Creates `dir` (0700) if missing; false unless it is a directory owned by
// this user that no one else can enter.
bool ensure_private_dir(const std::string& dir);
inline std::string socket_path(const std::string& dir) {
  return dir + "/sock";
}
// Left by a server that could not start; launchers do not start another
// for this many seconds after it.
inline std::string start_failed_path(const std::string& dir) {
  return dir + "/start-failed";
}
constexpr long kStartRetrySeconds = 60;

}  // namespace lexpack::server
