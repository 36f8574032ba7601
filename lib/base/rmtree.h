/* Remove a directory tree without ever following a symlink: used for
 * scratch directories, whose content the box wrote. */
#ifndef KERN_RMTREE_H
#define KERN_RMTREE_H

/* Remove name (file or tree) in dirfd. Directories the walker cannot
 * enter are granted u+rwx through their descriptor first. 0 or -1. */
int rmtree_at(int dirfd, const char *name);
int rmtree(const char *path);

#endif
