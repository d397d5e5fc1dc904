// CPrefetch is a header-only shim (see include/CPrefetch.h); SwiftPM needs one source file.
#include "CPrefetch.h"
