// The archive and link steps of a ninja edge's shell command: the launcher
// put before each of them (`lexpack ar ...`, `lexpack ranlib ...`, `lexpack
// g++ ... -o app`), or one launcher given them all (`lexpack --link-steps`).
#pragma once

#include <stddef.h>

// The command `cmd` (a "a && b && c" chain of plain words, CMake's ": && ...
// && :" shapes) with the launcher `launcher` (shell-quoted, a blank after
// it) inserted, as one malloc'd string; NULL when it holds no such step or
// anything the rewriting does not read (quotes, expansions, redirections,
// other operators; the quoted parts of mask_quoted_parts aside).
char* rewrite_link_chain(const char* cmd, const char* launcher, size_t launcher_len);
