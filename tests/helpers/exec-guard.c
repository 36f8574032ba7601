/* exec-guard [--box-only] [--allow PATH]... KERN -- CMD [ARG...]: the SC-12 guard. Runs CMD
 * under ptrace and stops every process of its tree at each successful
 * execve. When the new image is not KERN (compared by device and inode)
 * and the process has no seccomp filter yet (Seccomp: in
 * /proc/PID/status is not 2), non-kern code is about to run unfiltered:
 * it prints "exec-guard: VIOLATION ..." and the guard fails.
 * --box-only judges only processes in another pid namespace than the
 * guard's (the box), so host-side helpers such as newuidmap are ignored;
 * --allow PATH exempts a wrapper the test itself runs outside the box
 * (such as unshare creating the namespace the driver needs).
 * Exit: CMD's status (128+N for a signal), or 99 on any violation. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	int v = -1;
	size_t n = strlen(field);
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = atoi(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

static int same_pidns(pid_t pid)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/pid", &b) < 0)
		return 1;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int main(int argc, char **argv)
{
	int box_only = 0, i = 1, violations = 0, status = 0, nallowed = 0;
	struct stat kern, allowed[8];
	for (;;) {
		if (i < argc && !strcmp(argv[i], "--box-only")) {
			box_only = 1;
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--allow") && nallowed < 8) {
			if (stat(argv[i + 1], &allowed[nallowed++]) < 0) {
				fprintf(stderr, "exec-guard: %s: %s\n", argv[i + 1], strerror(errno));
				return 2;
			}
			i += 2;
		} else
			break;
	}
	if (argc - i < 3 || strcmp(argv[i + 1], "--") != 0) {
		fprintf(stderr, "usage: exec-guard [--box-only] [--allow PATH]... KERN -- CMD [ARG...]\n");
		return 2;
	}
	if (stat(argv[i], &kern) < 0) {
		fprintf(stderr, "exec-guard: %s: %s\n", argv[i], strerror(errno));
		return 2;
	}
	char **cmd = argv + i + 2;
	pid_t child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(2);
		raise(SIGSTOP);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int st;
	if (waitpid(child, &st, 0) < 0 || !WIFSTOPPED(st))
		return 2;
	ptrace(PTRACE_SETOPTIONS, child, 0,
	       PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		       PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, child, 0, 0);
	for (;;) {
		pid_t pid = waitpid(-1, &st, __WALL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (pid == child)
				status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16;
		if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
			char path[64];
			struct stat exe;
			snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
			int known = stat(path, &exe) == 0 && exe.st_dev == kern.st_dev && exe.st_ino == kern.st_ino;
			for (int k = 0; k < nallowed; k++)
				known |= exe.st_dev == allowed[k].st_dev && exe.st_ino == allowed[k].st_ino;
			int filtered = status_field(pid, "Seccomp") == 2;
			if (!known && !filtered && !(box_only && same_pidns(pid))) {
				char target[512] = "?";
				ssize_t n = readlink(path, target, sizeof target - 1);
				if (n > 0)
					target[n] = 0;
				fprintf(stderr, "exec-guard: VIOLATION: pid %d executed %s with no seccomp filter\n",
					(int)pid, target);
				violations++;
			}
			sig = 0;
		} else if (sig == SIGTRAP && event) {
			sig = 0;	/* fork/clone/vfork events */
		} else if (sig == SIGSTOP && event == 0) {
			/* A new tracee's first stop, or a real SIGSTOP: let it run. */
			sig = 0;
		}
		ptrace(PTRACE_CONT, pid, 0, sig);
	}
	return violations ? 99 : status;
}
