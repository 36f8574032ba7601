/* Load generator for bench/egress: a data source and a client that pulls
 * from it over N connections at once, directly or through the egress
 * proxy's CONNECT tunnels, and reports throughput and the proxy's memory.
 *
 *   egress-load serve PORT
 *       listen on 127.0.0.1:PORT; write 64 KiB blocks to every connection
 *       until it goes away
 *   egress-load run ADDR PORT N SECONDS [--via NAME] [--pid PID]
 *       open N connections (through the proxy at ADDR:PORT with
 *       `CONNECT NAME:443` when --via), read for SECONDS, print one line:
 *       conns, MiB/s, and with --pid the proxy's VmRSS before any
 *       connection, with the N tunnels idle and while busy, and its VmHWM
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64 << 10)

static char block[BLOCK];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "egress-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long status_kib(int pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static int serve(int port) __attribute__((noreturn));
static int serve(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct epoll_event ev, evs[64];
	int one = 1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1024) < 0)
		die("listen");
	int ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = l;
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == l) {
				int c;
				while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev.events = EPOLLOUT | EPOLLIN;
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			if (evs[i].events & EPOLLIN) {
				char sink[4096];
				ssize_t r = read(fd, sink, sizeof sink);
				if (r == 0 || (r < 0 && errno != EAGAIN)) {
					close(fd);
					continue;
				}
			}
			if ((evs[i].events & EPOLLOUT) && write(fd, block, BLOCK) < 0 && errno != EAGAIN)
				close(fd);
		}
	}
}

/* Reads the proxy's answer to CONNECT byte by byte, so no tunnel byte is
 * taken for the head. */
static int tunnel_open(int fd, const char *name)
{
	char req[600], head[1024];
	size_t n = 0;
	int len = snprintf(req, sizeof req, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", name, name);
	if (write(fd, req, (size_t)len) != len)
		return -1;
	while (n < sizeof head - 1) {
		if (read(fd, head + n, 1) != 1)
			return -1;
		n++;
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[n] = 0;
	return strncmp(head, "HTTP/1.1 200 ", 13) == 0 ? 0 : -1;
}

static int run(int argc, char **argv)
{
	const char *addr = argv[2], *via = NULL;
	int port = atoi(argv[3]), n = atoi(argv[4]), pid = 0;
	double secs = atof(argv[5]);
	for (int i = 6; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--via"))
			via = argv[i + 1];
		else if (!strcmp(argv[i], "--pid"))
			pid = atoi(argv[i + 1]);
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	long rss0 = pid ? status_kib(pid, "VmRSS:") : -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, addr, &a.sin_addr);
	int ep = epoll_create1(0);
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
			die("connect");
		if (via && tunnel_open(fd, via) < 0) {
			fprintf(stderr, "egress-load: tunnel %d refused\n", i);
			return 1;
		}
		fcntl(fd, F_SETFL, O_NONBLOCK);
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	/* All N open: let them sit, then look at the proxy. */
	struct timespec pause = {0, 300 * 1000 * 1000};
	nanosleep(&pause, NULL);
	long rss_idle = pid ? status_kib(pid, "VmRSS:") : -1, rss_busy = -1;
	unsigned long long bytes = 0;
	double t0 = now(), t = t0, sampled = 0;
	struct epoll_event evs[128];
	static char buf[1 << 18];
	while ((t = now()) - t0 < secs) {
		int k = epoll_wait(ep, evs, 128, 100);
		for (int i = 0; i < k; i++) {
			ssize_t r = read(evs[i].data.fd, buf, sizeof buf);
			if (r > 0)
				bytes += (unsigned long long)r;
			else if (r == 0)
				die("early end of a connection");
		}
		if (pid && t - t0 > secs / 2 && !sampled) {
			rss_busy = status_kib(pid, "VmRSS:");
			sampled = 1;
		}
	}
	printf("conns=%d seconds=%.1f mibps=%.0f", n, t - t0, (double)bytes / (t - t0) / (1 << 20));
	if (pid)
		printf(" rss_start_kib=%ld rss_idle_kib=%ld rss_busy_kib=%ld hwm_kib=%ld", rss0, rss_idle,
		       rss_busy, status_kib(pid, "VmHWM:"));
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	memset(block, 'x', sizeof block);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	if (argc >= 6 && !strcmp(argv[1], "run"))
		return run(argc, argv);
	fprintf(stderr, "usage: egress-load serve PORT | run ADDR PORT N SECONDS [--via NAME] [--pid PID]\n");
	return 2;
}
