// What stat(2) says about a file, reduced to the fields that decide whether
// it may have changed: the launcher compares these instead of reading files.
// Used by the store's file table and by every folder that checks a file.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace lexpack::base {

// The stat fields that decide whether a file may have changed.
struct StatSignature {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const StatSignature&) const = default;
};

// The signature fields of a stat(2) answer.
StatSignature signature_of(const struct stat& st);

// stat(2) of `path`, following symlinks. False when the path does not exist
// or is not a regular file (`*is_dir` tells a directory apart when given).
bool stat_file(const std::string& path, StatSignature* sig, bool* is_dir = nullptr);
bool stat_dir(const std::string& path, StatSignature* sig);
// True when `path` names a directory (following symlinks).
bool is_directory(const std::string& path);

// True for the types (statfs f_type) of local filesystems whose every change
// to a file goes through this kernel: ext2/3/4, xfs, btrfs, tmpfs. Network and
// FUSE filesystems, 9p and overlayfs are not (a change may come from elsewhere
// or be stamped by another clock).
bool local_filesystem_type(int64_t f_type);

// Nanoseconds since the epoch, real-time clock.
int64_t now_ns();

// The clock the kernel stamps files with (coarse: one scheduler tick). A file
// stamped at or after a step's start on this clock may have changed during
// the step; one stamped before cannot have (a change after the clock was read
// gets a stamp at least as late).
int64_t file_clock_ns();
// The first tick of that clock past the real-time clock's reading at the
// call, waited for (a few milliseconds): a file written just before, within
// the current tick or with a fine-grained stamp, is then stamped before the
// value returned, not taken for a change after it.
int64_t next_file_clock_tick_ns();

// A signature whose mtime and ctime are at least a second older than `now`:
// a later write to the file cannot leave the signature unchanged.
bool signature_is_settled(const StatSignature& sig, int64_t now);

}  // namespace lexpack::base
