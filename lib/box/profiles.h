/* kern.toml profiles (box-cli.md §2.3): `vcpu:`, `vdisk:` and `vgpio:`
 * tokens resolved against the [[vcpu]], [[vdisk]] and [[vgpio]] tables. */
#ifndef KERN_PROFILES_H
#define KERN_PROFILES_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILES_MAX_VDISKS 8
#define PROFILES_MAX_DEVICES 16

struct vdisk {
	char name[64];
	uint64_t size;		/* bytes */
	char path[256];		/* inside the box; default /vdisk/<name> */
	int disk;		/* backend = "disk": ext4 on a loop device (vdisk.h) */
};

/* The scalars and counts first, the arrays last: a box without profile
 * tokens reads only the first few bytes (each page first touched on the
 * start path is a page fault). */
struct profiles {
	uint64_t memory;	/* valid when memory_set */
	int memory_set;
	uint64_t pids;
	int pids_set;
	uint64_t cpu_micro;
	int cpus_set;
	int nvdisks;
	int ndevices;
	char config_path[PATH_MAX];	/* kern.toml that was read, "" if none */
	struct vdisk vdisks[PROFILES_MAX_VDISKS];
	char devices[PROFILES_MAX_DEVICES][256];	/* host paths of vgpio devices */
};

/* Token grammar ^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$ */
int profile_token_valid(const char *tok);

/* Resolve tokens (in order; later ones win) from the kern.toml found per
 * box-cli.md §2.3 ($KERN_CONFIG > config_flag > XDG). Nothing is opened when there
 * are no tokens: *out is then empty (scalars and counts zero, no config
 * path; its arrays are left untouched). Returns 0, or -1 after printing
 * `error: box: ...` (the caller exits 1). */
int profiles_resolve(char *const *tokens, int ntokens, const char *config_flag,
		     struct profiles *out);

/* A vgpio device, for the bind into the box's /dev at the same path:
 * walked from / one component at a time without following any symlink,
 * and only a character device under /dev that is not memory, kmsg, kvm,
 * tun or a terminal. Returns an O_PATH descriptor to bind from, or -1
 * with *why saying what was refused. profiles_resolve() already checked
 * each device once; kern-fs calls this again at bind time. */
int vgpio_open(const char *path, const char **why);

/* backend = "disk" is root's (box-cli.md §2.3; root: host root, whose
 * supervisor stays in the host's namespaces, ns_shifted()): for any other
 * caller those vdisks become tmpfs ones, said in one note unless quiet. As
 * root it
 * cannot go with --map-host-root, whose supervisor lives in the box's
 * user namespace in the applet chain: refused, `error: box:` printed,
 * -1 (exit 1). Otherwise 0. */
int profiles_disk_backend(struct profiles *p, int root, int map_host_root, int quiet);

/* The --show-config lines (box-cli.md §2.4), without a newline:
 * "devices: /dev/a,/dev/b" and "vdisks: name=<bytes>@path,...". */
void profiles_devices_line(const struct profiles *p, char *buf, size_t len);
void profiles_vdisks_line(const struct profiles *p, char *buf, size_t len);

#endif
