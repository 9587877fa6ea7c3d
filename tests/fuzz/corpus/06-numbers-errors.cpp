int a = 0'1; int b = 0xfa'af'fa; int c = 1'000'000;
#if 1'2 == 12
#endif
#error don't stop here
#warning "/* not a comment
#include <after_error.h>
wchar_t w = L'x'; char16_t u = u'x'; char32_t U = U'x'; auto e = u8'x';
