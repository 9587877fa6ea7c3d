const char* d = __DATE__;
const char* t = __TIME__;
const char* ts = __TIMESTAMP__;
int MY__TIME__X;
const char* s = "__DATE__"; // __TIME__
??=include <trigraph.h>
#define S ??/
  x
