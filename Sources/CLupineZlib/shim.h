#ifndef CLUPINE_ZLIB_SHIM_H
#define CLUPINE_ZLIB_SHIM_H

#include <zlib.h>

// deflateInit2 is a macro, which Swift cannot call; this wrapper exposes it as a function.
// windowBits 15 produces a zlib (RFC 1950) stream, 15 + 16 a gzip (RFC 1952) stream.
static inline int clupine_deflate_init(z_streamp stream, int level, int windowBits, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, strategy);
}

// inflateInit2 is a macro too. windowBits 15 + 32 accepts a zlib or a gzip stream, detected from
// its header.
static inline int clupine_inflate_init(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
