/* A producer thread that reads, decompresses, hashes and raw-scans a
 * layer ahead of libarchive, so decoding runs on one core while members
 * are written on another (tar -xzf gets the same from its gzip child).
 * The raw pass still sees every byte before libarchive does: buffers are
 * handed over only after tar_scan_feed has seen them. */
#ifndef KERN_LAYER_PUMP_H
#define KERN_LAYER_PUMP_H

#include <stddef.h>
#include <sys/types.h>

#include "layer/codec.h"
#include "layer/tar_scan.h"

struct layer_pump;

/* Start pumping codec through scan. NULL when no thread or memory. */
struct layer_pump *pump_start(struct layer_codec *codec, struct tar_scan *scan, size_t chunk);

/* The next buffer (valid until the next call): >0 bytes, 0 at the clean
 * end, -1 when the codec or the raw pass failed. */
ssize_t pump_next(struct layer_pump *p, const void **buf);

/* Whether the codec or the raw pass has failed so far. */
int pump_failed(struct layer_pump *p);

/* tar_scan_next, safely beside the running producer. */
int pump_scan_next(struct layer_pump *p, struct tar_scan_entry *e);

/* Stop the producer and wait for it. Afterwards the codec and the scan
 * belong to the caller again; *eof says whether the codec reached the
 * end, *codec_failed whether it failed (its reason in why). */
void pump_finish(struct layer_pump *p, int *eof, int *codec_failed, char *why, size_t whylen);

#endif
