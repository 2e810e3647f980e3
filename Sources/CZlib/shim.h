#include <zlib.h>

// inflateInit2 and deflateInit2 are macros over inflateInit2_ and deflateInit2_; Swift cannot import them.
static inline int czlib_inflate_init2(z_streamp s, int windowBits) { return inflateInit2(s, windowBits); }
static inline int czlib_deflate_init2(z_streamp s, int level, int windowBits, int memLevel) { return deflateInit2(s, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY); }
