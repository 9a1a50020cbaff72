/*
 * miniaudio.h — a stand-in for the miniaudio decoder API, written for
 * bagen-data's build of the Ollama server (see the Makefile's ollama target).
 *
 * The Go module archive of github.com/ollama/ollama omits llama.cpp's vendor/
 * directory, and miniaudio is not packaged by Debian. mtmd-helper.cpp only
 * uses miniaudio to decode audio attachments for multimodal models; bagen-data
 * never sends audio, so this header declares exactly the types and functions
 * that file uses and makes every decode fail. Audio input is therefore
 * disabled: a request carrying audio gets "failed to decode audio" from the
 * server instead of being decoded.
 */
#ifndef BAGEN_DATA_MINIAUDIO_H
#define BAGEN_DATA_MINIAUDIO_H

#include <stddef.h>

#ifndef MA_API
#define MA_API static
#endif

typedef int ma_result;
typedef unsigned int ma_uint32;
typedef unsigned long long ma_uint64;

#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)

typedef enum {
    ma_format_unknown = 0,
    ma_format_u8 = 1,
    ma_format_s16 = 2,
    ma_format_s24 = 3,
    ma_format_s32 = 4,
    ma_format_f32 = 5
} ma_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    ma_decoder_config config;
} ma_decoder;

#if defined(__GNUC__)
#define MA_UNUSED_FN __attribute__((unused))
#else
#define MA_UNUSED_FN
#endif

MA_API MA_UNUSED_FN ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sampleRate)
{
    ma_decoder_config c;
    c.format = format;
    c.channels = channels;
    c.sampleRate = sampleRate;
    return c;
}

/* ma_decoder_init_memory always fails: audio decoding is not built in. */
MA_API MA_UNUSED_FN ma_result ma_decoder_init_memory(const void* data, size_t size, const ma_decoder_config* config, ma_decoder* decoder)
{
    (void)data;
    (void)size;
    if (decoder != NULL && config != NULL) {
        decoder->config = *config;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API MA_UNUSED_FN ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder* decoder, ma_uint64* length)
{
    (void)decoder;
    if (length != NULL) {
        *length = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API MA_UNUSED_FN ma_result ma_decoder_read_pcm_frames(ma_decoder* decoder, void* frames, ma_uint64 frameCount, ma_uint64* framesRead)
{
    (void)decoder;
    (void)frames;
    (void)frameCount;
    if (framesRead != NULL) {
        *framesRead = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API MA_UNUSED_FN ma_result ma_decoder_uninit(ma_decoder* decoder)
{
    (void)decoder;
    return MA_SUCCESS;
}

#endif /* BAGEN_DATA_MINIAUDIO_H */
