#define X 1
#include "