#include "CLupineCodecs.h"

#include <dlfcn.h>
#include <pthread.h>

// Each library is opened once, on first use, from its versioned name (the run-time package's
// file; the unversioned name exists only where the -dev package is installed). Its handle is kept
// for the life of the process.
static void *clupine_open_library(const char *const names[]) {
    for (size_t index = 0; names[index] != NULL; index++) {
        void *handle = dlopen(names[index], RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) {
            return handle;
        }
    }
    return NULL;
}

// POSIX's way to turn dlsym's object pointer into a function pointer without a cast C forbids.
#define CLUPINE_LOAD(handle, field, symbol) (*(void **)(&(field)) = dlsym((handle), (symbol)))

// MARK: - Brotli decoding

typedef void *(*clupine_brotli_alloc)(void *opaque, size_t size);
typedef void (*clupine_brotli_free)(void *opaque, void *address);

static struct {
    void *(*create_instance)(clupine_brotli_alloc, clupine_brotli_free, void *);
    void (*destroy_instance)(void *);
    int (*decompress_stream)(void *, size_t *, const uint8_t **, size_t *, uint8_t **, size_t *);
    int (*get_error_code)(const void *);
    const char *(*error_string)(int);
} brotli_decoder_api;
static int brotli_decoder_loaded = 0;
static pthread_once_t brotli_decoder_once = PTHREAD_ONCE_INIT;

static void clupine_brotli_decoder_load(void) {
    static const char *const names[] = {"libbrotlidec.so.1", "libbrotlidec.1.dylib", NULL};
    void *handle = clupine_open_library(names);
    if (handle == NULL) {
        return;
    }
    CLUPINE_LOAD(handle, brotli_decoder_api.create_instance, "BrotliDecoderCreateInstance");
    CLUPINE_LOAD(handle, brotli_decoder_api.destroy_instance, "BrotliDecoderDestroyInstance");
    CLUPINE_LOAD(handle, brotli_decoder_api.decompress_stream, "BrotliDecoderDecompressStream");
    CLUPINE_LOAD(handle, brotli_decoder_api.get_error_code, "BrotliDecoderGetErrorCode");
    CLUPINE_LOAD(handle, brotli_decoder_api.error_string, "BrotliDecoderErrorString");
    brotli_decoder_loaded = brotli_decoder_api.create_instance != NULL && brotli_decoder_api.destroy_instance != NULL
        && brotli_decoder_api.decompress_stream != NULL && brotli_decoder_api.get_error_code != NULL
        && brotli_decoder_api.error_string != NULL;
}

int clupine_brotli_decoder_available(void) {
    pthread_once(&brotli_decoder_once, clupine_brotli_decoder_load);
    return brotli_decoder_loaded;
}

clupine_brotli_decoder *clupine_brotli_decoder_create(void) {
    if (!clupine_brotli_decoder_available()) {
        return NULL;
    }
    // NULL allocator functions: the library's malloc and free.
    return (clupine_brotli_decoder *)brotli_decoder_api.create_instance(NULL, NULL, NULL);
}

void clupine_brotli_decoder_destroy(clupine_brotli_decoder *decoder) {
    if (decoder != NULL && clupine_brotli_decoder_available()) {
        brotli_decoder_api.destroy_instance(decoder);
    }
}

clupine_brotli_decoder_result clupine_brotli_decoder_decompress(clupine_brotli_decoder *decoder,
                                                                size_t *available_in, const uint8_t **next_in,
                                                                size_t *available_out, uint8_t **next_out) {
    if (decoder == NULL || !clupine_brotli_decoder_available()) {
        return CLUPINE_BROTLI_DECODER_ERROR;
    }
    int result = brotli_decoder_api.decompress_stream(decoder, available_in, next_in, available_out, next_out, NULL);
    switch (result) {
    case CLUPINE_BROTLI_DECODER_SUCCESS:
    case CLUPINE_BROTLI_DECODER_NEEDS_MORE_INPUT:
    case CLUPINE_BROTLI_DECODER_NEEDS_MORE_OUTPUT:
        return (clupine_brotli_decoder_result)result;
    default:
        return CLUPINE_BROTLI_DECODER_ERROR;
    }
}

