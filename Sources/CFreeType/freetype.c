#include "cfreetype.h"

#include <dlfcn.h>
#include "../CLinux/system_libraries.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_SYSTEM_H

static struct {
    const char *error;
    FT_Error (*init_freetype)(FT_Library *);
    FT_Error (*done_freetype)(FT_Library);
    FT_Error (*open_face)(FT_Library, const FT_Open_Args *, FT_Long, FT_Face *);
    FT_Error (*done_face)(FT_Face);
    FT_Error (*set_pixel_sizes)(FT_Face, FT_UInt, FT_UInt);
    FT_UInt (*get_char_index)(FT_Face, FT_ULong);
    FT_Error (*load_glyph)(FT_Face, FT_UInt, FT_Int32);
} ft;
static pthread_once_t ft_once = PTHREAD_ONCE_INIT;
static char ft_error[512];

static void ft_load(void) {
    void *library = dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER "libfreetype.so.6", RTLD_NOW | RTLD_LOCAL);
    const char *missing = library ? NULL : dlerror();
#define RESOLVE(field, name) \
    if (!missing && !(*(void **)&ft.field = dlsym(library, name))) missing = dlerror();
    RESOLVE(init_freetype, "FT_Init_FreeType")
    RESOLVE(done_freetype, "FT_Done_FreeType")
    RESOLVE(open_face, "FT_Open_Face")
    RESOLVE(done_face, "FT_Done_Face")
    RESOLVE(set_pixel_sizes, "FT_Set_Pixel_Sizes")
    RESOLVE(get_char_index, "FT_Get_Char_Index")
    RESOLVE(load_glyph, "FT_Load_Glyph")
#undef RESOLVE
    if (missing) {
        snprintf(ft_error, sizeof ft_error, "%s", missing);
        ft.error = ft_error;
    }
}

const char *cft_load_error(void) {
    pthread_once(&ft_once, ft_load);
    return ft.error;
}

struct cft_face {
    FT_Library library;
    FT_Face face;
    FT_StreamRec *stream;  // the file, read with pread; closed by FreeType, freed here
};

// FreeType reads the font through these (not by opening the path itself): the caller opened the
// file without blocking and checked it is a regular file. A read past the end reads nothing.
static unsigned long cft_stream_read(FT_Stream stream, unsigned long offset, unsigned char *buffer, unsigned long count) {
    if (count == 0) return offset <= stream->size ? 0 : 1;  // a seek: 0 is success
    if (offset >= stream->size) return 0;
    unsigned long done = 0;
    while (done < count) {
        ssize_t got = pread((int)stream->descriptor.value, buffer + done, count - done, (off_t)(offset + done));
        if (got <= 0) break;
        done += (unsigned long)got;
    }
    return done;
}

static void cft_stream_close(FT_Stream stream) {
    if (stream->descriptor.value >= 0) close((int)stream->descriptor.value);
    stream->descriptor.value = -1;
}

enum cft_open_result cft_open_face_descriptor(int descriptor, unsigned long size, long index, unsigned pixel_size, struct cft_face **result) {
    struct cft_face *opened = calloc(1, sizeof *opened);
    FT_StreamRec *stream = calloc(1, sizeof *stream);
    if (!opened || !stream || ft.init_freetype(&opened->library) != 0) {
        free(opened);
        free(stream);
        close(descriptor);
        return CFT_NOT_STARTED;
    }
    stream->size = size;
    stream->descriptor.value = descriptor;
    stream->read = cft_stream_read;
    stream->close = cft_stream_close;
    opened->stream = stream;
    FT_Open_Args args;
    memset(&args, 0, sizeof args);
    args.flags = FT_OPEN_STREAM;
    args.stream = stream;
    if (ft.open_face(opened->library, &args, (FT_Long)index, &opened->face) != 0) {
        cft_stream_close(stream);  // FreeType may have closed it already: then this does nothing
        ft.done_freetype(opened->library);
        free(stream);
        free(opened);
        return CFT_NOT_A_FONT;
    }
    if (ft.set_pixel_sizes(opened->face, 0, pixel_size) != 0) {
        cft_close_face(opened);
        return CFT_NOT_SCALABLE;
    }
    *result = opened;
    return CFT_OPENED;
}

void cft_close_face(struct cft_face *face) {
    ft.done_face(face->face);
    ft.done_freetype(face->library);
    cft_stream_close(face->stream);
    free(face->stream);
    free(face);
}

struct cft_face_info cft_face_info(const struct cft_face *face) {
    FT_Face f = face->face;
    struct cft_face_info info = {
        .family_name = f->family_name,
        .style_name = f->style_name,
        .ascender = (long)(f->size->metrics.ascender >> 6),
        .face_count = (long)f->num_faces,
    };
    return info;
}

unsigned cft_char_index(struct cft_face *face, unsigned long code_point) {
    return ft.get_char_index(face->face, code_point);
}

int cft_render_glyph(struct cft_face *face, unsigned index, struct cft_glyph *glyph) {
    if (ft.load_glyph(face->face, index, FT_LOAD_RENDER | FT_LOAD_NO_HINTING) != 0) return 1;
    FT_GlyphSlot slot = face->face->glyph;
    if (!slot) return 1;
    glyph->buffer = slot->bitmap.buffer;
    glyph->width = slot->bitmap.width;
    glyph->rows = slot->bitmap.rows;
    glyph->pitch = slot->bitmap.pitch;
    glyph->is_gray = slot->bitmap.pixel_mode == FT_PIXEL_MODE_GRAY;
    glyph->left = slot->bitmap_left;
    glyph->top = slot->bitmap_top;
    glyph->advance_x = (long)slot->advance.x;
    return 0;
}
