/* A consumer's C file: <math.h> must be the C library's, not a header of tprop's (the exported
   include path is include/, tprop's headers are under include/tprop/). */
#include <math.h>

double consumer_hypot3(double x, double y, double z) { return sqrt(x * x + y * y + z * z); }
