/* Where kern keeps its state (box-cli.md §7.1, §10, §2.3), with the
 * fallbacks for hosts without systemd or XDG variables. All paths are for
 * the calling euid; resolve them before entering a user namespace. */
#ifndef KERN_XDG_H
#define KERN_XDG_H

#include <stddef.h>

enum kern_dir {
	KDIR_RUNTIME,	/* $XDG_RUNTIME_DIR/kern, /run/user/<uid>/kern, /run/kern (root,
			 * tmpfs /run), /dev/shm/kern-<uid>, /tmp/kern-<uid>,
			 * ~/.local/state/kern/run (xdg.c) */
	KDIR_CACHE,	/* $XDG_CACHE_HOME/kern/images, ~/.cache/kern/images, /tmp/kern-cache-<uid>/images */
	KDIR_CONFIG,	/* $XDG_CONFIG_HOME/kern, ~/.config/kern */
	KDIR_DATA,	/* $XDG_DATA_HOME/kern, ~/.local/share/kern */
};

/* Fill out with the directory. With create, make it (and missing parents
 * kern owns) 0700 and refuse a symlink or a directory owned by another uid;
 * a candidate that cannot be created, or that another user holds, falls
 * through to the next (for the runtime directory with a `kern: note:`).
 * Without create, the runtime directory is the one a create would pick.
 * Returns 0, or -1 with errno (the caller reports). */
int kern_dir(enum kern_dir which, char *out, size_t len, int create);

/* Call fn for every runtime directory that may hold the caller's boxes,
 * until it returns non-zero (then that value is returned; 0 otherwise).
 * First the one kern_dir(KDIR_RUNTIME, ..., 0) names, when it exists;
 * unless that is a login session's ($XDG_RUNTIME_DIR, /run/user/<uid>),
 * then every other host-wide candidate that is a real directory of the
 * caller's: where an older kern, which preferred /tmp, or this one while
 * a candidate was squatted, left boxes that are still running. */
int kern_runtime_each(int (*fn)(const char *dir, void *ctx), void *ctx);

/* Make path a private directory: created 0700 if missing, then lstat'd:
 * must be a real directory owned by euid; group/other bits are cleared. */
int private_dir(const char *path);

#endif
