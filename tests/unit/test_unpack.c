/* The member path guard, the whiteout rules, the raw tar pass and the
 * directory map (isolation.md §12.1, layer processing per layer). */
#include <stdint.h>
#include <stdlib.h>

#include "layer/dirmap.h"
#include "layer/member_path.h"
#include "layer/tar_scan.h"
#include "unit.h"
#include "layer/unpack.h"

static const char *clean(const char *in)
{
	static char out[MEMBER_PATH_MAX + 1];
	const char *why;
	return member_path_clean(in, strlen(in), out, sizeof out, &why) == 0 ? out : NULL;
}

TEST(member_path_accepts_and_normalises)
{
	CHECK_STR(clean("etc/passwd"), "etc/passwd");
	CHECK_STR(clean("./etc//passwd/"), "etc/passwd");
	CHECK_STR(clean("./"), "");
	CHECK_STR(clean("."), "");
	CHECK_STR(clean("a/./b/."), "a/b");
	CHECK_STR(clean("..a/b..c/...d"), "..a/b..c/...d");
	CHECK_STR(clean("sub/.kern-x"), "sub/.kern-x");	/* reserved only at the top */
	CHECK_STR(clean(".kernel"), ".kernel");
}

TEST(member_path_refuses_escapes)
{
	CHECK(clean("../x") == NULL);
	CHECK(clean("/etc/x") == NULL);
	CHECK(clean("a/../../x") == NULL);
	CHECK(clean("a/..") == NULL);
	CHECK(clean("..") == NULL);
	CHECK(clean("./../x") == NULL);
	CHECK(clean("a/b/../c") == NULL);	/* any '..', even one that stays inside */
	CHECK(clean("//x") == NULL);
	CHECK(clean("") == NULL);
	CHECK(clean(".kern-stg-0-x") == NULL);
	CHECK(clean("./.kern-x/y") == NULL);
}

TEST(member_path_refuses_nul_and_length)
{
	char out[MEMBER_PATH_MAX + 1], big[MEMBER_PATH_MAX + 2];
	const char *why;
	CHECK(member_path_clean("a\0/../x", 7, out, sizeof out, &why) < 0);
	memset(big, 'a', sizeof big);
	for (size_t i = 1; i < sizeof big - 1; i += 2)
		big[i] = '/';
	CHECK(member_path_clean(big, MEMBER_PATH_MAX, out, sizeof out, &why) == 0);
	CHECK(member_path_clean(big, MEMBER_PATH_MAX + 1, out, sizeof out, &why) < 0);
	memset(big, 'n', 256);
	CHECK(member_path_clean(big, 255, out, sizeof out, &why) == 0);
	CHECK(member_path_clean(big, 256, out, sizeof out, &why) < 0);
}

static int classify(const char *path, char *target, enum member_kind *kind)
{
	const char *why;
	return member_classify(path, target, MEMBER_PATH_MAX + 1, kind, &why);
}

TEST(whiteout_names)
{
	char t[MEMBER_PATH_MAX + 1];
	enum member_kind k;
	CHECK(classify("etc/passwd", t, &k) == 0 && k == MEMBER_PLAIN);
	CHECK(classify("etc/.wh.passwd", t, &k) == 0 && k == MEMBER_WHITEOUT);
	CHECK_STR(t, "etc/passwd");
	CHECK(classify(".wh.x", t, &k) == 0 && k == MEMBER_WHITEOUT);
	CHECK_STR(t, "x");
	CHECK(classify("a/b/.wh..wh..opq", t, &k) == 0 && k == MEMBER_OPAQUE);
	CHECK_STR(t, "a/b");
	CHECK(classify(".wh..wh..opq", t, &k) == 0 && k == MEMBER_OPAQUE);
	CHECK_STR(t, "");
	CHECK(classify("a/.wh..wh.plnk", t, &k) == 0 && k == MEMBER_IGNORED);
	CHECK(classify(".wh..wh.plnk/123.456", t, &k) == 0 && k == MEMBER_IGNORED);
	CHECK(classify("a/.wh.", t, &k) < 0);
	CHECK(classify("a/.wh..", t, &k) < 0);
	CHECK(classify("a/.wh...", t, &k) < 0);
	CHECK(classify(".wh.a/b", t, &k) < 0);
	CHECK(classify(".wh..kern-x", t, &k) < 0);
	CHECK(classify("sub/.wh..kern-x", t, &k) == 0 && k == MEMBER_WHITEOUT);
	CHECK(classify("a/.whx", t, &k) == 0 && k == MEMBER_PLAIN);
}

