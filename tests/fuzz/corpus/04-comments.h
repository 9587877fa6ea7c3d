/* #include <hidden.h>
*/
// comment \
#include <swallowed.h>
//* line */
/*/ still comment #include <no.h> */
#include /* "x.h" */ <abc.h>
/* unterminated #include <z.h>