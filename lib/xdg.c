#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xdg.h"

static const char *abs_env(const char *name)
{
	const char *v = getenv(name);
	return (v && v[0] == '/') ? v : NULL;
}

/* Without $HOME, the euid's home from /etc/passwd. Read with fgetpwent(),
 * not getpwuid(): the same file whichever libc kern is linked with, and
 * never an NSS module (a static glibc process that dlopen()s one, such as
 * libnss_systemd, crashes). */
static const char *home_dir(void)
{
	static char home[4096];
	const char *h = abs_env("HOME");
	if (h)
		return h;
	FILE *f = fopen("/etc/passwd", "re");
	if (!f)
		return NULL;
	const struct passwd *pw;
	uid_t uid = geteuid();
	while ((pw = fgetpwent(f)) && pw->pw_uid != uid)
		;
	int found = pw && pw->pw_dir && pw->pw_dir[0] == '/' && strlen(pw->pw_dir) < sizeof home;
	if (found)
		strcpy(home, pw->pw_dir);
	fclose(f);
	return found ? home : NULL;
}

int private_dir(const char *path)
{
	struct stat st;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		errno = S_ISLNK(st.st_mode) ? ELOOP : EPERM;
		return -1;
	}
	if ((st.st_mode & 077) && chmod(path, 0700) < 0)
		return -1;
	return 0;
}

/* mkdir -p for the parents of a candidate under $HOME or XDG: these may be
 * shared (~/.cache), so only the last component gets private_dir(). */
static int make_parents(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int try_candidate(const char *path, int create, int parents)
{
	if (!create)
		return 0;
	if (parents && make_parents(path) < 0)
		return -1;
	return private_dir(path);
}

int kern_dir(enum kern_dir which, char *out, size_t len, int create)
{
	uid_t uid = geteuid();
	const char *base, *home = home_dir();
	char cand[4096];
	int n;

	switch (which) {
	case KDIR_RUNTIME:
		if ((base = abs_env("XDG_RUNTIME_DIR"))) {
			n = snprintf(cand, sizeof cand, "%s/kern", base);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 0) == 0)
				goto done;
		}
		snprintf(cand, sizeof cand, "/run/user/%u", (unsigned)uid);
		if (access(cand, W_OK | X_OK) == 0) {
			strcat(cand, "/kern");
			if (try_candidate(cand, create, 0) == 0)
				goto done;
		}
		snprintf(cand, sizeof cand, "/tmp/kern-%u", (unsigned)uid);
		if (try_candidate(cand, create, 0) == 0)
			goto done;
		break;
	case KDIR_CACHE:
		if ((base = abs_env("XDG_CACHE_HOME"))) {
			n = snprintf(cand, sizeof cand, "%s/kern/images", base);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		if (home) {
			n = snprintf(cand, sizeof cand, "%s/.cache/kern/images", home);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		snprintf(cand, sizeof cand, "/tmp/kern-cache-%u", (unsigned)uid);
		if (!create || private_dir(cand) == 0) {
			strcat(cand, "/images");
			if (try_candidate(cand, create, 0) == 0)
				goto done;
		}
		break;
	case KDIR_CONFIG:
	case KDIR_DATA: {
		const char *var = which == KDIR_CONFIG ? "XDG_CONFIG_HOME" : "XDG_DATA_HOME";
		const char *sub = which == KDIR_CONFIG ? ".config" : ".local/share";
		if ((base = abs_env(var))) {
			n = snprintf(cand, sizeof cand, "%s/kern", base);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		if (home) {
			n = snprintf(cand, sizeof cand, "%s/%s/kern", home, sub);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		break;
	}
	}
	if (!create)
		errno = ENOENT;
	return -1;
done:
	if (strlen(cand) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(out, cand);
	return 0;
}