/* ---- the raw pass ---- */

static void octal(unsigned char *f, size_t w, uint64_t v)
{
	snprintf((char *)f, w, "%0*llo", (int)w - 1, (unsigned long long)v);
}

static void header(unsigned char *h, const char *name, char type, uint64_t size)
{
	memset(h, 0, TAR_BLOCK);
	snprintf((char *)h, 100, "%s", name);
	octal(h + 100, 8, 0644);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static const struct unpack_limits small = {1000, 100000, 3};

/* Feed a stream in awkward pieces; return the final verdict. */
static int scan(const unsigned char *p, size_t n, const struct unpack_limits *lim, char *why)
{
	struct tar_scan s;
	int rc = 0;
	tar_scan_init(&s, lim);
	for (size_t o = 0; o < n && rc == 0; o += 7)
		rc = tar_scan_feed(&s, p + o, n - o < 7 ? n - o : 7);
	if (rc == 0)
		rc = tar_scan_finish(&s);
	if (why)
		snprintf(why, 320, "%s", s.why);
	tar_scan_free(&s);
	return rc;
}

TEST(tar_scan_frames_a_plain_archive)
{
	unsigned char buf[TAR_BLOCK * 8] = {0};
	struct tar_scan s;
	struct tar_scan_entry e;
	header(buf, "a", '0', 600);			/* data in blocks 1-2 */
	header(buf + 3 * TAR_BLOCK, "d/", '5', 0);
	CHECK(scan(buf, sizeof buf, &unpack_default_limits, NULL) == 0);
	tar_scan_init(&s, &unpack_default_limits);
	CHECK(tar_scan_feed(&s, buf, sizeof buf) == 0);
	CHECK(tar_scan_next(&s, &e) == 1 && e.start == 0 && e.size == 600 && e.type == '0');
	CHECK(tar_scan_next(&s, &e) == 1 && e.start == 3 * TAR_BLOCK && e.type == '5');
	CHECK(tar_scan_next(&s, &e) == 0);
	tar_scan_free(&s);
}

TEST(tar_scan_end_of_archive_rules)
{
	unsigned char buf[TAR_BLOCK * 4] = {0};
	char why[320];
	header(buf, "a", '0', 0);
	CHECK(scan(buf, TAR_BLOCK, &unpack_default_limits, why) < 0);	/* no end block */
	CHECK(strstr(why, "truncated") != NULL);
	CHECK(scan(buf, TAR_BLOCK + 100, &unpack_default_limits, why) < 0);	/* half an end block */
	CHECK(scan(buf, 2 * TAR_BLOCK + 100, &unpack_default_limits, why) == 0);	/* short zero tail */
	buf[3 * TAR_BLOCK + 5] = 1;
	CHECK(scan(buf, sizeof buf, &unpack_default_limits, why) < 0);
	CHECK(strstr(why, "hidden trailing member") != NULL);
	CHECK(scan(buf, TAR_BLOCK / 2, &unpack_default_limits, why) < 0);	/* short header */
}

TEST(tar_scan_zero_block_limit)
{
	size_t n = TAR_BLOCK * (1 + TAR_ZERO_BLOCKS_MAX + 1);
	unsigned char *buf = calloc(1, n);
	char why[320];
	header(buf, "a", '0', 0);
	CHECK(scan(buf, n - TAR_BLOCK, &unpack_default_limits, why) == 0);	/* 4096 */
	CHECK(scan(buf, n, &unpack_default_limits, why) < 0);			/* 4097 */
	CHECK(strstr(why, "zero blocks") != NULL);
	free(buf);
}

TEST(tar_scan_limits)
{
	unsigned char buf[TAR_BLOCK * 8] = {0};
	char why[320];
	header(buf, "big", '0', 1001);
	CHECK(scan(buf, sizeof buf, &small, why) < 0 && strstr(why, "decompression bomb"));
	for (int i = 0; i < 4; i++)
		header(buf + i * TAR_BLOCK, "dev", '3', 0);
	CHECK(scan(buf, sizeof buf, &small, why) < 0 && strstr(why, "inode bomb"));
	CHECK(scan(buf + TAR_BLOCK, sizeof buf - TAR_BLOCK, &small, why) == 0);	/* 3 entries */
}

TEST(tar_scan_refuses_types_and_sizes)
{
	unsigned char buf[TAR_BLOCK * 4] = {0};
	const char bad[] = "6SMVNDAX9";
	for (const char *t = bad; *t; t++) {
		header(buf, "x", *t, 0);
		CHECK(scan(buf, sizeof buf, &unpack_default_limits, NULL) < 0);
	}
	const char sized[] = "12345";
	for (const char *t = sized; *t; t++) {
		header(buf, "x", *t, 1);
		CHECK(scan(buf, sizeof buf, &unpack_default_limits, NULL) < 0);
		header(buf, "x", *t, 0);
		CHECK(scan(buf, sizeof buf, &unpack_default_limits, NULL) == 0);
	}
	header(buf, "x", '0', 0);
	buf[0] ^= 1;	/* checksum now wrong */
	CHECK(scan(buf, sizeof buf, &unpack_default_limits, NULL) < 0);
}

static size_t pax_body(unsigned char *p, const char *recs)
{
	size_t n = strlen(recs);
	memcpy(p, recs, n);
	return n;
}

TEST(tar_scan_pax_records)
{
	unsigned char buf[TAR_BLOCK * 8];
	char why[320];
	struct {
		const char *recs;
		char type;
		int ok;
	} cases[] = {
		{"11 path=ab\n", 'x', 1},
		{"11 path=ab\n11 path=cd\n", 'x', 0},
		{"23 GNU.sparse.major=1\n", 'x', 0},
		{"11 path=ab\n", 'g', 0},
		{"14 comment=ab\n", 'g', 1},
		{"9 size=3\n", 'g', 0},
		{"10 path=ab\n", 'x', 0},	/* length does not match */
		{"11 path=ab", 'x', 0},
		{"x1 path=ab\n", 'x', 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(buf, 0, sizeof buf);
		size_t n = pax_body(buf + TAR_BLOCK, cases[i].recs);
		header(buf, "PaxHeaders/x", cases[i].type, n);
		header(buf + 2 * TAR_BLOCK, "x", '0', 0);
		int rc = scan(buf, sizeof buf, &unpack_default_limits, why);
		CHECK((rc == 0) == cases[i].ok);
	}
	/* A PAX size moves where the next header is. */
	memset(buf, 0, sizeof buf);
	size_t n = pax_body(buf + TAR_BLOCK, "12 size=600\n");
	header(buf, "PaxHeaders/x", 'x', n);
	header(buf + 2 * TAR_BLOCK, "x", '0', 0);
	header(buf + 5 * TAR_BLOCK, "y", '0', 0);
	struct tar_scan s;
	struct tar_scan_entry e;
	tar_scan_init(&s, &unpack_default_limits);
	CHECK(tar_scan_feed(&s, buf, sizeof buf) == 0);
	CHECK(tar_scan_next(&s, &e) == 1 && e.start == 0 && e.size == 600);
	CHECK(tar_scan_next(&s, &e) == 1 && e.start == 5 * TAR_BLOCK);
	tar_scan_free(&s);
}

TEST(dirmap_put_get_remove)
{
	struct dirmap *m = dirmap_new();
	char k[32];
	for (int i = 0; i < 2000; i++) {
		snprintf(k, sizeof k, "d%d/sub", i);
		dirmap_put(m, k)->mode = (mode_t)i;
	}
	dirmap_put(m, "d1")->mode = 7;
	CHECK(dirmap_count(m) == 2001);
	CHECK(dirmap_get(m, "d1500/sub") && dirmap_get(m, "d1500/sub")->mode == 1500);
	dirmap_remove_under(m, "d1");
	CHECK(dirmap_get(m, "d1") == NULL && dirmap_get(m, "d1/sub") == NULL);
	CHECK(dirmap_get(m, "d10/sub") != NULL);
	CHECK(dirmap_count(m) == 1999);
	size_t it = 0, seen = 0;
	struct dir_info *info;
	while (dirmap_next(m, &it, &info))
		seen++;
	CHECK(seen == 1999);
	dirmap_free(m);
}
