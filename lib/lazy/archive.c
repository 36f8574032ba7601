/* libarchive for the dynamic build, opened on the first call (lazylib.h):
 * only pull, load and unpack read tar, and libarchive's dependencies
 * (libxml2 and ICU, nettle, the codecs) weighed on every start. Every
 * libarchive function kern calls, with archive.h's and archive_entry.h's
 * prototypes, forwarding to libarchive's own. */
#ifndef KERN_STATIC
#include <archive.h>
#include <archive_entry.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(archive_read_new) *read_new;
	__typeof__(archive_read_support_filter_gzip) *support_filter_gzip;
	__typeof__(archive_read_support_filter_zstd) *support_filter_zstd;
	__typeof__(archive_read_support_format_tar) *support_format_tar;
	__typeof__(archive_read_open) *read_open;
	__typeof__(archive_read_open_filename) *read_open_filename;
	__typeof__(archive_read_next_header) *read_next_header;
	__typeof__(archive_read_header_position) *read_header_position;
	__typeof__(archive_read_data_block) *read_data_block;
	__typeof__(archive_error_string) *error_string;
	__typeof__(archive_read_free) *read_free;
	__typeof__(archive_entry_pathname) *entry_pathname;
	__typeof__(archive_entry_filetype) *entry_filetype;
	__typeof__(archive_entry_perm) *entry_perm;
	__typeof__(archive_entry_size) *entry_size;
	__typeof__(archive_entry_hardlink) *entry_hardlink;
	__typeof__(archive_entry_symlink) *entry_symlink;
	__typeof__(archive_entry_mtime) *entry_mtime;
	__typeof__(archive_entry_mtime_nsec) *entry_mtime_nsec;
	__typeof__(archive_entry_mtime_is_set) *entry_mtime_is_set;
} fn;

static const struct lazy_sym syms[] = {
	{"archive_read_new", (void **)&fn.read_new},
	{"archive_read_support_filter_gzip", (void **)&fn.support_filter_gzip},
	{"archive_read_support_filter_zstd", (void **)&fn.support_filter_zstd},
	{"archive_read_support_format_tar", (void **)&fn.support_format_tar},
	{"archive_read_open", (void **)&fn.read_open},
	{"archive_read_open_filename", (void **)&fn.read_open_filename},
	{"archive_read_next_header", (void **)&fn.read_next_header},
	{"archive_read_header_position", (void **)&fn.read_header_position},
	{"archive_read_data_block", (void **)&fn.read_data_block},
	{"archive_error_string", (void **)&fn.error_string},
	{"archive_read_free", (void **)&fn.read_free},
	{"archive_entry_pathname", (void **)&fn.entry_pathname},
	{"archive_entry_filetype", (void **)&fn.entry_filetype},
	{"archive_entry_perm", (void **)&fn.entry_perm},
	{"archive_entry_size", (void **)&fn.entry_size},
	{"archive_entry_hardlink", (void **)&fn.entry_hardlink},
	{"archive_entry_symlink", (void **)&fn.entry_symlink},
	{"archive_entry_mtime", (void **)&fn.entry_mtime},
	{"archive_entry_mtime_nsec", (void **)&fn.entry_mtime_nsec},
	{"archive_entry_mtime_is_set", (void **)&fn.entry_mtime_is_set},
};

static struct lazylib lib = {.soname = KERN_ARCHIVE_SONAME,
				.area = "image",
				.users = "a pull, load or unpack",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};


struct archive *archive_read_new(void)
{
	lazylib_ready(&lib);
	return fn.read_new();
}

int archive_read_support_filter_gzip(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.support_filter_gzip(a);
}

int archive_read_support_filter_zstd(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.support_filter_zstd(a);
}

int archive_read_support_format_tar(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.support_format_tar(a);
}

int archive_read_open(struct archive *a, void *client_data, archive_open_callback *open_cb,
		      archive_read_callback *read_cb, archive_close_callback *close_cb)
{
	lazylib_ready(&lib);
	return fn.read_open(a, client_data, open_cb, read_cb, close_cb);
}

int archive_read_open_filename(struct archive *a, const char *filename, size_t block_size)
{
	lazylib_ready(&lib);
	return fn.read_open_filename(a, filename, block_size);
}

int archive_read_next_header(struct archive *a, struct archive_entry **entry)
{
	lazylib_ready(&lib);
	return fn.read_next_header(a, entry);
}

la_int64_t archive_read_header_position(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.read_header_position(a);
}

int archive_read_data_block(struct archive *a, const void **buff, size_t *size, la_int64_t *offset)
{
	lazylib_ready(&lib);
	return fn.read_data_block(a, buff, size, offset);
}

const char *archive_error_string(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.error_string(a);
}

int archive_read_free(struct archive *a)
{
	lazylib_ready(&lib);
	return fn.read_free(a);
}

const char *archive_entry_pathname(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_pathname(e);
}

__LA_MODE_T archive_entry_filetype(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_filetype(e);
}

__LA_MODE_T archive_entry_perm(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_perm(e);
}

la_int64_t archive_entry_size(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_size(e);
}

const char *archive_entry_hardlink(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_hardlink(e);
}

const char *archive_entry_symlink(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_symlink(e);
}

time_t archive_entry_mtime(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_mtime(e);
}

long archive_entry_mtime_nsec(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_mtime_nsec(e);
}

int archive_entry_mtime_is_set(struct archive_entry *e)
{
	lazylib_ready(&lib);
	return fn.entry_mtime_is_set(e);
}
#endif
