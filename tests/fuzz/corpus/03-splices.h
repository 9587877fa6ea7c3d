#inc\
lude <spliced.h>
#ifndef GUA\
RD
#define GUARD
#define LONG a \
  b \  
  c
#endif
