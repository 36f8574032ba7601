/* kern box --netns, --ipcns and --utsns PATH (kern-oci's linux.namespaces
 * entries with a path: a pod's shared namespaces, an engine's prepared
 * network namespace). */
#ifndef KERN_BOX_NSJOIN_H
#define KERN_BOX_NSJOIN_H

/* In the supervisor, before PID 1 is cloned (it then stays in this
 * namespace): open path without following a symlink, check it is an nsfs
 * file of a namespace of type (CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS:
 * NS_GET_NSTYPE), setns(2) into it. With fstype, also make a detached
 * mount of that filesystem there ("sysfs" read-only, "mqueue") into *mnt
 * for PID 1 to attach: a box's user namespace may not mount one of a
 * namespace the host's owns. flag names the kern box flag in errors.
 * Returns 0, or -1 after printing the setup failure line naming the call
 * and the path. */
int ns_join_path(const char *flag, const char *path, int type, const char *fstype, int *mnt);

#endif
