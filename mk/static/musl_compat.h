/* Included first (-include) in every object of the static release build
 * (mk/static.mk), which compiles kern against Debian's musl 1.2.3. That
 * musl has no wrapper for two Linux calls kern makes; each is supplied
 * here as the bare system call with glibc's prototype, so the sources
 * stay the same for both C libraries. The results and errno are the
 * kernel's, as with glibc's wrappers. Then open() without musl's extra
 * fcntl(), and two glibc extensions musl lacks: sigabbrev_np() and malloc
 * tuning (a no-op). */
#ifndef KERN_MUSL_COMPAT_H
#define KERN_MUSL_COMPAT_H

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
static inline int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
			    unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}
#endif

static inline int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			   int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* musl's open() follows an O_CLOEXEC open with fcntl(F_SETFD), for
 * kernels before 2.6.23 that ignored the flag; its openat() leaves the
 * flag to the kernel, as glibc's open() does. kern opens everything
 * close-on-exec, so a box start paid one more system call per file
 * (issue 16). An object-like macro, so that a structure member named
 * open (lib/oci's blob sources) is renamed alike where it is declared
 * and where it is called. */
static inline int kern_open_cwd(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return openat(AT_FDCWD, path, flags, mode);
}
#define open kern_open_cwd

/* glibc 2.32's signal abbreviation ("TERM" for SIGTERM), NULL for 0, the
 * real-time signals and out-of-range numbers, exactly as glibc answers
 * (kern stop --signal NAME). */
static inline const char *sigabbrev_np(int sig)
{
	static const char *const abbrev[] = {
		[SIGHUP] = "HUP", [SIGINT] = "INT", [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
		[SIGTRAP] = "TRAP", [SIGABRT] = "ABRT", [SIGBUS] = "BUS", [SIGFPE] = "FPE",
		[SIGKILL] = "KILL", [SIGUSR1] = "USR1", [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
		[SIGPIPE] = "PIPE", [SIGALRM] = "ALRM", [SIGTERM] = "TERM", [SIGSTKFLT] = "STKFLT",
		[SIGCHLD] = "CHLD", [SIGCONT] = "CONT", [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
		[SIGTTIN] = "TTIN", [SIGTTOU] = "TTOU", [SIGURG] = "URG", [SIGXCPU] = "XCPU",
		[SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH",
		[SIGPOLL] = "POLL", [SIGPWR] = "PWR", [SIGSYS] = "SYS",
	};
	if (sig < 0 || (unsigned)sig >= sizeof abbrev / sizeof abbrev[0])
		return NULL;
	return abbrev[sig];
}

/* lib/egress/egress.c limits glibc's malloc to one arena for its resolver
 * threads; musl's malloc has no per-thread arenas, so there is nothing to
 * tune and no mallopt(). */
#ifndef M_ARENA_MAX
#define M_ARENA_MAX (-8)
static inline int mallopt(int param, int value)
{
	(void)param;
	(void)value;
	return 1;
}
#endif

#endif
