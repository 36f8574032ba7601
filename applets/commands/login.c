/* kern-login: store registry credentials for pulls */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "oci/creds.h"
#include "oci/ref.h"

static const char usage[] =
"usage: kern login REGISTRY -u USER --password-stdin\n"
"\n"
"Store credentials for REGISTRY (host[:port]; docker.io for Docker Hub) in\n"
"the credentials file under the config directory (mode 0600). The password\n"
"is read from stdin only, never from argv or the environment, and is sent\n"
"only to the registry itself (or its token service on the same https host).\n";

#define PASS_MAX 4096

static int read_password(char *out, size_t len)
{
	size_t n = 0;
	for (;;) {
		ssize_t r = read(0, out + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == len - 1) {
			char extra;
			if (read(0, &extra, 1) > 0)
				return -2;
			break;
		}
	}
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		n--;
	out[n] = 0;
	return (int)n;
}

static int text_ok(const char *s, int allow_colon)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (!allow_colon && *s == ':'))
			return 0;
	return 1;
}

static int login_main(int argc, char **argv)
{
	const char *registry = NULL, *user = NULL;
	int stdin_pw = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "-u") == 0 || strcmp(a, "--username") == 0) && i + 1 < argc)
			user = argv[++i];
		else if (strncmp(a, "--username=", 11) == 0)
			user = a + 11;
		else if (strcmp(a, "--password-stdin") == 0)
			stdin_pw = 1;
		else if (strcmp(a, "-p") == 0 || strncmp(a, "--password", 10) == 0) {
			die("registry", "a password on the command line would be visible to every user; use --password-stdin");
		} else if (a[0] == '-') {
			die("registry", "unknown flag '%s'", a);
		} else if (!registry)
			registry = a;
		else {
			die("registry", "unexpected argument '%s'", a);
		}
	}
	if (!registry || !user || !stdin_pw)
		die("registry", "usage: kern login REGISTRY -u USER --password-stdin");
	char probe[600], host[256];
	struct image_ref r;
	const char *why;
	snprintf(probe, sizeof probe, "%s/x", registry);
	if (strchr(registry, '/') || image_ref_parse(probe, &r, &why) < 0 ||
	    (strcmp(r.registry, "registry-1.docker.io") == 0 && strcmp(registry, "docker.io") != 0 &&
	     strcmp(registry, "index.docker.io") != 0 && strcmp(registry, "registry-1.docker.io") != 0)) {
		die("registry", "'%s' is not a registry host[:port]", registry);
	}
	if (!*user || !text_ok(user, 0))
		die("registry", "the user name must be non-empty, without ':' or control characters");
	char pass[PASS_MAX];
	int n = read_password(pass, sizeof pass);
	if (n <= 0 || !text_ok(pass, 1)) {
		explicit_bzero(pass, sizeof pass);
		die("registry", n == -2 ? "the password on stdin is longer than %d bytes" :
			"no usable password on stdin (one line, no control characters)", PASS_MAX - 1);
	}
	creds_host(r.registry, host, sizeof host);
	const char *what;
	char path[4200] = "";
	int rc = creds_store(host, user, pass, &what, path, sizeof path);
	explicit_bzero(pass, sizeof pass);
	if (rc < 0)
		die_errno("registry", "cannot %s the credentials file %s", what, path);
	note("credentials for %s stored in %s", host, path);
	return 0;
}

APPLET(login, "store registry credentials for pulls", usage, login_main);
