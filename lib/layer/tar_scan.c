/* See tar_scan.h. Every rule here either mirrors how libarchive frames a
 * stream (so both agree on where each header lies) or refuses what would
 * make them disagree. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer/tar_scan.h"

enum { S_HEADER, S_META, S_DATA, S_END };
enum { SEEN_X = 1, SEEN_G = 2, SEEN_L = 4, SEEN_K = 8 };

#define QUEUE_MAX 65536	/* members framed ahead of libarchive: bounded by its read-ahead */

static int refuse(struct tar_scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct tar_scan *s, const char *fmt, ...)
{
	va_list ap;
	if (s->failed)
		return -1;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof s->why, fmt, ap);
	va_end(ap);
	s->failed = 1;
	return -1;
}

void tar_scan_init(struct tar_scan *s, const struct unpack_limits *lim)
{
	memset(s, 0, sizeof *s);
	s->lim = lim;
	s->state = S_HEADER;
}

void tar_scan_free(struct tar_scan *s)
{
	free(s->meta);
	free(s->q);
	s->meta = NULL;
	s->q = NULL;
}

static uint64_t round_block(uint64_t n)
{
	return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A numeric header field the way libarchive reads it (base-256 when the
 * top bit is set, else octal after blanks), but refusing what libarchive
 * would silently truncate: a sign, trailing junk, overflow. */
static int parse_number(const unsigned char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return -1;	/* negative */
		for (i = 0; i < n; i++) {
			unsigned char c = i == 0 ? (unsigned char)(f[0] & 0x3f) : f[i];
			if (v >> 55)
				return -1;
			v = v << 8 | c;
		}
		if (v > INT64_MAX)
			return -1;
		*out = v;
		return 0;
	}
	while (i < n && (f[i] == ' ' || f[i] == '\t'))
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != 0)
			return -1;
	*out = v;
	return 0;
}

/* libarchive's checksum rule: octal digits, blanks or NULs in the field;
 * the sum of the header with the field as blanks, unsigned or signed. */
static int checksum_ok(const unsigned char *h)
{
	uint64_t want = 0;
	long usum = 0, ssum = 0;
	size_t i = 0;
	for (i = 148; i < 156; i++)
		if (h[i] != ' ' && h[i] != 0 && (h[i] < '0' || h[i] > '7'))
			return 0;
	i = 148;
	while (i < 156 && (h[i] == ' ' || h[i] == '\t'))
		i++;
	for (; i < 156 && h[i] >= '0' && h[i] <= '7'; i++)
		want = want << 3 | (uint64_t)(h[i] - '0');
	for (i = 0; i < TAR_BLOCK; i++) {
		unsigned char c = (i >= 148 && i < 156) ? ' ' : h[i];
		usum += c;
		ssum += (signed char)c;
	}
	return (long)want == usum || (long)want == ssum;
}

static const char *type_name(char t)
{
	switch (t) {
	case 'S': return "a GNU sparse file";
	case 'M': return "a GNU multivolume continuation";
	case '6': return "a FIFO";
	case 'V': return "a GNU volume label";
	case 'N': return "an old GNU long-name record";
	case 'D': return "a GNU dump directory";
	case 'A': return "a Solaris ACL record";
	case 'X': return "a Solaris extended header";
	default: return "an unsupported entry type";
	}
}

static int queue_push(struct tar_scan *s, const struct tar_scan_entry *e)
{
	if (s->qlen == s->qcap) {
		size_t cap = s->qcap ? s->qcap * 2 : 64;
		if (cap > QUEUE_MAX)
			return refuse(s, "tar headers run too far ahead of the reader");
		struct tar_scan_entry *q = malloc(cap * sizeof *q);
		if (!q)
			return refuse(s, "out of memory");
		for (size_t i = 0; i < s->qlen; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		free(s->q);
		s->q = q;
		s->qcap = cap;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qlen) % s->qcap] = *e;
	s->qlen++;
	return 0;
}

