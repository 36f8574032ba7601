/* Binds whose flags hold on every mount they carry into the box
 * (isolation.md §4.1, the -v row; security-tests.md OT-3): a source with
 * submounts is read-only, nosuid and nodev below each of them too, or the
 * bind is refused. Never weaker than asked. */
#ifndef KERN_BINDMOUNT_H
#define KERN_BINDMOUNT_H

/* What a bind must be. Zero-initialised = writable, nosuid, nodev, no
 * idmap. */
struct bind_opts {
	int ro;		/* read-only on every mount of the tree */
	int dev;	/* keep device nodes usable (vgpio binds): no nodev */
	int idmap;	/* idmap the tree through userns_fd (MOUNT_ATTR_IDMAP) */
	int recursive;	/* the whole tree even where a partial copy is allowed:
			 * host root cloning for a box, which sees what a bind
			 * made in a user namespace would (idmount.h) */
	int userns_fd;	/* a user namespace descriptor, when idmap */
};

/* The mount tree at srcfd as a detached copy (open_tree OPEN_TREE_CLONE,
 * recursive only when the kernel refuses a partial copy of locked
 * submounts) with o applied to every mount in it at once (mount_setattr
 * AT_RECURSIVE) and private propagation. The copy is not reachable from
 * any path until bind_attach(), so it is never seen with weaker flags.
 * Returns the tree's descriptor, or -1 with errno and *what naming the
 * failing call (ENOSYS: the kernel predates the new mount API, 5.12). */
int bind_clone(int srcfd, const struct bind_opts *o, const char **what);
/* The same for the object named name (one component) in the directory
 * dirfd, reached without following a symlink: no descriptor of the
 * object is opened first. */
int bind_clone_at(int dirfd, const char *name, const struct bind_opts *o, const char **what);

/* Attach a tree from bind_clone() on the object behind dstfd
 * (move_mount). Returns 0 or -1 with errno and *what. */
int bind_attach(int treefd, int dstfd, const char **what);
/* Attach it on the object named name (one component) in the directory
 * dirfd, neither following a symlink nor triggering an automount there. */
int bind_attach_at(int treefd, int dirfd, const char *name, const char **what);

/* bind_clone() then bind_attach(). Where the new mount API is missing,
 * the old one (bind, then remount with the source's locked flags) is
 * used for a source without submounts; one with submounts, or an idmap,
 * is refused (ENOSYS), since the old API cannot reach every submount.
 * dstpath names dstfd for that remount. */
int bind_fd(int srcfd, int dstfd, const char *dstpath, const struct bind_opts *o,
	    const char **what);

/* noexec on every mount of the tree attached at rel beneath rootfd (the
 * open, without following a symlink, lands on the attached tree's root):
 * set after bind_attach()/idm_attach(), before anything runs in the box,
 * and only ever added (mount_setattr AT_RECURSIVE). Returns 0 or -1 with
 * errno and *what. */
int bind_noexec(int rootfd, const char *rel, const char **what);

#endif
