#include <stdint.h>
#include <string.h>

#include "base/parse.h"
#include "base/path.h"
#include "image/cachekey.h"
#include "unit.h"

TEST(parse_size_forms)
{
	uint64_t v;
	CHECK(parse_size("536870912", 0, &v) == 0 && v == 536870912);
	CHECK(parse_size("512m", 0, &v) == 0 && v == 512ULL << 20);
	CHECK(parse_size("512M", 0, &v) == 0 && v == 512ULL << 20);
	CHECK(parse_size("1g", 0, &v) == 0 && v == 1ULL << 30);
	CHECK(parse_size("64k", 0, &v) == 0 && v == 65536);
	CHECK(parse_size("10b", 0, &v) == 0 && v == 10);
	CHECK(parse_size("2t", 1, &v) == 0 && v == 2ULL << 40);
	CHECK(parse_size("2t", 0, &v) < 0);
	CHECK(parse_size("", 0, &v) < 0);
	CHECK(parse_size("m", 0, &v) < 0);
	CHECK(parse_size("-1", 0, &v) < 0);
	CHECK(parse_size("+5", 0, &v) < 0);
	CHECK(parse_size("5 m", 0, &v) < 0);
	CHECK(parse_size("1.5g", 0, &v) < 0);
	CHECK(parse_size("99999999999999999999", 0, &v) < 0);
	CHECK(parse_size("17179869184g", 0, &v) < 0);
}

TEST(parse_seconds_and_cpus)
{
	unsigned long long s;
	uint64_t m;
	CHECK(parse_seconds("5", &s) == 0 && s == 5);
	CHECK(parse_seconds("86405", &s) == 0 && s == 86405);
	CHECK(parse_seconds("0", &s) < 0);
	CHECK(parse_seconds("-3", &s) < 0);
	CHECK(parse_seconds("1.5", &s) < 0);
	CHECK(parse_cpus("0.5", &m) == 0 && m == 500000);
	CHECK(parse_cpus("2", &m) == 0 && m == 2000000);
	CHECK(parse_cpus("1.5", &m) == 0 && m == 1500000);
	CHECK(parse_cpus(".25", &m) == 0 && m == 250000);
	CHECK(parse_cpus("0", &m) < 0);
	CHECK(parse_cpus("1.", &m) < 0);
	CHECK(parse_cpus("abc", &m) < 0);
	CHECK(parse_cpus("1e3", &m) < 0);
	CHECK(parse_cpus("0.0000001", &m) < 0);
}

TEST(parse_cap_names)
{
	CHECK(parse_cap("CHOWN") == 0);
	CHECK(parse_cap("cap_sys_admin") == 21);
	CHECK(parse_cap("Net_Raw") == 13);
	CHECK(parse_cap("CAP_CHECKPOINT_RESTORE") == 40);
	CHECK(parse_cap("3") < 0);
	CHECK(parse_cap("") < 0);
	CHECK(parse_cap("cap_") < 0);
	CHECK(parse_cap("bogus") < 0);
	CHECK_STR(cap_name(21), "sys_admin");
}

TEST(cache_key_vectors)
{
	static const char *const v[][2] = {
		{"python:3.12-slim", "python_3_12-slim-7d2794a436662d45"},
		{"python", "python_latest-9e0094521a5d04a4"},
		{"alpine:3.19", "alpine_3_19-441817d3f5f11093"},
		{"localhost:5000/x:1", "localhost_5000_x_1-03406c180a22063b"},
		{"localhost:5000/x", "localhost_5000_x_latest-f15769e364a25523"},
		{"python@sha256:abcdef0123456789", "python_sha256_abcdef0123456789-f77941d5fa12216c"},
		{"a/b/c:d", "a_b_c_d-dcc54f31688d5fa5"},
	};
	char key[700];
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		CHECK(cache_key(v[i][0], key, sizeof key) == 0);
		CHECK_STR(key, v[i][1]);
	}
}

TEST(path_checks)
{
	char out[64];
	CHECK(path_is_clean_abs("/workspace/.deps"));
	CHECK(!path_is_clean_abs("workspace"));
	CHECK(!path_is_clean_abs("/a/../b"));
	CHECK(!path_is_clean_abs("/a/./b"));
	CHECK(!path_is_clean_abs("/a/.."));
	CHECK(path_collapse("//dev/", out, sizeof out) == 0);
	CHECK_STR(out, "/dev");
	CHECK(path_collapse("/", out, sizeof out) == 0);
	CHECK_STR(out, "/");
	CHECK(path_is_under("/a/b", "/a"));
	CHECK(path_is_under("/a", "/a"));
	CHECK(!path_is_under("/ab", "/a"));
	CHECK(path_is_under("/x", "/"));
}

/* Box and profile names (box-cli.md §2 NAME): one grammar, a length each. */
TEST(name_ok_grammar_and_length)
{
	char n64[66];
	memset(n64, 'a', 65);
	n64[65] = 0;
	CHECK(!name_ok(n64, BOX_NAME_MAX));
	n64[64] = 0;
	CHECK(name_ok(n64, BOX_NAME_MAX));
	CHECK(!name_ok(n64, 63));
	CHECK(name_ok("a", BOX_NAME_MAX) && name_ok("A0_.-", BOX_NAME_MAX));
	CHECK(!name_ok("", BOX_NAME_MAX) && !name_ok(NULL, BOX_NAME_MAX));
	CHECK(!name_ok(".a", BOX_NAME_MAX) && !name_ok("-a", BOX_NAME_MAX) && !name_ok("_a", BOX_NAME_MAX));
	CHECK(!name_ok("a/b", BOX_NAME_MAX) && !name_ok("a b", BOX_NAME_MAX) && !name_ok("a\n", BOX_NAME_MAX));
	CHECK(!name_ok("\xc3\xa9", BOX_NAME_MAX));
}
