/* The egress proxy's pure parts: entry grammar, allowlist match, head
 * scanning and parsing, authority rules, and the SSRF guard's ranges. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>

#include "egress/egress.h"
#include "egress/guard.h"
#include "egress/head.h"
#include "egress/match.h"
#include "unit.h"

TEST(egress_domain_grammar)
{
	CHECK(egress_domain_valid("pypi.org"));
	CHECK(egress_domain_valid("files.pythonhosted.org"));
	CHECK(egress_domain_valid("PyPI.org"));
	CHECK(egress_domain_valid("a-b.c0m"));
	CHECK(egress_domain_valid(".pypi.org"));	/* leading dot ignored by matching */
	CHECK(egress_domain_valid("pypi.org."));	/* trailing dot too */
	CHECK(egress_domain_valid("xn--bcher-kva.example"));
	/* EG-10 */
	CHECK(!egress_domain_valid("-a.com"));
	CHECK(!egress_domain_valid("a-.com"));
	CHECK(!egress_domain_valid("a..b"));
	CHECK(!egress_domain_valid("1.2.3.4"));
	CHECK(!egress_domain_valid("*"));
	CHECK(!egress_domain_valid("*.pypi.org"));
	CHECK(!egress_domain_valid(""));
	CHECK(!egress_domain_valid("."));
	CHECK(!egress_domain_valid(".."));
	CHECK(!egress_domain_valid("com"));
	CHECK(!egress_domain_valid(".com"));
	CHECK(!egress_domain_valid("com."));
	CHECK(!egress_domain_valid("..pypi.org"));
	CHECK(!egress_domain_valid("pypi.org.."));
	CHECK(!egress_domain_valid("py_pi.org"));
	CHECK(!egress_domain_valid("pypi.org:443"));
	CHECK(!egress_domain_valid("pypi .org"));
	CHECK(!egress_domain_valid("127.1"));
	CHECK(!egress_domain_valid("0x7f.0x1"));
	CHECK(!egress_domain_valid("example.123"));
	char label[80];
	memset(label, 'a', 63);
	memcpy(label + 63, ".com", 5);
	CHECK(egress_domain_valid(label));
	memset(label, 'a', 64);
	memcpy(label + 64, ".com", 5);
	CHECK(!egress_domain_valid(label));
	/* 253 characters in all is the limit. */
	char big[300];
	size_t n = 0;
	while (n + 4 <= 249) {
		memcpy(big + n, "abc.", 4);
		n += 4;
	}
	memcpy(big + n, "com", 4);	/* 248 + 3 = 251 */
	CHECK(egress_domain_valid(big));
	memcpy(big + n, "commm", 6);	/* 253 */
	CHECK(egress_domain_valid(big));
	memcpy(big + n, "commmm", 7);	/* 254 */
	CHECK(!egress_domain_valid(big));
}

TEST(egress_match_rules)
{
	char *allow[] = {"pypi.org", ".Example.COM.", "files.pythonhosted.org"};
	int n = 3;
	CHECK(egress_host_allowed("pypi.org", allow, n));
	CHECK(egress_host_allowed("files.pypi.org", allow, n));
	CHECK(egress_host_allowed("a.b.c.pypi.org", allow, n));
	CHECK(egress_host_allowed("PyPI.org.", allow, n));
	CHECK(egress_host_allowed("pypi.org.", allow, n));
	CHECK(egress_host_allowed("example.com", allow, n));
	CHECK(egress_host_allowed("www.example.com.", allow, n));
	CHECK(egress_host_allowed("files.pythonhosted.org", allow, n));
	CHECK(egress_host_allowed("my_bucket.pypi.org", allow, n));
	/* EG-8 */
	CHECK(!egress_host_allowed("evilpypi.org", allow, n));
	CHECK(!egress_host_allowed("pypi.org.evil.com", allow, n));
	CHECK(!egress_host_allowed("pythonhosted.org", allow, n));
	CHECK(!egress_host_allowed("pypi.org..", allow, n));
	CHECK(!egress_host_allowed(".pypi.org", allow, n));
	CHECK(!egress_host_allowed("a..pypi.org", allow, n));
	CHECK(!egress_host_allowed("", allow, n));
	CHECK(!egress_host_allowed(".", allow, n));
	CHECK(!egress_host_allowed("org", allow, n));
	CHECK(!egress_host_allowed("localhost", allow, n));	/* EG-12 */
	CHECK(!egress_host_allowed("a b.pypi.org", allow, n));
	/* Below an allowed entry, label syntax is DNS's business. */
	CHECK(egress_host_allowed("-x.pypi.org", allow, n));
	CHECK(!egress_host_allowed("pypi.org", allow, 0));
	char *ip_entry[] = {"4.3.2.1.in-addr.arpa"};
	CHECK(!egress_host_allowed("1.2.3.4", ip_entry, 1));
	char *num[] = {"example.com"};
	CHECK(!egress_host_allowed("1.example.com.2", num, 1));
}

