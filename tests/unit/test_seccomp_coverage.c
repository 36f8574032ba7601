/* SC-11, the header coverage check of isolation.md §6.3 (the modes' allow
 * set): it must fail the build when the kernel headers define a call that is
 * neither allowed, denied nor reviewed, or number one differently from the
 * pinned tables. Runs tools/syscall-table and build/tools/seccomp-gen from
 * the top of the tree (make unit, tests/run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define GEN "build/tools/seccomp-gen --names data/seccomp/moby-allow-names.txt " \
	    "--table x86_64=data/seccomp/syscalls-x86_64.txt --table aarch64=data/seccomp/syscalls-aarch64.txt "

static char dir[] = "/tmp/kern-coverage.XXXXXX";

static int sh(const char *cmd, char *out, size_t outlen)
{
	char full[2048];
	snprintf(full, sizeof full, "(%s) >%s/out 2>&1", cmd, dir);
	int st = system(full);
	snprintf(full, sizeof full, "%s/out", dir);
	FILE *f = fopen(full, "r");
	size_t n = f ? fread(out, 1, outlen - 1, f) : 0;
	out[n] = 0;
	if (f)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(seccomp_coverage_check_passes_on_the_installed_headers_and_fails_on_an_unclassified_call)
{
	char out[8192], cmd[1024];
	if (access("build/tools/seccomp-gen", X_OK) != 0 || access("tools/syscall-table", X_OK) != 0) {
		CHECK(!"run from the top of the tree after make");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	/* The real headers: every call classified. */
	if (access("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", R_OK) == 0) {
		snprintf(cmd, sizeof cmd, "tools/syscall-table x86_64 >%s/real.txt && " GEN "--check x86_64=%s/real.txt",
			 dir, dir);
		CHECK(sh(cmd, out, sizeof out) == 0);
		CHECK(strstr(out, "every one classified") != NULL);
	}
	/* A kernel that grew a call nobody reviewed. */
	write_file("new.h", "#define __NR_read 0\n#define __NR_write 1\n#define __NR_kern_future_call 470\n");
	snprintf(cmd, sizeof cmd, "tools/syscall-table x86_64 %s/new.h >%s/new.txt", dir, dir);
	CHECK(sh(cmd, out, sizeof out) == 0);
	snprintf(cmd, sizeof cmd, "grep -qx 'kern_future_call 470' %s/new.txt", dir);
	CHECK(sh(cmd, out, sizeof out) == 0);
	snprintf(cmd, sizeof cmd, GEN "--check x86_64=%s/new.txt", dir);
	CHECK(sh(cmd, out, sizeof out) == 1);
	CHECK(strstr(out, "kern_future_call (470)") != NULL);
	/* Headers that number a known call differently. */
	write_file("moved.h", "#define __NR_read 0\n#define __NR_mount 400\n");
	snprintf(cmd, sizeof cmd, "tools/syscall-table x86_64 %s/moved.h >%s/moved.txt && " GEN "--check x86_64=%s/moved.txt",
		 dir, dir, dir);
	CHECK(sh(cmd, out, sizeof out) == 1);
	CHECK(strstr(out, "mount 400") != NULL);
	/* A pinned table with a call that is not classified. */
	snprintf(cmd, sizeof cmd,
		 "cp data/seccomp/syscalls-aarch64.txt %s/t.txt && echo 'kern_future_call 470' >>%s/t.txt && "
		 "build/tools/seccomp-gen --names data/seccomp/moby-allow-names.txt "
		 "--table x86_64=data/seccomp/syscalls-x86_64.txt --table aarch64=%s/t.txt -o %s/h.h",
		 dir, dir, dir, dir);
	CHECK(sh(cmd, out, sizeof out) == 1);
	CHECK(strstr(out, "kern_future_call (470) is neither allowed, denied nor reviewed") != NULL);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}