int tar_scan_next(struct tar_scan *s, struct tar_scan_entry *e)
{
	if (!s->qlen)
		return 0;
	*e = s->q[s->qhead];
	s->qhead = (s->qhead + 1) % s->qcap;
	s->qlen--;
	return 1;
}

/* The decimal value of a PAX `size`: digits only. */
static int parse_decimal(const unsigned char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

static int key_is(const unsigned char *k, size_t n, const char *name)
{
	return n == strlen(name) && memcmp(k, name, n) == 0;
}

/* Records `LEN key=value\n`, parsed strictly: libarchive stops at the
 * first malformed one and ignores the rest, so refusing keeps us agreed. */
static int parse_pax(struct tar_scan *s, int global)
{
	const unsigned char *p = s->meta, *end = s->meta + s->meta_len;
	const char *kind = global ? "pax global header" : "pax header";
	while (p < end) {
		size_t len = 0;
		const unsigned char *q = p;
		if (*q == 0 && all_zero(q, (size_t)(end - q)))
			break;	/* NUL padding after the last record */
		while (q < end && *q >= '0' && *q <= '9') {
			len = len * 10 + (size_t)(*q - '0');
			if (len > 999999)
				return refuse(s, "%s record over 1 MiB", kind);
			q++;
		}
		if (q == p || q >= end || *q != ' ' || len < (size_t)(q - p) + 4 ||
		    len > (size_t)(end - p) || p[len - 1] != '\n')
			return refuse(s, "malformed %s at offset %llu", kind,
				      (unsigned long long)s->start);
		const unsigned char *key = q + 1, *rec_end = p + len - 1;
		const unsigned char *eq = memchr(key, '=', (size_t)(rec_end - key));
		if (!eq || eq == key || memchr(key, 0, (size_t)(eq - key)))
			return refuse(s, "malformed %s at offset %llu", kind,
				      (unsigned long long)s->start);
		size_t klen = (size_t)(eq - key), vlen = (size_t)(rec_end - eq - 1);
		const unsigned char *val = eq + 1;
		int is_path = key_is(key, klen, "path"), is_link = key_is(key, klen, "linkpath");
		if ((klen >= 11 && memcmp(key, "GNU.sparse.", 11) == 0) ||
		    key_is(key, klen, "SUN.holesdata") || key_is(key, klen, "SCHILY.realsize"))
			return refuse(s, "sparse file (%s key '%.*s')", kind, (int)klen, key);
		if (global && (is_path || is_link || key_is(key, klen, "size")))
			return refuse(s, "pax global header sets '%.*s'", (int)klen, key);
		if (is_path || is_link) {
			int *seen = is_path ? &s->pax_path : &s->pax_linkpath;
			if (*seen)
				return refuse(s, "two sources for one field: pax header sets '%.*s' twice",
					      (int)klen, key);
			if (memchr(val, 0, vlen))
				return refuse(s, "pax %.*s contains NUL", (int)klen, key);
			*seen = 1;
		} else if (key_is(key, klen, "size")) {
			if (s->pax_size_set)
				return refuse(s, "two sources for one field: pax header sets 'size' twice");
			if (parse_decimal(val, vlen, &s->pax_size) < 0)
				return refuse(s, "malformed pax size '%.*s'", (int)(vlen > 40 ? 40 : vlen),
					      val);
			s->pax_size_set = 1;
		}
		p += len;
	}
	return 0;
}

/* A GNU L or K body: a name, NUL-terminated; bytes after the NUL would be
 * a second, hidden name. */
static int check_long_name(struct tar_scan *s)
{
	const unsigned char *nul = memchr(s->meta, 0, s->meta_len);
	if (nul && !all_zero(nul, s->meta_len - (size_t)(nul - s->meta)))
		return refuse(s, "GNU long %s contains NUL", s->meta_type == 'L' ? "name" : "link name");
	return 0;
}

static int meta_done(struct tar_scan *s)
{
	switch (s->meta_type) {
	case 'x':
		return parse_pax(s, 0);
	case 'g':
		return parse_pax(s, 1);
	default:
		return check_long_name(s);
	}
}

static void reset_member(struct tar_scan *s)
{
	s->have_start = 0;
	s->seen = 0;
	s->pax_path = s->pax_linkpath = s->pax_size_set = 0;
	s->pax_size = 0;
}

static int header_block(struct tar_scan *s)
{
	const unsigned char *h = s->blk;
	uint64_t hdr_off = s->off - TAR_BLOCK, size;
	char t = (char)h[156];

	if (all_zero(h, TAR_BLOCK)) {
		if (s->seen)
			return refuse(s, "extension header without a member at offset %llu",
				      (unsigned long long)s->start);
		s->state = S_END;
		s->zero_blocks = 1;
		return 0;
	}
	if (!checksum_ok(h)) {
		s->bad_start = hdr_off == 0;
		return refuse(s, "bad tar header checksum at offset %llu", (unsigned long long)hdr_off);
	}
	if (!s->have_start) {
		s->have_start = 1;
		s->start = hdr_off;
	}
	if (parse_number(h + 124, 12, &size) < 0)
		return refuse(s, "malformed size field in the header at offset %llu",
			      (unsigned long long)hdr_off);
	/* GNU headers carry old-style sparse maps that libarchive honours
	 * whatever the typeflag says. */
	if (memcmp(h + 257, "ustar  \0", 8) == 0 && (h[386] || h[482] || h[483]))
		return refuse(s, "sparse file (GNU sparse map in the header at offset %llu)",
			      (unsigned long long)hdr_off);

	if (t == 'x' || t == 'g' || t == 'L' || t == 'K') {
		unsigned bit = t == 'x' ? SEEN_X : t == 'g' ? SEEN_G : t == 'L' ? SEEN_L : SEEN_K;
		if (size > TAR_META_MAX)
			return refuse(s, "%s record over 1 MiB (%llu bytes)",
				      t == 'x' || t == 'g' ? "pax" : "GNU long-name",
				      (unsigned long long)size);
		if (s->seen & bit)
			return refuse(s, "two sources for one field: two '%c' records for one member", t);
		if ((bit == SEEN_L && s->pax_path) || (bit == SEEN_K && s->pax_linkpath))
			return refuse(s, "two sources for one field: GNU '%c' record and pax %s", t,
				      bit == SEEN_L ? "path" : "linkpath");
		s->seen |= bit;
		s->meta_type = t;
		s->meta_size = (size_t)size;
		s->meta_len = 0;
		s->meta_pad = round_block(size) - size;
		if (!s->meta && !(s->meta = malloc(TAR_META_MAX)))
			return refuse(s, "out of memory");
		s->state = S_META;
		if (size == 0) {
			s->state = S_HEADER;
			return meta_done(s);
		}
		return 0;
	}
	if ((s->seen & SEEN_L) && s->pax_path)
		return refuse(s, "two sources for one field: GNU 'L' record and pax path");
	if ((s->seen & SEEN_K) && s->pax_linkpath)
		return refuse(s, "two sources for one field: GNU 'K' record and pax linkpath");

	switch (t) {
	case '0': case 0: case '7':
		break;
	case '1': case '2': case '3': case '4': case '5':
		/* libarchive ignores these sizes; another reader would skip the
		 * data: a member could hide in it for one and not the other. */
		if (size || (s->pax_size_set && s->pax_size))
			return refuse(s, "%s header with non-zero size at offset %llu",
				      t == '1' ? "hardlink" : t == '2' ? "symlink" : t == '5' ? "directory" : "device",
				      (unsigned long long)hdr_off);
		break;
	default:
		if (t >= 0x21 && t < 0x7f)
			return refuse(s, "%s (typeflag '%c') at offset %llu", type_name(t), t,
				      (unsigned long long)hdr_off);
		return refuse(s, "unsupported entry type (typeflag 0x%02x) at offset %llu",
			      (unsigned char)t, (unsigned long long)hdr_off);
	}
	if (s->pax_size_set)
		size = s->pax_size;
	if (++s->entries > s->lim->max_entries)
		return refuse(s, "inode bomb: more than %llu entries",
			      (unsigned long long)s->lim->max_entries);
	if (size > s->lim->max_member)
		return refuse(s, "decompression bomb: a member of %llu bytes (limit %llu)",
			      (unsigned long long)size, (unsigned long long)s->lim->max_member);
	/* Refuse as soon as the declared sizes prove the total will exceed the
	 * limit, rather than after writing it. */
	if (round_block(size) > s->lim->max_total || s->off + round_block(size) > s->lim->max_total)
		return refuse(s, "decompression bomb: the layer exceeds %llu bytes uncompressed",
			      (unsigned long long)s->lim->max_total);
	struct tar_scan_entry e = {s->start, size, t};
	if (queue_push(s, &e) < 0)
		return -1;
	reset_member(s);
	s->skip = round_block(size);
	s->state = s->skip ? S_DATA : S_HEADER;
	return 0;
}

int tar_scan_feed(struct tar_scan *s, const unsigned char *p, size_t n)
{
	if (s->failed)
		return -1;
	/* The running total, end blocks included (s->off never exceeds it). */
	if (n > s->lim->max_total - s->off)
		return refuse(s, "decompression bomb: the layer exceeds %llu bytes uncompressed",
			      (unsigned long long)s->lim->max_total);
	while (n > 0) {
		size_t take;
		switch (s->state) {
		case S_HEADER:
			take = TAR_BLOCK - s->blen;
			if (take > n)
				take = n;
			memcpy(s->blk + s->blen, p, take);
			s->blen += take;
			s->off += take;
			if (s->blen == TAR_BLOCK) {
				s->blen = 0;
				if (header_block(s) < 0)
					return -1;
			}
			break;
		case S_META:
			if (s->meta_len < s->meta_size) {
				take = s->meta_size - s->meta_len;
				if (take > n)
					take = n;
				memcpy(s->meta + s->meta_len, p, take);
				s->meta_len += take;
			} else {
				take = s->meta_pad < n ? (size_t)s->meta_pad : n;
				s->meta_pad -= take;
			}
			s->off += take;
			if (s->meta_len == s->meta_size && s->meta_pad == 0) {
				s->state = S_HEADER;
				if (meta_done(s) < 0)
					return -1;
			}
			break;
		case S_DATA:
			take = s->skip < n ? (size_t)s->skip : n;
			s->skip -= take;
			s->off += take;
			if (s->skip == 0)
				s->state = S_HEADER;
			break;
		default: /* S_END: only zero blocks, at most TAR_ZERO_BLOCKS_MAX */
			take = n;
			if (!all_zero(p, n))
				return refuse(s, "hidden trailing member: data after the end-of-archive marker");
			s->blen += take;
			s->zero_blocks += s->blen / TAR_BLOCK;
			s->blen %= TAR_BLOCK;
			s->off += take;
			if (s->zero_blocks > TAR_ZERO_BLOCKS_MAX)
				return refuse(s, "more than %d zero blocks after the end of the archive",
					      TAR_ZERO_BLOCKS_MAX);
			break;
		}
		p += take;
		n -= take;
	}
	return 0;
}

int tar_scan_finish(struct tar_scan *s)
{
	if (s->failed)
		return -1;
	if (s->state == S_END) {
		if (s->blen && s->zero_blocks + 1 > TAR_ZERO_BLOCKS_MAX)
			return refuse(s, "more than %d zero blocks after the end of the archive",
				      TAR_ZERO_BLOCKS_MAX);
		return 0;
	}
	if (s->state == S_HEADER && s->blen == 0 && !s->seen)
		return refuse(s, "truncated: the stream ends without an end-of-archive marker");
	return refuse(s, "truncated: the stream ends inside a %s",
		      s->state == S_DATA ? "member's data" : s->state == S_META ? "extension record" : "header");
}
