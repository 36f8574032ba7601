/* The checks of isolation.md §12.1 that need the raw tar records, which
 * libarchive does not report: a small pass over the 512-byte headers of
 * the decompressed stream as it flows past, in front of libarchive. It
 * follows only the framing (header, size, padding) and the extension
 * records (x, g, L, K); it is not a second tar reader. It also records
 * where each member starts so the extractor can check that libarchive
 * framed the stream the same way. */
#ifndef KERN_TAR_SCAN_H
#define KERN_TAR_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "layer/unpack.h"

#define TAR_BLOCK 512
#define TAR_META_MAX ((size_t)1 << 20)	/* an L/K/x/g record over 1 MiB is refused */
#define TAR_ZERO_BLOCKS_MAX 4096	/* zero blocks allowed at the end */

/* One member as the raw pass framed it. */
struct tar_scan_entry {
	uint64_t start;		/* offset of its first record (x/g/L/K or the header) */
	uint64_t size;		/* data bytes (PAX size overrides the header) */
	char type;		/* the header's typeflag */
};

struct tar_scan {
	const struct unpack_limits *lim;
	uint64_t off;		/* bytes seen so far */
	int state;
	unsigned char blk[TAR_BLOCK];
	size_t blen;		/* bytes of the current header collected */
	uint64_t skip;		/* data and padding left of the current member */
	/* an extension record being collected */
	char meta_type;
	unsigned char *meta;
	size_t meta_len, meta_size;
	uint64_t meta_pad;
	/* extension records seen for the next member */
	int have_start;
	uint64_t start;
	unsigned seen;		/* bit per record type: x g L K */
	int pax_path, pax_linkpath, pax_size_set;
	uint64_t pax_size;
	uint64_t entries;
	uint64_t zero_blocks;
	/* members framed but not yet claimed by the extractor */
	struct tar_scan_entry *q;
	size_t qhead, qlen, qcap;
	int failed;
	int bad_start;		/* the very first header is not a tar header */
	char why[320];
};

void tar_scan_init(struct tar_scan *s, const struct unpack_limits *lim);
void tar_scan_free(struct tar_scan *s);
/* Feed the next n bytes. 0, or -1 with s->why (sticky). */
int tar_scan_feed(struct tar_scan *s, const unsigned char *p, size_t n);
/* The stream ended: -1 with s->why unless it ended after the end marker. */
int tar_scan_finish(struct tar_scan *s);
/* The oldest framed member not yet claimed: 1, or 0 when none. */
int tar_scan_next(struct tar_scan *s, struct tar_scan_entry *e);

#endif
