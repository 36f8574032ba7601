/* lib/base/toml.c: the kern.toml subset, and the exact position of every
 * refusal. */
#include <stdlib.h>

#include "base/toml.h"
#include "unit.h"

static char err[512];

static int parse(const char *s, struct toml_doc *d)
{
	return toml_parse("k.toml", s, strlen(s), d, err, sizeof err);
}

/* Parsing must fail with exactly this message. */
static int refused(const char *s, const char *want)
{
	struct toml_doc d;
	if (parse(s, &d) == 0) {
		toml_free(&d);
		printf("# accepted: %s\n", s);
		return 0;
	}
	if (strcmp(err, want) != 0) {
		printf("# got:  %s\n# want: %s\n", err, want);
		return 0;
	}
	return d.nt == 0 && d.t == NULL;
}

TEST(toml_reads_the_subset)
{
	struct toml_doc d;
	const char *text =
		"# kern.toml\r\n"
		"[[vcpu]]   # small\n"
		"name = \"small\"\n"
		"cpus = 0.5\n"
		"memory = \"256m\"\n"
		"pids=64\n"
		"\n"
		"[[vcpu]]\n"
		"name = \"big\"\t\n"
		"cpus = 2\n"
		"memory = 1_073_741_824\n"
		"quiet = true\n"
		"ratio = -1.5e3\n"
		"[ registry ]\n"
		"mirrors = [\n"
		"  \"docker.io=http://127.0.0.1:5000\", # local\n"
		"  \"tab\\there \\u00e9\\U0001F600 \\\"q\\\" \\\\\",\n"
		"]\n"
		"empty = []\n";
	CHECK(parse(text, &d) == 0);
	CHECK(d.nt == 4);
	CHECK_STR(d.t[0].name, "");
	CHECK(d.t[0].nkv == 0);
	CHECK(d.t[1].array && strcmp(d.t[1].name, "vcpu") == 0 && d.t[1].nkv == 4);
	const struct toml_kv *kv = toml_get(&d.t[1], "cpus");
	CHECK(kv && kv->v.type == TOML_FLOAT && strcmp(kv->v.s, "0.5") == 0);
	CHECK(kv && kv->line == 4 && kv->col == 1 && kv->v.col == 8);
	kv = toml_get(&d.t[1], "pids");
	CHECK(kv && kv->v.type == TOML_INT && kv->v.i == 64);
	kv = toml_get(&d.t[2], "memory");
	CHECK(kv && kv->v.type == TOML_INT && kv->v.i == 1073741824 && strcmp(kv->v.s, "1073741824") == 0);
	kv = toml_get(&d.t[2], "quiet");
	CHECK(kv && kv->v.type == TOML_BOOL && kv->v.b == 1);
	kv = toml_get(&d.t[2], "ratio");
	CHECK(kv && kv->v.type == TOML_FLOAT && strcmp(kv->v.s, "-1.5e3") == 0);
	CHECK(!d.t[3].array && strcmp(d.t[3].name, "registry") == 0);
	kv = toml_get(&d.t[3], "mirrors");
	CHECK(kv && kv->v.type == TOML_ARRAY && kv->v.nitems == 2);
	CHECK(kv && strcmp(kv->v.items[1], "tab\there \xc3\xa9\xf0\x9f\x98\x80 \"q\" \\") == 0);
	kv = toml_get(&d.t[3], "empty");
	CHECK(kv && kv->v.type == TOML_ARRAY && kv->v.nitems == 0);
	CHECK(toml_get(&d.t[3], "nope") == NULL);
	toml_free(&d);
	CHECK(parse("", &d) == 0 && d.nt == 1);
	toml_free(&d);
}

