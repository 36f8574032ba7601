#include <stdlib.h>

#include "base/json.h"
#include "image/cachekey.h"
#include "image/image.h"
#include "image/sidecar.h"
#include "oci/manifest.h"
#include "oci/ref.h"
#include "unit.h"
#include "oci/wwwauth.h"

/* CLI-14: the seven reference vectors of box-cli.md §10 (image cache
 * layout). */
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
	char key[300];
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		CHECK(cache_key(v[i][0], key, sizeof key) == 0);
		CHECK_STR(key, v[i][1]);
	}
}

static int ref_ok(const char *s)
{
	const char *why;
	return image_ref_check(s, &why) == 0;
}

TEST(image_ref_validation)
{
	char tag300[320] = "x:";
	memset(tag300 + 2, 'a', 300);
	tag300[302] = 0;
	CHECK(ref_ok("python:3.12-slim"));
	CHECK(ref_ok("localhost:5000/x"));
	CHECK(ref_ok("[::1]:5000/team/app:v1"));
	CHECK(ref_ok("ghcr.io/a/b__c/d-e:1.0_x"));
	CHECK(ref_ok("python@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	CHECK(!ref_ok(""));
	CHECK(!ref_ok("../etc/passwd"));
	CHECK(!ref_ok("a/../../b"));
	CHECK(!ref_ok("/absolute"));
	CHECK(!ref_ok(".."));
	CHECK(!ref_ok("x:y:z:w"));
	CHECK(!ref_ok("UP/per"));
	CHECK(!ref_ok("a b"));
	CHECK(!ref_ok("a\x01" "b"));
	CHECK(!ref_ok("caf\xc3\xa9"));
	CHECK(!ref_ok(tag300));
	CHECK(!ref_ok("name@sha256:short"));
	CHECK(!ref_ok("a@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF"));
	CHECK(!ref_ok("a@b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	CHECK(!ref_ok("a//b"));
	CHECK(!ref_ok("a/./b"));
	CHECK(!ref_ok("a-/b"));
	CHECK(!ref_ok("host:99999/x"));
}

TEST(image_ref_canonical_form)
{
	struct image_ref r;
	const char *why;
	char out[800];
	CHECK(image_ref_parse("python", &r, &why) == 0);
	image_ref_canonical(&r, out, sizeof out);
	CHECK_STR(out, "docker.io/library/python:latest");
	CHECK_STR(r.registry, "registry-1.docker.io");
	CHECK(!r.loopback);
	CHECK(image_ref_parse("index.docker.io/team/x:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", &r, &why) == 0);
	image_ref_canonical(&r, out, sizeof out);
	CHECK_STR(out, "docker.io/team/x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	CHECK(image_ref_parse("localhost:5000/x", &r, &why) == 0);
	CHECK(r.loopback);
	CHECK_STR(r.reference, "latest");
	CHECK_STR(r.repo, "x");
	CHECK(image_ref_parse("127.3.2.1:80/a/b:c", &r, &why) == 0 && r.loopback);
	CHECK(image_ref_parse("127.evil.com/a", &r, &why) == 0 && !r.loopback);
	CHECK(image_ref_parse("localhost.evil.com/a", &r, &why) == 0 && !r.loopback);
	CHECK(image_ref_parse("[::1]/a", &r, &why) == 0 && r.loopback);
	CHECK(image_ref_parse("myhost/a", &r, &why) == 0);
	CHECK_STR(r.registry, "registry-1.docker.io");
	CHECK_STR(r.repo, "myhost/a");
}

TEST(url_host_strips_userinfo_and_port)
{
	char h[256];
	int https;
	CHECK(url_host("https://user:pw@Auth.Example.com:443/token?x", h, sizeof h, &https) == 0);
	CHECK_STR(h, "auth.example.com");
	CHECK(https == 1);
	CHECK(url_host("http://[::1]:80/t", h, sizeof h, &https) == 0);
	CHECK_STR(h, "[::1]");
	CHECK(https == 0);
	CHECK(url_host("ftp://x/", h, sizeof h, &https) < 0);
	CHECK(url_host("https://a@b@evil.com/", h, sizeof h, &https) == 0);
	CHECK_STR(h, "evil.com");
}

TEST(platform_names)
{
	char a[32];
	CHECK(image_platform("linux/amd64", a, sizeof a) == 0);
	CHECK_STR(a, "amd64");
	CHECK(image_platform("x86_64", a, sizeof a) == 0);
	CHECK_STR(a, "amd64");
	CHECK(image_platform("aarch64", a, sizeof a) == 0);
	CHECK_STR(a, "arm64");
	CHECK(image_platform("arm64v8", a, sizeof a) == 0);
	CHECK_STR(a, "arm64");
	CHECK(image_platform("windows/amd64", a, sizeof a) < 0);
	CHECK(image_platform("linux/vax", a, sizeof a) < 0);
}

TEST(www_authenticate_parser)
{
	struct www_auth a;
	CHECK(www_auth_parse("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\"", &a) == 0);
	CHECK(a.scheme == AUTH_BEARER);
	CHECK_STR(a.realm, "https://auth.docker.io/token");
	CHECK_STR(a.service, "registry.docker.io");
	CHECK(www_auth_parse("basic realm=x", &a) == 0 && a.scheme == AUTH_BASIC);
	CHECK(www_auth_parse("Negotiate abc", &a) == 0 && a.scheme == AUTH_OTHER);
	CHECK(www_auth_parse("Bearer realm=\"a\\\"b\"", &a) == 0);
	CHECK_STR(a.realm, "a\"b");
	CHECK(www_auth_parse("Bearer realm=\"x\", realm=\"y\"", &a) < 0);
	CHECK(www_auth_parse("Bearer realm=\"unterminated", &a) < 0);
	CHECK(www_auth_parse("", &a) < 0);
}

TEST(sidecar_round_trip_and_escapes)
{
	char *ep[] = {"/bin/sh", "-c", NULL}, *env[] = {"A=1", "T=a\tb\\c\nd", NULL}, *ex[] = {"80/tcp", NULL};
	struct image_meta m = {.entrypoint = ep, .cmd = NULL, .env = env, .expose = ex,
			       .workdir = "/w", .user = "app"};
	size_t len;
	char *s = sidecar_render("sha256:00", &m, &len);
	CHECK(s != NULL);
	CHECK_STR(s, "fmt\t3\ndigest\tsha256:00\nentrypoint\t[\"/bin/sh\",\"-c\"]\ncmd\t\nenv\tA=1\n"
		     "env\tT=a\\tb\\\\c\\nd\nworkdir\t/w\nuser\tapp\nexpose\t80/tcp\n");
	struct image_config c;
	CHECK(sidecar_parse(s, len, &c) == 0);
	CHECK_STR(c.entrypoint[1], "-c");
	CHECK(c.entrypoint[2] == NULL);
	CHECK(c.cmd == NULL);
	CHECK_STR(c.env[1], "T=a\tb\\c\nd");
	CHECK_STR(c.workdir, "/w");
	CHECK_STR(c.user, "app");
	CHECK_STR(c.digest, "sha256:00");
	image_config_free(&c);
	free(s);
	CHECK(sidecar_parse("fmt\t2\n", 6, &c) < 0);
}

/* A bare NAME in an image's Env (or a damaged sidecar's env list) set
 * nothing and, through env_put, replaced the name's value (found by the
 * image_config fuzz target); both parsers drop it. */
TEST(image_env_drops_bare_names)
{
	static const char cfgjson[] = "{\"config\":{\"Env\":[\"A=0\",\"A\",\"=x\",\"B=1\",\"\"]},"
				       "\"rootfs\":{\"diff_ids\":[]}}";
	struct image_meta m;
	char why[256];
	CHECK(config_parse(cfgjson, sizeof cfgjson - 1, &m, why, sizeof why) == 0);
	CHECK_STR(m.env[0], "A=0");
	CHECK_STR(m.env[1], "B=1");
	CHECK(m.env[2] == NULL);
	image_meta_free(&m);
	static const char sc[] = "fmt\t3\ndigest\tsha256:00\nenv\tA=0\tx\nenv\tA\nenv\t=y\nenv\tC=2\n";
	struct image_config c;
	CHECK(sidecar_parse(sc, sizeof sc - 1, &c) == 0);
	CHECK_STR(c.env[0], "A=0\tx");
	CHECK_STR(c.env[1], "C=2");
	CHECK(c.env[2] == NULL);
	image_config_free(&c);
}

TEST(manifest_and_index)
{
	static const char man[] = "{\"schemaVersion\":2,\"mediaType\":\"" MT_OCI_MANIFEST "\","
		"\"config\":{\"digest\":\"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\"size\":1},"
		"\"layers\":[{\"digest\":\"sha256:1111111111111111111111111111111111111111111111111111111111111111\",\"size\":2}]}";
	static const char idx[] = "{\"schemaVersion\":2,\"manifests\":["
		"{\"digest\":\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"platform\":{\"os\":\"unknown\",\"architecture\":\"unknown\"}},"
		"{\"digest\":\"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\",\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\",\"variant\":\"v8\"}},"
		"{\"digest\":\"sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\",\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}";
	struct manifest *m = malloc(sizeof *m);
	enum manifest_kind k;
	char why[200], d[80], offered[100];
	CHECK(manifest_kind(man, sizeof man - 1, NULL, &k, why, sizeof why) == 0 && k == MK_MANIFEST);
	CHECK(manifest_parse(man, sizeof man - 1, m, why, sizeof why) == 0);
	CHECK(m->nlayers == 1 && m->layers[0].size == 2);
	CHECK(manifest_kind(idx, sizeof idx - 1, NULL, &k, why, sizeof why) == 0 && k == MK_INDEX);
	CHECK(index_select(idx, sizeof idx - 1, "amd64", d, offered, sizeof offered, why, sizeof why) == 0);
	CHECK(d[7] == 'c');
	CHECK(index_select(idx, sizeof idx - 1, "arm64", d, offered, sizeof offered, why, sizeof why) == 0);
	CHECK(d[7] == 'b');
	CHECK(index_select(idx, sizeof idx - 1, "s390x", d, offered, sizeof offered, why, sizeof why) == 1);
	CHECK_STR(offered, "arm64, amd64");
	free(m);
}

/* Found by FZ-1: an object key without a value used to read past the
 * token array while checking for duplicate keys. */
TEST(json_refuses_key_without_value)
{
	struct json j;
	const char *why;
	static const char a[] = "{\"token\":\"abc\",\"acce00abc\",\"access\"}";
	static const char b[] = "[\"a\":1]";
	CHECK(json_parse(&j, a, sizeof a - 1, 1 << 20, 16, &why) < 0);
	CHECK(json_parse(&j, b, sizeof b - 1, 1 << 20, 16, &why) < 0);
}
