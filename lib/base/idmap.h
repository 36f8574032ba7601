#pragma once
/* A user namespace's id maps (/proc/PID/uid_map, gid_map), read: lines of
 * "inside outside count", at most IDMAP_MAX of them (the kernel's limit). */

#define IDMAP_MAX 340

struct id_range {
	unsigned long inside, outside, count;
};

/* The ranges of the map open at fd, into out (at most max): their number.
 * Reading stops at the first line that is not three numbers (a read error
 * counts as the end of the map). */
int idmap_read_fd(int fd, struct id_range *out, int max);
/* The same for the map at path; -1 when it cannot be opened. */
int idmap_read(const char *path, struct id_range *out, int max);
/* 1 when ranges [0, n) are the initial user namespace's map: the one
 * identity range over all 2^32-1 ids. */
int idmap_is_initial(const struct id_range *r, int n);