TEST(toml_refuses_what_it_does_not_understand)
{
	CHECK(refused("a = 'x'\n", "k.toml:1:5: literal strings ('...') are not supported; use \"...\""));
	CHECK(refused("[a.b]\n", "k.toml:1:3: dotted table names are not supported"));
	CHECK(refused("x = 1\na.b = 1\n", "k.toml:2:2: dotted keys are not supported"));
	CHECK(refused("\"a\" = 1\n", "k.toml:1:1: quoted keys are not supported"));
	CHECK(refused("a = {x = 1}\n", "k.toml:1:5: inline tables are not supported"));
	CHECK(refused("a = \"\"\"x\"\"\"\n", "k.toml:1:5: multi-line strings are not supported"));
	CHECK(refused("a = 1979-05-27\n", "k.toml:1:5: invalid value '1979-05-27'"));
	CHECK(refused("a = 07:32:00\n", "k.toml:1:5: leading zeros are not allowed in '07:32:00'"));
	CHECK(refused("a = 0x10\n", "k.toml:1:5: only decimal numbers are supported"));
	CHECK(refused("a = 010\n", "k.toml:1:5: leading zeros are not allowed in '010'"));
	CHECK(refused("a = 1__0\n", "k.toml:1:5: invalid value '1__0'"));
	CHECK(refused("a = 1.\n", "k.toml:1:5: invalid number '1.'"));
	CHECK(refused("a = inf\n", "k.toml:1:5: expected a value: \"string\", number, true, false or [\"list\"]"));
	CHECK(refused("a = 99999999999999999999\n", "k.toml:1:5: integer out of range"));
	CHECK(refused("a =\n", "k.toml:1:4: expected a value after '='"));
	CHECK(refused("a 1\n", "k.toml:1:3: expected '=' after the key"));
	CHECK(refused("a = 1\n# c\na = 2\n", "k.toml:3:1: duplicate key 'a' (first at line 1)"));
	CHECK(refused("[t]\nx = 1\n[t]\n", "k.toml:3:1: table [t] is defined twice (first at line 1)"));
	CHECK(refused("[[t]]\n[t]\n", "k.toml:2:1: [t] conflicts with [[t]] at line 1"));
	CHECK(refused("[t]\n[[t]]\n", "k.toml:2:1: [[t]] conflicts with [t] at line 1"));
	CHECK(refused("[t\n", "k.toml:1:3: expected ']' to close the table header"));
	CHECK(refused("[[t]\n", "k.toml:1:4: expected ']]' to close the table header"));
	CHECK(refused("[t] x\n", "k.toml:1:5: expected the end of the line after the table header"));
	CHECK(refused("a = [1, 2]\n", "k.toml:1:6: arrays hold \"strings\" only"));
	CHECK(refused("a = [\"x\" \"y\"]\n", "k.toml:1:10: expected ',' or ']' in the array"));
	CHECK(refused("a = [\"x\",\n", "k.toml:2:1: unterminated array"));
	CHECK(refused("a = \"x\" b\n", "k.toml:1:9: expected the end of the line after the value"));
	CHECK(refused("a = \"\xc3\xa9\" b\n", "k.toml:1:9: expected the end of the line after the value"));
	CHECK(refused("a = \"open\n", "k.toml:1:5: unterminated string"));
	CHECK(refused("a = \"\\q\"\n", "k.toml:1:6: invalid escape in string"));
	CHECK(refused("a = \"\\u00\"\n", "k.toml:1:6: \\u needs 4 hex digits"));
	CHECK(refused("a = \"\\u0000\"\n", "k.toml:1:6: \\u escape is not a usable character"));
	CHECK(refused("a = \"\\uD800\"\n", "k.toml:1:6: \\u escape is not a usable character"));
	CHECK(refused("x = 1\na = \"\x01\"\n", "k.toml:2:6: control character 0x01 is not allowed"));
	CHECK(refused("a = \"\xc0\xaf\"\n", "k.toml:1:6: invalid UTF-8"));
	CHECK(refused("a = \"\xed\xa0\x80\"\n", "k.toml:1:6: invalid UTF-8"));
	CHECK(refused("a = 1\rb = 2\n", "k.toml:1:6: control character 0x0d is not allowed"));
	CHECK(refused("= 1\n", "k.toml:1:1: expected a key"));
	CHECK(refused("[]\n", "k.toml:1:2: expected a table name"));

	struct toml_doc d;
	const char nul[] = "a = 1\n\0b = 2\n";
	CHECK(toml_parse("k.toml", nul, sizeof nul - 1, &d, err, sizeof err) < 0);
	CHECK_STR(err, "k.toml:2:1: control character 0x00 is not allowed");
}

TEST(toml_load_refuses_non_files)
{
	struct toml_doc d;
	CHECK(toml_load("/nonexistent/kern.toml", &d, err, sizeof err) < 0);
	CHECK_STR(err, "/nonexistent/kern.toml: No such file or directory");
	CHECK(toml_load("/tmp", &d, err, sizeof err) < 0);
	CHECK_STR(err, "/tmp: not a regular file");
}
