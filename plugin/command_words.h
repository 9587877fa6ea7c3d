// The words of a shell command as the plugin reads them: blanks, and the
// compiler drivers' names. Shared by the compile and the link rewriting.
#pragma once

#include <stddef.h>

int is_space(char c);
const char* skip_space(const char* p);
// "gcc", "g++", "cc", "c++", "clang", "clang++", with an optional target
// prefix ("x86_64-linux-gnu-g++") and version suffix ("g++-12", "clang-14").
int is_compiler_name(const char* name, size_t len);
