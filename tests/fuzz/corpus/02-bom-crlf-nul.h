#include <bom.h>
#define X 1
#include <lonecr.h>#include<ff.h>
#
## paste
  /* c */ # include <after_comment.h>