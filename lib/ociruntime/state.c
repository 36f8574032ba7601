/* kern-oci's state directory (state.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/json.h"
#include "base/rmtree.h"
#include "box/ns.h"
#include "ociruntime/state.h"
#include "state/records.h"

#define STATE_MAX (512u << 10)

void oci_default_root(char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	/* uid 0 of a rootless engine's user namespace (podman runs its
	 * runtime there) is the user, whose runtime directory it is. */
	if (geteuid() == 0 && ns_initial_userns())
		snprintf(out, len, "/run/kern-oci");
	else if (xdg && xdg[0] == '/')
		snprintf(out, len, "%s/kern-oci", xdg);
	else
		snprintf(out, len, "/tmp/kern-oci-%u", (unsigned)geteuid());
}

int oci_state_dir(const char *root, const char *id, char *out, size_t len, char *why, size_t wl)
{
	/* An id is a path component here and a box NAME: [A-Za-z0-9][A-Za-z0-9_.-]*. */
	if (!box_name_valid(id)) {
		snprintf(why, wl, "bad container id '%s' (expected [A-Za-z0-9][A-Za-z0-9_.-]*, 1-64 bytes)", id);
		return -1;
	}
	if ((size_t)snprintf(out, len, "%s/%s", root, id) >= len) {
		snprintf(why, wl, "--root %s is too long", root);
		return -1;
	}
	return 0;
}

int oci_state_write(const char *dir, const struct oci_state *s)
{
	char path[PATH_MAX], tmp[PATH_MAX], bundle[PATH_MAX * 6 + 3];
	if (json_quote(s->bundle, bundle, sizeof bundle) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(path, sizeof path, "%s/" OCI_STATE_FILE, dir);
	snprintf(tmp, sizeof tmp, "%s/." OCI_STATE_FILE ".%d", dir, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f, "{\"id\":\"%s\",\"bundle\":%s,\"pid\":%d,\"pidStart\":%llu,\"creator\":%d,"
		"\"creatorStart\":%llu,\"created\":%lld,\"started\":%s,\"annotations\":%s}\n",
		s->id, bundle, (int)s->pid, s->pid_start, (int)s->creator, s->creator_start, s->created,
		s->started ? "true" : "false", s->annotations ? s->annotations : "{}");
	int bad = fflush(f) != 0 || fsync(fd) < 0;
	if (fclose(f) != 0 || bad || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int get_u64(const struct json *j, const char *key, unsigned long long *out)
{
	uint64_t v;
	if (json_u64(j, json_get(j, 0, key), &v) < 0)
		return -1;
	*out = v;
	return 0;
}

int oci_state_read(const char *dir, struct oci_state *s)
{
	char path[PATH_MAX];
	struct json j;
	const char *why;
	unsigned long long pid, creator, created;
	size_t len;
	memset(s, 0, sizeof *s);
	snprintf(path, sizeof path, "%s/" OCI_STATE_FILE, dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* A regular file of this user's, of a state's size: anything else
	 * was not written by kern-oci. */
	char *text = read_regular_fd(fd, STATE_MAX, geteuid(), EPERM, &len);
	if (!text)
		return -1;
	int rc = -1;
	if (json_parse(&j, text, len, STATE_MAX, 8, &why) == 0) {
		int a = json_get(&j, 0, "annotations");
		int ok = json_string(&j, json_get(&j, 0, "id"), s->id, sizeof s->id) == 0 &&
			 json_string(&j, json_get(&j, 0, "bundle"), s->bundle, sizeof s->bundle) == 0 &&
			 get_u64(&j, "pid", &pid) == 0 && get_u64(&j, "pidStart", &s->pid_start) == 0 &&
			 get_u64(&j, "creator", &creator) == 0 &&
			 get_u64(&j, "creatorStart", &s->creator_start) == 0 &&
			 get_u64(&j, "created", &created) == 0 && json_is_object(&j, a) && pid < INT32_MAX &&
			 creator < INT32_MAX;
		if (ok) {
			s->pid = (pid_t)pid;
			s->creator = (pid_t)creator;
			s->created = (long long)created;
			int st = json_get(&j, 0, "started");
			s->started = st >= 0 && j.tok[st].type == JSMN_PRIMITIVE && text[j.tok[st].start] == 't';
			s->annotations = strndup(text + j.tok[a].start, (size_t)(j.tok[a].end - j.tok[a].start));
			rc = s->annotations ? 0 : -1;
		}
		json_free(&j);
	}
	free(text);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

void oci_state_free(struct oci_state *s)
{
	free(s->annotations);
	s->annotations = NULL;
}

/* The process (pid, start) is alive and not a zombie (record_live's rule). */
static int alive(pid_t pid, unsigned long long start)
{
	struct box_record r = {.sup_pid = pid, .sup_start = start};
	return pid > 0 && record_live(&r);
}

const char *oci_state_status(const struct oci_state *s)
{
	if (s->pid == 0)
		return alive(s->creator, s->creator_start) ? "creating" : "stopped";
	if (!alive(s->pid, s->pid_start))
		return "stopped";
	return s->started ? "running" : "created";
}

int oci_state_lock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

int oci_state_remove(const char *dir)
{
	return rmtree(dir);
}
