#ifndef GUARD_H
#define GUARD_H
#include <a/b.h>
#include "c.h"
#include_next <d.h>
#import "e.h"
#endif
