#ifndef IAPCTL_CZLIB_SHIM_H
#define IAPCTL_CZLIB_SHIM_H
#include <string.h>
#include <zlib.h>

/// Raw deflate (no zlib header) of `in` with a preset dictionary, at `level`. Returns the compressed
/// length, or 0 when it did not fit in `capacity` or zlib failed.
static inline size_t iapctl_deflate_raw(const unsigned char *in, size_t length, const unsigned char *dict,
                                        size_t dict_length, int level, unsigned char *out, size_t capacity) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    size_t produced = 0;
    if (dict_length == 0 || deflateSetDictionary(&z, dict, (uInt)dict_length) == Z_OK) {
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)length;
        z.next_out = out;
        z.avail_out = (uInt)capacity;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) produced = capacity - z.avail_out;
    }
    deflateEnd(&z);
    return produced;
}

/// Inflates raw deflate data made by iapctl_deflate_raw with the same dictionary into exactly
/// `expected` bytes. Returns 1 on success, 0 when the data is corrupt or has another length.
static inline int iapctl_inflate_raw(const unsigned char *in, size_t length, const unsigned char *dict,
                                     size_t dict_length, unsigned char *out, size_t expected) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return 0;
    int ok = 0;
    if (dict_length == 0 || inflateSetDictionary(&z, dict, (uInt)dict_length) == Z_OK) {
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)length;
        z.next_out = out;
        z.avail_out = (uInt)expected;
        int rc = inflate(&z, Z_FINISH);
        ok = rc == Z_STREAM_END && z.avail_out == 0 && z.avail_in == 0;
    }
    inflateEnd(&z);
    return ok;
}
#endif
