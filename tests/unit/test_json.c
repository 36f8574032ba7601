#include <stdlib.h>

#include "base/json.h"
#include "unit.h"

static int parse(struct json *j, const char *s, const char **why)
{
	return json_parse(j, s, strlen(s), 1 << 20, 64, why);
}

TEST(json_reads_objects)
{
	struct json j;
	const char *why;
	char buf[64];
	uint64_t n;
	CHECK(parse(&j, "{\"a\": \"x\\u00e9\\n\", \"b\": [1, 2, {\"c\": 30}], \"d\": 7}", &why) == 0);
	CHECK(json_string(&j, json_get(&j, 0, "a"), buf, sizeof buf) == 0);
	CHECK_STR(buf, "x\xc3\xa9\n");
	int b = json_get(&j, 0, "b");
	CHECK(json_is_array(&j, b));
	CHECK(json_u64(&j, json_elem(&j, b, 1), &n) == 0 && n == 2);
	CHECK(json_u64(&j, json_get(&j, json_elem(&j, b, 2), "c"), &n) == 0 && n == 30);
	CHECK(json_u64(&j, json_get(&j, 0, "d"), &n) == 0 && n == 7);
	CHECK(json_get(&j, 0, "zz") < 0);
	json_free(&j);
}

TEST(json_refuses_hostile_input)
{
	struct json j;
	const char *why;
	char *deep = malloc(100001);
	memset(deep, '[', 100000);
	deep[100000] = 0;
	CHECK(parse(&j, deep, &why) < 0);
	free(deep);
	CHECK(parse(&j, "{\"a\":1,\"a\":2}", &why) < 0);
	CHECK(parse(&j, "{\"a\":1} x", &why) < 0);
	CHECK(parse(&j, "{\"a\":", &why) < 0);
	CHECK(parse(&j, "", &why) < 0);
	CHECK(json_parse(&j, "[1,2,3]", 7, 6, 64, &why) < 0);
	CHECK(parse(&j, "[\"\\u0000\"]", &why) == 0);
	char buf[8];
	CHECK(json_string(&j, 1, buf, sizeof buf) < 0);
	json_free(&j);
}

TEST(json_quote_escapes)
{
	char out[64];
	CHECK(json_quote("a\"b\\c\n", out, sizeof out) > 0);
	CHECK_STR(out, "\"a\\\"b\\\\c\\u000a\"");
}