const char *clupine_brotli_decoder_error(const clupine_brotli_decoder *decoder) {
    if (decoder == NULL || !clupine_brotli_decoder_available()) {
        return "brotli decoder unavailable";
    }
    const char *text = brotli_decoder_api.error_string(brotli_decoder_api.get_error_code(decoder));
    return text != NULL ? text : "unknown brotli error";
}

// MARK: - Brotli encoding

// BrotliEncoderParameter values.
enum {
    CLUPINE_BROTLI_PARAM_QUALITY = 1,
    CLUPINE_BROTLI_PARAM_LGWIN = 2,
};

static struct {
    void *(*create_instance)(clupine_brotli_alloc, clupine_brotli_free, void *);
    void (*destroy_instance)(void *);
    int (*set_parameter)(void *, int, uint32_t);
    int (*compress_stream)(void *, int, size_t *, const uint8_t **, size_t *, uint8_t **, size_t *);
    int (*is_finished)(void *);
    int (*has_more_output)(void *);
} brotli_encoder_api;
static int brotli_encoder_loaded = 0;
static pthread_once_t brotli_encoder_once = PTHREAD_ONCE_INIT;

static void clupine_brotli_encoder_load(void) {
    static const char *const names[] = {"libbrotlienc.so.1", "libbrotlienc.1.dylib", NULL};
    void *handle = clupine_open_library(names);
    if (handle == NULL) {
        return;
    }
    CLUPINE_LOAD(handle, brotli_encoder_api.create_instance, "BrotliEncoderCreateInstance");
    CLUPINE_LOAD(handle, brotli_encoder_api.destroy_instance, "BrotliEncoderDestroyInstance");
    CLUPINE_LOAD(handle, brotli_encoder_api.set_parameter, "BrotliEncoderSetParameter");
    CLUPINE_LOAD(handle, brotli_encoder_api.compress_stream, "BrotliEncoderCompressStream");
    CLUPINE_LOAD(handle, brotli_encoder_api.is_finished, "BrotliEncoderIsFinished");
    CLUPINE_LOAD(handle, brotli_encoder_api.has_more_output, "BrotliEncoderHasMoreOutput");
    brotli_encoder_loaded = brotli_encoder_api.create_instance != NULL && brotli_encoder_api.destroy_instance != NULL
        && brotli_encoder_api.set_parameter != NULL && brotli_encoder_api.compress_stream != NULL
        && brotli_encoder_api.is_finished != NULL && brotli_encoder_api.has_more_output != NULL;
}

int clupine_brotli_encoder_available(void) {
    pthread_once(&brotli_encoder_once, clupine_brotli_encoder_load);
    return brotli_encoder_loaded;
}

clupine_brotli_encoder *clupine_brotli_encoder_create(uint32_t quality, uint32_t window_bits) {
    if (!clupine_brotli_encoder_available()) {
        return NULL;
    }
    void *encoder = brotli_encoder_api.create_instance(NULL, NULL, NULL);
    if (encoder == NULL) {
        return NULL;
    }
    if (!brotli_encoder_api.set_parameter(encoder, CLUPINE_BROTLI_PARAM_QUALITY, quality)
        || !brotli_encoder_api.set_parameter(encoder, CLUPINE_BROTLI_PARAM_LGWIN, window_bits)) {
        brotli_encoder_api.destroy_instance(encoder);
        return NULL;
    }
    return (clupine_brotli_encoder *)encoder;
}

void clupine_brotli_encoder_destroy(clupine_brotli_encoder *encoder) {
    if (encoder != NULL && clupine_brotli_encoder_available()) {
        brotli_encoder_api.destroy_instance(encoder);
    }
}

