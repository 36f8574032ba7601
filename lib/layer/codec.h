/* The decompression half of layer extraction (isolation.md §12.1 step 1):
 * detect the codec by magic (1f 8b gzip, 28 b5 2f fd zstd, anything else
 * is taken as a plain tar), inflate while hashing the uncompressed stream
 * with sha256 for the diff_id. The compressed bytes are pulled from a
 * layer_reader to its end, so a caller hashing them sees every byte. */
#ifndef KERN_LAYER_CODEC_H
#define KERN_LAYER_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "layer/unpack.h"

enum layer_codec_kind { CODEC_PLAIN, CODEC_GZIP, CODEC_ZSTD };

struct layer_codec;

/* Reads the magic. NULL with why on a read error or no memory. */
struct layer_codec *codec_open(const struct layer_reader *r, char *why, size_t whylen);

/* Up to len uncompressed bytes into buf: >0 bytes, 0 at the clean end of
 * the compressed stream, -1 with why (truncated or corrupt stream,
 * trailing garbage, read error). */
ssize_t codec_read(struct layer_codec *c, unsigned char *buf, size_t len, char *why,
		   size_t whylen);

/* sha256 of every uncompressed byte returned so far (the diff_id once
 * codec_read returned 0). */
void codec_diff_id(struct layer_codec *c, unsigned char out[32]);

/* The magic's first bytes as hex, for "unknown format" messages. */
const char *codec_magic_hex(const struct layer_codec *c);

void codec_free(struct layer_codec *c);

#endif
