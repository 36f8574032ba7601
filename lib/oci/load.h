/* `kern load`: an OCI image layout (directory or tar) or a `docker save`
 * archive as a blob source for image_fetch, with the same digest checks,
 * vetting and sidecar as a pull. */
#ifndef KERN_IMAGELOAD_H
#define KERN_IMAGELOAD_H

/* Import the image at path into the cache under tag (NULL: the name the
 * archive records). arch NULL = the host's. 0, or -1 after the error
 * line. */
int image_load(const char *path, const char *tag, const char *arch);

#endif
