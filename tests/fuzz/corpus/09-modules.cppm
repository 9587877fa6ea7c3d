module;
#include <legacy.h>
export module m:part;
module m;
import m;
import :part;
import <vector>;
import "x.h";
export import m2;
import m3 [[attr]];
import::inner x;
module::inner y;
import = 3;
import->a;
import.a;
module:(int)x;
int z; import notme;
imp\
ort spliced;
import missing_semicolon
