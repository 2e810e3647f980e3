#include <zlib.h>

// inflateInit2 is a macro over inflateInit2_; Swift cannot import it.
static inline int czlib_inflate_init2(z_streamp s, int windowBits) { return inflateInit2(s, windowBits); }
