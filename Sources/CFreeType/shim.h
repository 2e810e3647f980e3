#include <ft2build.h>
#include FT_FREETYPE_H

// Load flags are macros Swift cannot import as they are written.
static inline int cft_load_render(void) { return FT_LOAD_RENDER; }
static inline int cft_load_no_hinting(void) { return FT_LOAD_NO_HINTING; }
