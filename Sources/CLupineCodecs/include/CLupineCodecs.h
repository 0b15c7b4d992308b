#ifndef CLUPINE_CODECS_H
#define CLUPINE_CODECS_H

// Brotli and Zstandard, loaded at run time.
//
// Lupine links neither library: it opens libbrotlidec.so.1, libbrotlienc.so.1 and libzstd.so.1
// with dlopen the first time a coding is asked for, and calls the few functions below through
// declarations of its own, so building Lupine needs no brotli or zstd headers. On Linux these
// libraries are already in the process whenever FoundationNetworking is (libcurl loads them).
// Where a library is missing, its `*_available` function answers 0, every other function of it
// answers as a failure, and Lupine neither advertises nor decodes that coding.
//
// The declarations follow the libraries' stable public API: brotli 1.0 (decode.h, encode.h) and
// zstd 1.4 (zstd.h, the "stable" section: ZSTD_DCtx_setParameter and ZSTD_compressStream2).

#include <stddef.h>
#include <stdint.h>

// MARK: - Brotli decoding (libbrotlidec)

/// A brotli decoder's state (BrotliDecoderState).
typedef struct clupine_brotli_decoder clupine_brotli_decoder;

/// BrotliDecoderResult.
typedef enum {
    CLUPINE_BROTLI_DECODER_ERROR = 0,
    CLUPINE_BROTLI_DECODER_SUCCESS = 1,
    CLUPINE_BROTLI_DECODER_NEEDS_MORE_INPUT = 2,
    CLUPINE_BROTLI_DECODER_NEEDS_MORE_OUTPUT = 3,
} clupine_brotli_decoder_result;

/// 1 when libbrotlidec could be loaded.
int clupine_brotli_decoder_available(void);
/// A new decoder (malloc'd by the library), or NULL.
clupine_brotli_decoder *clupine_brotli_decoder_create(void);
void clupine_brotli_decoder_destroy(clupine_brotli_decoder *decoder);
/// BrotliDecoderDecompressStream: consumes from `*next_in`, writes at `*next_out`, advancing both.
clupine_brotli_decoder_result clupine_brotli_decoder_decompress(clupine_brotli_decoder *decoder,
                                                                size_t *available_in, const uint8_t **next_in,
                                                                size_t *available_out, uint8_t **next_out);
/// The library's text for the decoder's last error (static storage).
const char *clupine_brotli_decoder_error(const clupine_brotli_decoder *decoder);

// MARK: - Brotli encoding (libbrotlienc): the test server's bodies and the fuzzers' round trips

typedef struct clupine_brotli_encoder clupine_brotli_encoder;

/// BrotliEncoderOperation.
typedef enum {
    CLUPINE_BROTLI_ENCODER_PROCESS = 0,
    CLUPINE_BROTLI_ENCODER_FLUSH = 1,
    CLUPINE_BROTLI_ENCODER_FINISH = 2,
} clupine_brotli_encoder_operation;

int clupine_brotli_encoder_available(void);
/// A new encoder with this quality (0...11) and window (10...24 bits), or NULL.
clupine_brotli_encoder *clupine_brotli_encoder_create(uint32_t quality, uint32_t window_bits);
void clupine_brotli_encoder_destroy(clupine_brotli_encoder *encoder);
/// BrotliEncoderCompressStream: 1 on success, 0 on failure.
int clupine_brotli_encoder_compress(clupine_brotli_encoder *encoder, clupine_brotli_encoder_operation operation,
                                    size_t *available_in, const uint8_t **next_in,
                                    size_t *available_out, uint8_t **next_out);
/// 1 once the stream is finished and all of its output taken.
int clupine_brotli_encoder_is_finished(clupine_brotli_encoder *encoder);
/// 1 while the encoder holds output it could not write yet.
int clupine_brotli_encoder_has_more_output(clupine_brotli_encoder *encoder);

// MARK: - Zstandard (libzstd)

/// ZSTD_DCtx.
typedef struct clupine_zstd_decoder clupine_zstd_decoder;
/// ZSTD_CCtx.
typedef struct clupine_zstd_encoder clupine_zstd_encoder;

/// ZSTD_inBuffer: the same three fields in the same order.
typedef struct {
    const void *src;
    size_t size;
    size_t pos;
} clupine_zstd_input;

/// ZSTD_outBuffer.
typedef struct {
    void *dst;
    size_t size;
    size_t pos;
} clupine_zstd_output;

/// 1 when libzstd 1.4.0 or later could be loaded.
int clupine_zstd_available(void);
/// A new decoder that refuses frames whose window is over 2^window_log_max bytes, or NULL.
clupine_zstd_decoder *clupine_zstd_decoder_create(int window_log_max);
void clupine_zstd_decoder_destroy(clupine_zstd_decoder *decoder);
/// ZSTD_decompressStream: 0 once a frame is decoded and flushed, an error code (see
/// clupine_zstd_is_error), or a hint of the input still expected.
size_t clupine_zstd_decompress(clupine_zstd_decoder *decoder, clupine_zstd_output *output, clupine_zstd_input *input);
/// A new encoder at `level` (1...19 are the usual levels) with a window of 2^window_log bytes
/// (0: the level's own) and a content checksum when `checksum` is 1, or NULL.
clupine_zstd_encoder *clupine_zstd_encoder_create(int level, int window_log, int checksum);
void clupine_zstd_encoder_destroy(clupine_zstd_encoder *encoder);
/// ZSTD_compressStream2 with ZSTD_e_continue (`end` 0) or ZSTD_e_end (`end` 1): an error code,
/// or the bytes still to flush (0 once the frame is complete after ZSTD_e_end).
size_t clupine_zstd_compress(clupine_zstd_encoder *encoder, clupine_zstd_output *output, clupine_zstd_input *input, int end);
/// ZSTD_isError.
int clupine_zstd_is_error(size_t code);
/// ZSTD_getErrorName (static storage).
const char *clupine_zstd_error_name(size_t code);

#endif
