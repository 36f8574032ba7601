/* Resolver threads: a mutex-guarded FIFO in, a pipe of pointers out (a
 * pointer write is atomic, and the proxy caps outstanding jobs far below a
 * pipe's capacity, so workers never block on it). Threads are made as
 * needed, up to the maximum: each counts against the box's pids cap. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "egress/pool.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static struct egress_job *head, **tail = &head;
static int done_pipe[2] = {-1, -1};
static int nthreads, max_threads, idle;

/* A job pointer as the bytes that cross the pipe. */
union job_bytes {
	struct egress_job *job;
	unsigned char bytes[sizeof(void *)];
};

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		idle++;
		while (!head)
			pthread_cond_wait(&ready, &lock);
		idle--;
		struct egress_job *j = head;
		head = j->next;
		if (!head)
			tail = &head;
		int cancelled = j->cancelled;
		pthread_mutex_unlock(&lock);

		j->rc = cancelled ? -1 : egress_resolve(j->host, j->port, &j->addrs);
		union job_bytes out = {.job = j};
		while (write(done_pipe[1], out.bytes, sizeof out.bytes) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

/* One more worker; called with lock held (or before any worker exists). */
static int spawn(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	/* getaddrinfo() needs little stack; 256 KiB leaves room for NSS. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&t, &attr, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return err;
	nthreads++;
	return 0;
}

int egress_pool_start(int n)
{
	if (pipe2(done_pipe, O_CLOEXEC) < 0)
		return -1;
	if (fcntl(done_pipe[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	max_threads = n;
	int err = spawn();
	if (err) {
		errno = err;
		return -1;
	}
	return done_pipe[0];
}

void egress_pool_submit(struct egress_job *j)
{
	j->next = NULL;
	j->cancelled = 0;
	pthread_mutex_lock(&lock);
	*tail = j;
	tail = &j->next;
	/* Every worker busy (a slow name): add one if the cap allows; if the
	 * box's pids cap does not, the job waits its turn. */
	if (idle == 0 && nthreads < max_threads)
		(void)spawn();
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
}

void egress_pool_cancel(struct egress_job *j)
{
	pthread_mutex_lock(&lock);
	j->cancelled = 1;
	pthread_mutex_unlock(&lock);
}

struct egress_job *egress_pool_done(void)
{
	union job_bytes in;
	ssize_t n = read(done_pipe[0], in.bytes, sizeof in.bytes);
	return n == (ssize_t)sizeof in.bytes ? in.job : NULL;
}
