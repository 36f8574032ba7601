/* kern box --netns PATH (kern-oci's linux.namespaces network entry with a
 * path: a pod's shared network namespace, an engine's prepared one). */
#ifndef KERN_BOX_NETNS_H
#define KERN_BOX_NETNS_H

/* In the supervisor, before PID 1 is cloned (it then stays in this
 * namespace): open path without following a symlink, check it is an nsfs
 * file of a network namespace (NS_GET_NSTYPE), setns(2) into it. With
 * sysfs, also make a detached read-only sysfs of that namespace into
 * *sysfs_fd for PID 1 to attach (a box's user namespace may not mount one
 * of a namespace the host's owns). Returns 0, or -1 after printing the
 * setup failure line naming the call and the path. */
int netns_join(const char *path, int sysfs, int *sysfs_fd);

#endif
