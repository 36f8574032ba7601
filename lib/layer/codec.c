/* Streaming gzip/zstd/plain decoding with the diff_id hash; see
 * layer/codec.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "base/buf.h"
#include "layer/codec.h"
#include "oci/digest.h"

/* zstd frames may ask for windows up to 2 GiB; 128 MiB (zstd's own default
 * ceiling) is what real layers use and bounds our memory. */
#define ZSTD_WINDOW_LOG_MAX 27
#define INBUF (128 * 1024)
/* Real streams never go long without output; an endless run of empty
 * gzip members or zstd skippable frames would otherwise be read forever. */
#define SILENT_MAX ((uint64_t)64 << 20)

struct layer_codec {
	const struct layer_reader *r;
	enum layer_codec_kind kind;
	unsigned char in[INBUF];
	size_t in_pos, in_len;
	int in_eof;
	z_stream z;
	int z_ready;
	int gz_member_done;	/* inflate returned Z_STREAM_END */
	ZSTD_DCtx *zd;
	size_t zstd_hint;	/* 0 once the last frame is complete */
	int done;
	uint64_t silent;	/* compressed bytes read since the last output */
	struct sha256 sha;	/* the diff_id: the uncompressed stream */
	char magic[16];
};

static void say(char *why, size_t len, const char *fmt, const char *arg)
{
	if (why && len)
		snprintf(why, len, fmt, arg);
}

/* Refill the input buffer when it is empty. 1 data, 0 end, -1 error. */
static int refill(struct layer_codec *c, char *why, size_t whylen)
{
	if (c->in_pos < c->in_len)
		return 1;
	if (c->in_eof)
		return 0;
	for (;;) {
		ssize_t n = c->r->read(c->r->ctx, c->in, sizeof c->in);
		if (n < 0) {
			say(why, whylen, "%s", "reading the layer failed");
			return -1;
		}
		if (n == 0) {
			c->in_eof = 1;
			c->in_pos = c->in_len = 0;
			return 0;
		}
		c->in_pos = 0;
		c->in_len = (size_t)n;
		c->silent += (uint64_t)n;
		if (c->kind != CODEC_PLAIN && c->silent > SILENT_MAX) {
			say(why, whylen, "%s", c->kind == CODEC_GZIP
				? "gzip: 64 MiB of compressed stream without any data"
				: "zstd: 64 MiB of compressed stream without any data");
			return -1;
		}
		return 1;
	}
}

struct layer_codec *codec_open(const struct layer_reader *r, char *why, size_t whylen)
{
	struct layer_codec *c = calloc(1, sizeof *c);
	if (!c) {
		say(why, whylen, "%s", "out of memory");
		return NULL;
	}
	c->r = r;
	/* Collect up to four bytes of magic across short reads. */
	while (c->in_len < 4 && !c->in_eof) {
		ssize_t n = r->read(r->ctx, c->in + c->in_len, sizeof c->in - c->in_len);
		if (n < 0) {
			say(why, whylen, "%s", "reading the layer failed");
			free(c);
			return NULL;
		}
		if (n == 0)
			c->in_eof = 1;
		c->in_len += (size_t)n;
	}
	for (size_t i = 0, o = 0; i < 4 && i < c->in_len; i++)
		o += (size_t)snprintf(c->magic + o, sizeof c->magic - o, "%s%02x", i ? " " : "",
				      c->in[i]);
	if (c->in_len >= 2 && c->in[0] == 0x1f && c->in[1] == 0x8b) {
		c->kind = CODEC_GZIP;
		if (inflateInit2(&c->z, 15 + 16) != Z_OK) {
			say(why, whylen, "%s", "gzip: cannot initialise zlib");
			free(c);
			return NULL;
		}
		c->z_ready = 1;
	} else if (c->in_len >= 4 && c->in[0] == 0x28 && c->in[1] == 0xb5 && c->in[2] == 0x2f &&
		   c->in[3] == 0xfd) {
		c->kind = CODEC_ZSTD;
		c->zd = ZSTD_createDCtx();
		if (!c->zd || ZSTD_isError(ZSTD_DCtx_setParameter(c->zd, ZSTD_d_windowLogMax,
								  ZSTD_WINDOW_LOG_MAX))) {
			say(why, whylen, "%s", "zstd: cannot initialise the decoder");
			ZSTD_freeDCtx(c->zd);
			free(c);
			return NULL;
		}
		c->zstd_hint = 1;
	} else {
		c->kind = CODEC_PLAIN;
	}
	sha256_begin(&c->sha);
	return c;
}

