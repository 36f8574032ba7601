#ifndef KERN_VERSION_H
#define KERN_VERSION_H
/* Clients gate `kern exec` start reporting on >= 0.30.2 (box-cli.md §1). */
#define KERN_VERSION "0.31.0"
#endif
