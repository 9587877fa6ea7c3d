// Files of a closure that `#pragma once` may merge: gcc takes two files with
// equal bytes and equal mtime (in seconds) as one, clang two names of one
// inode; either can change while every file keeps its bytes.
#pragma once

#include <string>
#include <vector>

#include "closure/dependency_closure.h"

namespace lexpack::closure {

// Among closure->files[i] for each i in `once_files` (files that hold
// `#pragma once`), the groups of two or more paths with equal content: each
// member is marked once_twin, and the result encodes, per group, which
// members share an mtime second and which share a device and inode (the
// partitions gcc and clang decide by), for the action key. "" when there is
// no group: keys of closures without twins are unchanged.
std::string once_twin_partition(const std::vector<size_t>& once_files, Closure* closure);

// Whether the partition holds two files gcc takes as one while they are two
// inodes (which the exact evaluation, modelling #pragma once by inode, would
// read twice).
bool once_twins_merged_by_time(const Closure& closure);

}  // namespace lexpack::closure