int clupine_brotli_encoder_compress(clupine_brotli_encoder *encoder, clupine_brotli_encoder_operation operation,
                                    size_t *available_in, const uint8_t **next_in,
                                    size_t *available_out, uint8_t **next_out) {
    if (encoder == NULL || !clupine_brotli_encoder_available()) {
        return 0;
    }
    return brotli_encoder_api.compress_stream(encoder, (int)operation, available_in, next_in, available_out, next_out, NULL) ? 1 : 0;
}

int clupine_brotli_encoder_is_finished(clupine_brotli_encoder *encoder) {
    if (encoder == NULL || !clupine_brotli_encoder_available()) {
        return 0;
    }
    return brotli_encoder_api.is_finished(encoder) ? 1 : 0;
}

int clupine_brotli_encoder_has_more_output(clupine_brotli_encoder *encoder) {
    if (encoder == NULL || !clupine_brotli_encoder_available()) {
        return 0;
    }
    return brotli_encoder_api.has_more_output(encoder) ? 1 : 0;
}

// MARK: - Zstandard

// ZSTD_dParameter, ZSTD_cParameter and ZSTD_EndDirective values.
enum {
    CLUPINE_ZSTD_D_WINDOW_LOG_MAX = 100,
    CLUPINE_ZSTD_C_COMPRESSION_LEVEL = 100,
    CLUPINE_ZSTD_C_WINDOW_LOG = 101,
    CLUPINE_ZSTD_C_CHECKSUM_FLAG = 201,
    CLUPINE_ZSTD_E_CONTINUE = 0,
    CLUPINE_ZSTD_E_END = 2,
};

// The error codes this file makes itself when the library is missing: ZSTD_isError treats the
// largest size_t values as errors, and this one is ZSTD_error_GENERIC's.
#define CLUPINE_ZSTD_GENERIC_ERROR ((size_t)-1)

static struct {
    unsigned (*version_number)(void);
    void *(*create_dctx)(void);
    size_t (*free_dctx)(void *);
    size_t (*dctx_set_parameter)(void *, int, int);
    size_t (*decompress_stream)(void *, clupine_zstd_output *, clupine_zstd_input *);
    void *(*create_cctx)(void);
    size_t (*free_cctx)(void *);
    size_t (*cctx_set_parameter)(void *, int, int);
    size_t (*compress_stream2)(void *, clupine_zstd_output *, clupine_zstd_input *, int);
    unsigned (*is_error)(size_t);
    const char *(*get_error_name)(size_t);
} zstd_api;
static int zstd_loaded = 0;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void clupine_zstd_load(void) {
    static const char *const names[] = {"libzstd.so.1", "libzstd.1.dylib", NULL};
    void *handle = clupine_open_library(names);
    if (handle == NULL) {
        return;
    }
    CLUPINE_LOAD(handle, zstd_api.version_number, "ZSTD_versionNumber");
    CLUPINE_LOAD(handle, zstd_api.create_dctx, "ZSTD_createDCtx");
    CLUPINE_LOAD(handle, zstd_api.free_dctx, "ZSTD_freeDCtx");
    CLUPINE_LOAD(handle, zstd_api.dctx_set_parameter, "ZSTD_DCtx_setParameter");
    CLUPINE_LOAD(handle, zstd_api.decompress_stream, "ZSTD_decompressStream");
    CLUPINE_LOAD(handle, zstd_api.create_cctx, "ZSTD_createCCtx");
    CLUPINE_LOAD(handle, zstd_api.free_cctx, "ZSTD_freeCCtx");
    CLUPINE_LOAD(handle, zstd_api.cctx_set_parameter, "ZSTD_CCtx_setParameter");
    CLUPINE_LOAD(handle, zstd_api.compress_stream2, "ZSTD_compressStream2");
    CLUPINE_LOAD(handle, zstd_api.is_error, "ZSTD_isError");
    CLUPINE_LOAD(handle, zstd_api.get_error_name, "ZSTD_getErrorName");
    int complete = zstd_api.version_number != NULL && zstd_api.create_dctx != NULL && zstd_api.free_dctx != NULL
        && zstd_api.dctx_set_parameter != NULL && zstd_api.decompress_stream != NULL && zstd_api.create_cctx != NULL
        && zstd_api.free_cctx != NULL && zstd_api.cctx_set_parameter != NULL && zstd_api.compress_stream2 != NULL
        && zstd_api.is_error != NULL && zstd_api.get_error_name != NULL;
    // The parameter functions and ZSTD_compressStream2 became stable API in 1.4.0.
    zstd_loaded = complete && zstd_api.version_number() >= 10400;
}

