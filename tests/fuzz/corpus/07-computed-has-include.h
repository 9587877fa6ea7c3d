#include MACRO
#include MACRO(a, b)
#include
#include // nothing
#if __has_include(<a.h>) && __has_include("b.h")
#elif __has_include_next(<c.h>)
#endif
#define H __has_include ( < a.h > )
#pragma once trailing
_Pragma("once")
