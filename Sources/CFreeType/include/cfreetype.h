// FreeType, opened with dlopen the first time a font is opened (not linked: 0.4 ms on every
// start, for the glyph routes of `serve` only). What FontFace needs of it, behind plain C types:
// this header includes no FreeType header, so the targets that import it need no
// -I/usr/include/freetype2 (only freetype.c does). docs/decisions/dlopen-libraries.md.
#ifndef CFREETYPE_H
#define CFREETYPE_H

#include <stddef.h>

// NULL when libfreetype.so.6 is loaded (opened once, by the first caller); else why it is not
// (dlerror's text). Call and check it before any other cft_* function.
const char *cft_load_error(void);

// One FT_Library with one FT_Face in it.
struct cft_face;

enum cft_open_result { CFT_OPENED = 0, CFT_NOT_STARTED, CFT_NOT_A_FONT, CFT_NOT_SCALABLE };

// Opens face `index` of the font file open as `descriptor` (a regular file of `size` bytes) at
// `pixel_size`; on CFT_OPENED *face is set. The face owns the descriptor (closed with it, or at
// once when the face cannot be opened). FreeType reads it with pread: it never opens a path.
enum cft_open_result cft_open_face_descriptor(int descriptor, unsigned long size, long index, unsigned pixel_size, struct cft_face **face);
void cft_close_face(struct cft_face *face);

struct cft_face_info {
    const char *family_name;  // may be NULL
    const char *style_name;   // may be NULL
    long ascender;            // pixels
    long face_count;          // faces in the file
};
struct cft_face_info cft_face_info(const struct cft_face *face);

// 0 when the face has no glyph for the code point.
unsigned cft_char_index(struct cft_face *face, unsigned long code_point);

// A rendered glyph (anti-aliased, unhinted); `buffer` lives until the next render of the face.
struct cft_glyph {
    const unsigned char *buffer;
    unsigned width;
    unsigned rows;
    int pitch;
    int is_gray;  // 8-bit coverage (FT_PIXEL_MODE_GRAY)
    int left;
    int top;
    long advance_x;  // 26.6 fixed point
};
// 0 on success.
int cft_render_glyph(struct cft_face *face, unsigned index, struct cft_glyph *glyph);

#endif