int clupine_zstd_available(void) {
    pthread_once(&zstd_once, clupine_zstd_load);
    return zstd_loaded;
}

clupine_zstd_decoder *clupine_zstd_decoder_create(int window_log_max) {
    if (!clupine_zstd_available()) {
        return NULL;
    }
    void *context = zstd_api.create_dctx();
    if (context == NULL) {
        return NULL;
    }
    if (zstd_api.is_error(zstd_api.dctx_set_parameter(context, CLUPINE_ZSTD_D_WINDOW_LOG_MAX, window_log_max))) {
        zstd_api.free_dctx(context);
        return NULL;
    }
    return (clupine_zstd_decoder *)context;
}

void clupine_zstd_decoder_destroy(clupine_zstd_decoder *decoder) {
    if (decoder != NULL && clupine_zstd_available()) {
        zstd_api.free_dctx(decoder);
    }
}

size_t clupine_zstd_decompress(clupine_zstd_decoder *decoder, clupine_zstd_output *output, clupine_zstd_input *input) {
    if (decoder == NULL || !clupine_zstd_available()) {
        return CLUPINE_ZSTD_GENERIC_ERROR;
    }
    return zstd_api.decompress_stream(decoder, output, input);
}

clupine_zstd_encoder *clupine_zstd_encoder_create(int level, int window_log, int checksum) {
    if (!clupine_zstd_available()) {
        return NULL;
    }
    void *context = zstd_api.create_cctx();
    if (context == NULL) {
        return NULL;
    }
    if (zstd_api.is_error(zstd_api.cctx_set_parameter(context, CLUPINE_ZSTD_C_COMPRESSION_LEVEL, level))
        || (window_log != 0 && zstd_api.is_error(zstd_api.cctx_set_parameter(context, CLUPINE_ZSTD_C_WINDOW_LOG, window_log)))
        || zstd_api.is_error(zstd_api.cctx_set_parameter(context, CLUPINE_ZSTD_C_CHECKSUM_FLAG, checksum ? 1 : 0))) {
        zstd_api.free_cctx(context);
        return NULL;
    }
    return (clupine_zstd_encoder *)context;
}

void clupine_zstd_encoder_destroy(clupine_zstd_encoder *encoder) {
    if (encoder != NULL && clupine_zstd_available()) {
        zstd_api.free_cctx(encoder);
    }
}

size_t clupine_zstd_compress(clupine_zstd_encoder *encoder, clupine_zstd_output *output, clupine_zstd_input *input, int end) {
    if (encoder == NULL || !clupine_zstd_available()) {
        return CLUPINE_ZSTD_GENERIC_ERROR;
    }
    return zstd_api.compress_stream2(encoder, output, input, end ? CLUPINE_ZSTD_E_END : CLUPINE_ZSTD_E_CONTINUE);
}

int clupine_zstd_is_error(size_t code) {
    if (!clupine_zstd_available()) {
        return 1;
    }
    return zstd_api.is_error(code) ? 1 : 0;
}

const char *clupine_zstd_error_name(size_t code) {
    if (!clupine_zstd_available()) {
        return "zstd unavailable";
    }
    const char *name = zstd_api.get_error_name(code);
    return name != NULL ? name : "unknown zstd error";
}
