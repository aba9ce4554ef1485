#ifndef IAPCTL_CZLIB_SHIM_H
#define IAPCTL_CZLIB_SHIM_H
#include <string.h>
#include <zlib.h>

/// Raw deflate (no zlib header) of `in` with a preset dictionary, at `level`. Returns the compressed
/// length, or 0 when it did not fit in `capacity` or zlib failed.
///
/// Each thread keeps one stream (its ~270 KB of state lives as long as the thread): deflateInit2
/// allocates and clears that state, which cost more than compressing a 2 KB ledger item.
static inline size_t iapctl_deflate_raw(const unsigned char *in, size_t length, const unsigned char *dict,
                                        size_t dict_length, int level, unsigned char *out, size_t capacity) {
    static __thread z_stream z;
    static __thread int ready = 0;
    static __thread int ready_level = 0;
    if (ready && ready_level != level) {
        deflateEnd(&z);
        ready = 0;
    }
    if (!ready) {
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
        ready = 1;
        ready_level = level;
    } else if (deflateReset(&z) != Z_OK) {
        return 0;
    }
    if (dict_length > 0 && deflateSetDictionary(&z, dict, (uInt)dict_length) != Z_OK) return 0;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)length;
    z.next_out = out;
    z.avail_out = (uInt)capacity;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) return 0;
    return capacity - z.avail_out;
}

/// Inflates raw deflate data made by iapctl_deflate_raw with the same dictionary into exactly
/// `expected` bytes. Returns 1 on success, 0 when the data is corrupt or has another length.
static inline int iapctl_inflate_raw(const unsigned char *in, size_t length, const unsigned char *dict,
                                     size_t dict_length, unsigned char *out, size_t expected) {
    static __thread z_stream z;
    static __thread int ready = 0;
    if (!ready) {
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, -15) != Z_OK) return 0;
        ready = 1;
    } else if (inflateReset(&z) != Z_OK) {
        return 0;
    }
    if (dict_length > 0 && inflateSetDictionary(&z, dict, (uInt)dict_length) != Z_OK) return 0;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)length;
    z.next_out = out;
    z.avail_out = (uInt)expected;
    int rc = inflate(&z, Z_FINISH);
    return rc == Z_STREAM_END && z.avail_out == 0 && z.avail_in == 0;
}
#endif
