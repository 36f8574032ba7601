/* The built-in `host` image (box-cli.md §2.7): a tmpfs root holding
 * read-only binds of the host's system directories and an /etc that kern
 * writes itself. Nothing else of the host is visible. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/path.h"
#include "box/bindmount.h"
#include "box/idmount.h"
#include "box/mountutil.h"
#include "box/rootfs.h"

static const char *const system_dirs[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"};

/* What programs need from /etc to start, bound read-only when present.
 * Of /etc/ssl only what verifying a certificate reads (OpenSSL's default
 * CA file and directory, which Debian's /usr/lib/ssl points at, and its
 * configuration): never ssl/private (OT-6). matplotlibrc and fonts:
 * Debian's matplotlib reads its defaults from /etc and refuses to import
 * without them, fontconfig its configuration, and charts are what a code
 * interpreter box is asked for most. */
static const char *const etc_binds[] = {"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
					"alternatives", "ssl/certs", "ssl/openssl.cnf",
					"ca-certificates", "localtime", "os-release",
					"matplotlibrc", "fonts"};

static void write_at(int dirfd, const char *root, const char *name, const char *text, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	size_t n = strlen(text);
	if (fd < 0 || write(fd, text, n) != (ssize_t)n)
		die_setup_errno("write %s/etc/%s", root, name);
	close(fd);
}

/* Host entry `host` (absolute) -> same place under the new root: a symlink
 * is recreated as a symlink (merged /usr), a directory or file is bound
 * read-only. Absent entries are skipped. */
static void mirror(int rootfd, const char *root, const struct fs_config *c, const char *host,
		   const char *rel)
{
	struct stat st;
	char target[4096], dst[4096];
	const char *what;
	if (lstat(host, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(host, target, sizeof target - 1);
		if (n < 0)
			die_setup_errno("readlink %s", host);
		target[n] = 0;
		const char *slash = strrchr(rel, '/');
		if (slash) {
			char parent[64];
			snprintf(parent, sizeof parent, "%.*s", (int)(slash - rel), rel);
			int pfd = mkdir_beneath(rootfd, parent, 0755);
			if (pfd < 0)
				die_setup_errno("mkdir %s/%s", root, parent);
			close(pfd);
		}
		if (symlinkat(target, rootfd, rel) < 0)
			die_setup_errno("symlink %s/%s", root, rel);
		return;
	}
	/* Read-only throughout: a separate mount under /usr (/usr/local, say)
	 * is as read-only as /usr itself (OT-3). In a shifted box the
	 * supervisor idmaps it, so its files still look root-owned. */
	const struct bind_opts ro = {.ro = 1};
	int tree = 0;
	int sfd = c->shifted ? idm_source(c->idm_fd, host, 0, &ro, &tree, &what)
			     : open(host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		die_setup("%s %s: %s", c->shifted ? what : "open", host, strerror(errno));
	char abs[4096];
	snprintf(abs, sizeof abs, "/%s", rel);
	int tfd = make_target(rootfd, abs, S_ISDIR(st.st_mode));
	if (tfd < 0)
		die_setup_errno("create %s/%s", root, rel);
	snprintf(dst, sizeof dst, "%s/%s", root, rel);
	if (idm_attach(sfd, tree, tfd, dst, &ro, &what) < 0)
		die_setup_errno("%s %s on %s", what, host, dst);
	close(sfd);
	close(tfd);
}

void host_image_prefetch(const struct fs_config *c)
{
	char host[64];
	struct stat st;
	if (!c->shifted)
		return;
	/* The entries mirror() will bind: present, and not a symlink. */
	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++) {
		snprintf(host, sizeof host, "/%s", system_dirs[i]);
		if (lstat(host, &st) == 0 && !S_ISLNK(st.st_mode))
			idm_prefetch(c->idm_fd, host, 0, 1);
	}
	for (size_t i = 0; i < sizeof etc_binds / sizeof etc_binds[0]; i++) {
		snprintf(host, sizeof host, "/etc/%s", etc_binds[i]);
		if (lstat(host, &st) == 0 && !S_ISLNK(st.st_mode))
			idm_prefetch(c->idm_fd, host, 0, 1);
	}
}

void host_image_populate(int rootfd, const char *root, const struct fs_config *c)
{
	char host[64], rel[64], text[512];
	int etc;

	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++) {
		snprintf(host, sizeof host, "/%s", system_dirs[i]);
		mirror(rootfd, root, c, host, system_dirs[i]);
	}
	if (mkdirat(rootfd, "etc", 0755) < 0 || mkdirat(rootfd, "tmp", 01777) < 0 ||
	    fchmodat(rootfd, "tmp", 01777, 0) < 0 || mkdirat(rootfd, "root", 0700) < 0)
		die_setup_errno("mkdir in %s", root);
	etc = openat(rootfd, "etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (etc < 0)
		die_setup_errno("open %s/etc", root);
	write_at(etc, root, "passwd",
		 "root:x:0:0:root:/root:/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0644);
	write_at(etc, root, "group", "root:x:0:\nnogroup:x:65534:\n", 0644);
	snprintf(text, sizeof text,
		 "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t%.64s\n",
		 c->hostname);
	write_at(etc, root, "hosts", text, 0644);
	write_at(etc, root, "nsswitch.conf",
		 "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n", 0644);
	if (c->net_host) {
		/* --net host: the host's resolver, copied (not bound), so the box
		 * cannot write through to it. */
		char buf[8192];
		int in = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
		ssize_t n = in < 0 ? 0 : read(in, buf, sizeof buf - 1);
		if (in >= 0)
			close(in);
		buf[n > 0 ? n : 0] = 0;
		write_at(etc, root, "resolv.conf", buf, 0644);
	} else {
		write_at(etc, root, "resolv.conf", "", 0644);
	}
	close(etc);
	for (size_t i = 0; i < sizeof etc_binds / sizeof etc_binds[0]; i++) {
		snprintf(host, sizeof host, "/etc/%s", etc_binds[i]);
		snprintf(rel, sizeof rel, "etc/%s", etc_binds[i]);
		mirror(rootfd, root, c, host, rel);
	}
}
