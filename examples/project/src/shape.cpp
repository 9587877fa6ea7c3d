#include "geo/shape.h"

#include <iostream>