static ssize_t read_plain(struct layer_codec *c, unsigned char *buf, size_t len, char *why,
			  size_t whylen)
{
	if (c->in_pos < c->in_len)
		return (ssize_t)buf_take(buf, len, c->in, &c->in_pos, c->in_len);
	if (c->in_eof)
		return 0;
	/* Straight into the caller's buffer: no copy for a plain layer. */
	ssize_t n = c->r->read(c->r->ctx, buf, len);
	if (n < 0) {
		say(why, whylen, "%s", "reading the layer failed");
		return -1;
	}
	if (n == 0)
		c->in_eof = 1;
	return n;
}

static ssize_t read_gzip(struct layer_codec *c, unsigned char *buf, size_t len, char *why,
			 size_t whylen)
{
	c->z.next_out = buf;
	c->z.avail_out = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	while (c->z.avail_out == len) {
		if (c->gz_member_done) {
			/* Another gzip member may follow (multistream, as docker and
			 * Go's reader accept); anything else is trailing garbage. */
			int more = refill(c, why, whylen);
			if (more < 0)
				return -1;
			if (more == 0) {
				c->done = 1;
				return 0;
			}
			if (c->in[c->in_pos] != 0x1f) {
				say(why, whylen, "%s", "gzip: trailing data after the compressed stream");
				return -1;
			}
			inflateReset(&c->z);
			c->gz_member_done = 0;
		}
		int got = refill(c, why, whylen);
		if (got < 0)
			return -1;
		c->z.next_in = c->in + c->in_pos;
		c->z.avail_in = (uInt)(c->in_len - c->in_pos);
		int rc = inflate(&c->z, Z_NO_FLUSH);
		c->in_pos = c->in_len - c->z.avail_in;
		if (rc == Z_STREAM_END) {
			c->gz_member_done = 1;
			continue;
		}
		if (rc == Z_BUF_ERROR && got == 0) {
			say(why, whylen, "%s", "gzip: truncated stream");
			return -1;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			say(why, whylen, "gzip: corrupt stream (%s)", c->z.msg ? c->z.msg : "data error");
			return -1;
		}
	}
	return (ssize_t)(len - c->z.avail_out);
}

static ssize_t read_zstd(struct layer_codec *c, unsigned char *buf, size_t len, char *why,
			 size_t whylen)
{
	ZSTD_outBuffer out = {buf, len, 0};
	while (out.pos == 0) {
		int got = refill(c, why, whylen);
		if (got < 0)
			return -1;
		if (got == 0 && c->zstd_hint == 0) {
			c->done = 1;
			return 0;
		}
		ZSTD_inBuffer in = {c->in + c->in_pos, c->in_len - c->in_pos, 0};
		size_t rc = ZSTD_decompressStream(c->zd, &out, &in);
		c->in_pos += in.pos;
		if (ZSTD_isError(rc)) {
			say(why, whylen, "zstd: corrupt stream (%s)", ZSTD_getErrorName(rc));
			return -1;
		}
		c->zstd_hint = rc;
		/* No input left, none consumed and nothing produced: the last
		 * frame stops in the middle. */
		if (got == 0 && out.pos == 0 && rc != 0) {
			say(why, whylen, "%s", "zstd: truncated stream");
			return -1;
		}
	}
	return (ssize_t)out.pos;
}

ssize_t codec_read(struct layer_codec *c, unsigned char *buf, size_t len, char *why,
		   size_t whylen)
{
	ssize_t n;
	if (c->done || len == 0)
		return 0;
	switch (c->kind) {
	case CODEC_GZIP:
		n = read_gzip(c, buf, len, why, whylen);
		break;
	case CODEC_ZSTD:
		n = read_zstd(c, buf, len, why, whylen);
		break;
	default:
		n = read_plain(c, buf, len, why, whylen);
		break;
	}
	if (n > 0) {
		sha256_feed(&c->sha, buf, (size_t)n);
		c->silent = 0;
	}
	return n;
}

void codec_diff_id(struct layer_codec *c, unsigned char out[32])
{
	sha256_peek(&c->sha, out);
}

const char *codec_magic_hex(const struct layer_codec *c)
{
	return c->magic[0] ? c->magic : "empty";
}

void codec_free(struct layer_codec *c)
{
	if (!c)
		return;
	if (c->z_ready)
		inflateEnd(&c->z);
	ZSTD_freeDCtx(c->zd);
	mbedtls_sha256_free(&c->sha.ctx);
	free(c);
}
