const char* s = "/*"; const char* t = "//";
const char* u = "#include <x>";
char a = '"'; char b = '\''; char c = '#';
#include <real.h>
auto r = R"(
#include <raw.h>
)"; auto d = R"abc( )" )abc";
auto u8r = u8R"x(#include <no>)x"; int FOOR = 0; auto f = FOOR"x";
