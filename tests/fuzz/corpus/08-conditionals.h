#if A
#ifdef B
#ifndef C
#elif D
#elifdef E
#elifndef F
#else
#endif
#endif
#if !defined(G)
#define G
#endif
#define
#define 0
#define &
#undef G
#if unbalanced
