// The heap of a process that builds hundreds of megabytes of short-lived
// tables (a whole-build scan): each new 4 kB page costs a page fault, about
// 10 us on a virtual machine, which made up a large share of a scan's time.
#pragma once

#include <cstddef>

namespace lexpack::base {

// Asks for transparent huge pages on the main heap: the heap grows by at
// least `reserve` bytes of address space at a time (only pages touched use
// memory), is never given back before exit, serves large blocks itself
// instead of mapping each, and its first `reserve` bytes are advised
// MADV_HUGEPAGE (one fault per 2 MB where the kernel allows it). Only the
// calling process: children do not inherit it. Returns the bytes advised
// (0 where the kernel or the heap's layout refused). Call before the heavy
// work, once.
size_t use_huge_heap_pages(size_t reserve);

// The same for the heap malloc gives the calling thread when that is not the
// main heap (glibc gives other threads heaps of their own, mapped 64 MB at a
// time): the whole heap is advised MADV_HUGEPAGE. Only in a process that
// called use_huge_heap_pages (a library's workers follow the program's
// choice). Returns the bytes advised (0 on the main heap, which
// use_huge_heap_pages advises, or where not asked for or refused). Call at
// the start of a worker thread's heavy work.
size_t use_huge_thread_heap_pages();

// For a long-lived process that handles one request after another (the
// server): blocks up to 32 MB come from the heap and, freed, are reused
// rather than unmapped and faulted in again by the next request; the heap's
// top is given back only past `keep` free bytes.
void reuse_freed_heap_blocks(size_t keep);

}  // namespace lexpack::base