TEST(egress_ip_literals)
{
	CHECK(egress_host_is_ip("1.2.3.4"));
	CHECK(egress_host_is_ip("1.2.3.4."));
	CHECK(egress_host_is_ip("127.1"));
	CHECK(egress_host_is_ip("0x7f000001"));
	CHECK(egress_host_is_ip("2130706433"));
	CHECK(egress_host_is_ip("::1"));
	CHECK(egress_host_is_ip("::ffff:127.0.0.1"));
	CHECK(egress_host_is_ip("foo.123"));
	CHECK(!egress_host_is_ip("pypi.org"));
	CHECK(!egress_host_is_ip("1.2.3.4.example"));
	CHECK(!egress_host_is_ip("0x7f.example"));
}

static int scan(const char *s, size_t *end)
{
	return egress_head_scan(s, 0, strlen(s), end);
}

TEST(egress_head_scan_rules)
{
	size_t end = 0;
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\n\r\n", &end) == EGRESS_HEAD_DONE && end == 28);
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\n\r\nTLS", &end) == EGRESS_HEAD_DONE && end == 28);
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\n", &end) == EGRESS_HEAD_MORE);
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\n\r", &end) == EGRESS_HEAD_MORE);
	/* Bare LF anywhere: 400. */
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\n\n", &end) == EGRESS_HEAD_BAD);
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\nX: y\n\r\n", &end) == EGRESS_HEAD_BAD);
	CHECK(scan("\n", &end) == EGRESS_HEAD_BAD);
	CHECK(scan("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", &end) == EGRESS_HEAD_BAD);
	/* A bare LF after the end belongs to the tunnel, not the head. */
	CHECK(scan("CONNECT a.b:443 HTTP/1.1\r\n\r\n\n\n", &end) == EGRESS_HEAD_DONE && end == 28);
	/* Fed in pieces, the answer is the same and the end found. */
	const char *h = "GET http://a.b/ HTTP/1.1\r\nHost: x\r\n\r\n";
	size_t len = strlen(h), from = 0;
	enum egress_scan s = EGRESS_HEAD_MORE;
	for (size_t i = 1; i <= len && s == EGRESS_HEAD_MORE; i++) {
		s = egress_head_scan(h, from, i, &end);
		from = i;
	}
	CHECK(s == EGRESS_HEAD_DONE && end == len);
	char nul[] = "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n";
	CHECK(egress_head_scan(nul, 0, sizeof nul - 1, &end) == EGRESS_HEAD_BAD);
}

static int parse(const char *h, struct egress_request *r)
{
	return egress_head_parse(h, strlen(h), r);
}

TEST(egress_head_parse_connect)
{
	struct egress_request r;
	CHECK(parse("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", &r) == 0);
	CHECK(r.is_connect && r.port == 443);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("CONNECT PyPI.org.:443 HTTP/1.0\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org.");
	CHECK(parse("CONNECT pypi.org HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 443);
	CHECK(parse("CONNECT pypi.org:22 HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 22);
	/* Userinfo ends at the LAST '@'. */
	CHECK(parse("CONNECT pypi.org@evil.com:443 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "evil.com");
	CHECK(parse("CONNECT a@b@evil.com:443 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "evil.com");
	CHECK(parse("CONNECT user:pw@pypi.org:443 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	/* [v6] loses its brackets and is an IP literal. */
	CHECK(parse("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK(r.bracketed && r.port == 443);
	CHECK_STR(r.host, "::1");
	CHECK(parse("CONNECT [::FFFF:127.0.0.1] HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 443);
	CHECK_STR(r.host, "::ffff:127.0.0.1");
	CHECK(parse("CONNECT [pypi.org]:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT [::1:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT ::1:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org: HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org:65536 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org:4433333 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org:+443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT :443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org@:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT py%70i.org:443 HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("CONNECT pypi.org/x:443 HTTP/1.1\r\n\r\n", &r) == 400);
}

TEST(egress_head_parse_plain)
{
	struct egress_request r;
	CHECK(parse("GET http://pypi.org/simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", &r) == 0);
	CHECK(!r.is_connect && r.port == 80);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET HTTPS://PyPI.org:443/x HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 443);
	CHECK_STR(r.host, "pypi.org");
	/* https:// in a plain request still defaults to 80 (isolation.md
	 * §9.2, egress per connection, step 3). */
	CHECK(parse("GET https://pypi.org/ HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 80);
	CHECK(parse("GET http://pypi.org HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET http://pypi.org?q=1 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET http://pypi.org:8080/ HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 8080);
	/* EG-9: the absolute URI decides, Host: is ignored. */
	CHECK(parse("GET http://pypi.org/ HTTP/1.1\r\nHost: evil.com\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET http://evil.com@pypi.org/ HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET http://pypi.org@evil.com/ HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "evil.com");
	CHECK(parse("GET http:///x HTTP/1.1\r\nHost: pypi.org\r\n\r\n", &r) == 400);
	/* Origin form: Host: decides. */
	CHECK(parse("GET / HTTP/1.1\r\nHost: PyPI.org:80\r\n\r\n", &r) == 0 && r.port == 80);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("GET / HTTP/1.1\r\nhOsT:   pypi.org  \r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "pypi.org");
	CHECK(parse("OPTIONS * HTTP/1.1\r\nHost: pypi.org\r\n\r\n", &r) == 0);
	CHECK(parse("GET / HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nHost:\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nHost: a.org\r\nHost: b.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nHost: a.org\r\nHost: b.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nHost: u@pypi.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET ftp://pypi.org/ HTTP/1.1\r\n\r\n", &r) == 400);
	CHECK(parse("GET pypi.org HTTP/1.1\r\n\r\n", &r) == 400);
}

TEST(egress_head_parse_malformed)
{
	struct egress_request r;
	CHECK(parse("\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nHost: a.org\r\n", &r) == 400);
	CHECK(parse("GET  / HTTP/1.1\r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/2.0\r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1 \r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / http/1.1\r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET /\r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("G(T / HTTP/1.1\r\nHost: a.org\r\n\r\n", &r) == 400);
	/* Obsolete line folding and a space before the colon are smuggling tools. */
	CHECK(parse("GET / HTTP/1.1\r\nHost: a.org\r\n folded\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nHost : a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nX: a\x01z\r\nHost: a.org\r\n\r\n", &r) == 400);
	CHECK(parse("GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\nHost: a.org\r\n\r\n", &r) == 0);
	CHECK(parse("GET / HTTP/1.1\r\nHost: a.org\n\r\n", &r) == 400);
}

/* The head as forwarded, from a head that parses; "" when it does not fit. */
static const char *forward(const char *h, size_t cap)
{
	static char out[EGRESS_HEAD_MAX + 512];
	struct egress_request r;
	CHECK(egress_head_parse(h, strlen(h), &r) == 0);
	size_t n = egress_head_forward(h, strlen(h), &r, out, cap < sizeof out ? cap : sizeof out - 1);
	out[n] = 0;
	return out;
}

TEST(egress_head_forward_origin_form)
{
	/* RFC 9112 §3.2: origin form toward the server, Host: generated from
	 * the target, not the client's (EG-9), one request per connection. */
	CHECK_STR(forward("GET http://PyPI.org/simple/x?q=1 HTTP/1.1\r\nHost: evil.com\r\nAccept: */*\r\n\r\n", 9999),
		  "GET /simple/x?q=1 HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\nConnection: close\r\n\r\n");
	CHECK_STR(forward("GET http://pypi.org HTTP/1.0\r\n\r\n", 9999),
		  "GET / HTTP/1.0\r\nHost: pypi.org\r\nConnection: close\r\n\r\n");
	CHECK_STR(forward("GET http://u:p@pypi.org:443?a=b HTTP/1.1\r\n\r\n", 9999),
		  "GET /?a=b HTTP/1.1\r\nHost: pypi.org:443\r\nConnection: close\r\n\r\n");
	/* Origin form in: the target stays, Host: is regenerated. */
	CHECK_STR(forward("POST /up HTTP/1.1\r\nhost:  PyPI.org:80 \r\nContent-Length: 3\r\n\r\n", 9999),
		  "POST /up HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
	CHECK_STR(forward("OPTIONS * HTTP/1.1\r\nHost: pypi.org\r\n\r\n", 9999),
		  "OPTIONS * HTTP/1.1\r\nHost: pypi.org\r\nConnection: close\r\n\r\n");
	/* Hop-by-hop fields and proxy credentials stay with the proxy. */
	CHECK_STR(forward("GET http://pypi.org/ HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n"
			  "Proxy-Connection: keep-alive\r\nKeep-Alive: 300\r\nTE: trailers\r\nUpgrade: h2c\r\n"
			  "Proxy-Authorization: Basic eDp5\r\nX-Keep: 1\r\n\r\n", 9999),
		  "GET / HTTP/1.1\r\nHost: pypi.org\r\nX-Keep: 1\r\nConnection: close\r\n\r\n");
	/* Too big for the buffer: nothing. */
	CHECK_STR(forward("GET http://pypi.org/ HTTP/1.1\r\n\r\n", 52), "");
	CHECK(strlen(forward("GET http://pypi.org/ HTTP/1.1\r\n\r\n", 53)) == 53);
}

TEST(egress_head_body_framing)
{
	struct egress_request r;
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &r) == 0);
	CHECK(r.length == 12 && !r.chunked);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\n\r\n", &r) == 0 && r.length == 0);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r) == 0 && r.chunked);
	/* Where the body ends must be beyond doubt: the next request starts there. */
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", &r) == 400);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", &r) == 400);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n", &r) == 400);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length:\r\n\r\n", &r) == 400);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n", &r) == 400);
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", &r) == 400);
	/* CONNECT's head says nothing about the tunnel's bytes. */
	CHECK(parse("CONNECT a.org:443 HTTP/1.1\r\nContent-Length: x\r\n\r\n", &r) == 0);
}

static uint32_t v4(const char *s)
{
	struct in_addr a;
	CHECK(inet_pton(AF_INET, s, &a) == 1);
	return ntohl(a.s_addr);
}

static int v6_public(const char *s)
{
	struct in6_addr a;
	CHECK(inet_pton(AF_INET6, s, &a) == 1);
	return egress_v6_public(a.s6_addr);
}

TEST(egress_guard_v4)
{
	static const char *const refused[] = {
		"0.0.0.0", "0.255.255.255", "10.0.0.1", "10.255.255.255", "100.64.0.1",
		"100.127.255.255", "127.0.0.1", "127.255.255.254", "169.254.169.254", "169.254.0.1",
		"172.16.0.1", "172.31.255.255", "192.0.0.1", "192.0.0.255", "192.168.1.1",
		"198.18.0.1", "198.19.255.255", "224.0.0.1", "239.255.255.255", "240.0.0.1",
		"255.255.255.255", "192.0.2.1", "198.51.100.7", "203.0.113.9", "192.88.99.1",
	};
	static const char *const allowed[] = {
		"1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.1", "100.63.255.255", "100.128.0.1",
		"126.255.255.255", "128.0.0.1", "169.253.255.255", "169.255.0.1", "172.15.255.255",
		"172.32.0.1", "192.0.1.1", "192.167.255.255", "192.169.0.1", "198.17.255.255",
		"198.20.0.1", "223.255.255.255", "151.101.0.223",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		CHECK(!egress_v4_public(v4(refused[i])));
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		CHECK(egress_v4_public(v4(allowed[i])));
}

TEST(egress_guard_v6)
{
	static const char *const refused[] = {
		"::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1",
		"ff0e::1", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254",
		"::127.0.0.1", "::10.0.0.1", "::ffff:0:127.0.0.1", "64:ff9b::7f00:1",
		"64:ff9b::a00:1", "64:ff9b:1::1", "2002:7f00:1::1", "2002:a9fe:a9fe::1",
		"2002:0a00:0001::", "2001:db8::1", "2001::1", "100::1", "3fff::1", "4000::1",
		"2001:2::1", "2001:10::1", "2001:20::1",
	};
	static const char *const allowed[] = {
		"2606:4700:4700::1111", "2a04:4e42::223", "2001:4860:4860::8888",
		"::ffff:1.1.1.1", "64:ff9b::101:101", "2002:101:101::1", "3ffe::1",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		CHECK(!v6_public(refused[i]));
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		CHECK(v6_public(allowed[i]));
}

TEST(egress_guard_sockaddr)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	struct sockaddr un = {.sa_family = AF_UNIX};
	in.sin_addr.s_addr = htonl(0x01010101);
	CHECK(egress_addr_public((struct sockaddr *)&in));
	in.sin_addr.s_addr = htonl(0x7f000001);
	CHECK(!egress_addr_public((struct sockaddr *)&in));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
	CHECK(!egress_addr_public((struct sockaddr *)&in6));
	inet_pton(AF_INET6, "2606:4700::1", &in6.sin6_addr);
	CHECK(egress_addr_public((struct sockaddr *)&in6));
	CHECK(!egress_addr_public(&un));
}
