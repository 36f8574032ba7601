/* See layer/pump.h. A ring of RING buffers: the producer fills them in
 * order, the consumer (libarchive's read callback) takes them in order
 * and holds one at a time. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer/pump.h"

#define RING 6

struct layer_pump {
	struct layer_codec *codec;
	struct tar_scan *scan;
	size_t chunk;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	unsigned char *buf[RING];
	size_t len[RING];
	size_t head, count;	/* filled, not yet taken: [head, head + count) */
	int held;		/* the buffer the consumer holds, or -1 */
	int done;		/* 1 end, -1 failure */
	int stop;
	int eof, codec_failed;
	char why[256];
};

static void *produce(void *arg)
{
	struct layer_pump *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->count + (p->held >= 0) >= RING)
			pthread_cond_wait(&p->freed, &p->mu);
		if (p->stop)
			break;
		size_t slot = (p->head + p->count) % RING;
		pthread_mutex_unlock(&p->mu);
		ssize_t n = codec_read(p->codec, p->buf[slot], p->chunk, p->why, sizeof p->why);
		pthread_mutex_lock(&p->mu);
		if (n < 0) {
			p->codec_failed = 1;
			p->done = -1;
		} else if (n == 0) {
			p->eof = 1;
			p->done = 1;
		} else if (tar_scan_feed(p->scan, p->buf[slot], (size_t)n) < 0) {
			p->done = -1;
		} else {
			p->len[slot] = (size_t)n;
			p->count++;
		}
		pthread_cond_broadcast(&p->filled);
		if (p->done)
			break;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct layer_pump *pump_start(struct layer_codec *codec, struct tar_scan *scan, size_t chunk)
{
	struct layer_pump *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->codec = codec;
	p->scan = scan;
	p->chunk = chunk;
	p->held = -1;
	for (int i = 0; i < RING; i++)
		if (!(p->buf[i] = malloc(chunk)))
			goto fail;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->filled, NULL);
	pthread_cond_init(&p->freed, NULL);
	if (pthread_create(&p->thread, NULL, produce, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->filled);
		pthread_cond_destroy(&p->freed);
		goto fail;
	}
	return p;
fail:
	for (int i = 0; i < RING; i++)
		free(p->buf[i]);
	free(p);
	return NULL;
}

ssize_t pump_next(struct layer_pump *p, const void **buf)
{
	ssize_t n;
	pthread_mutex_lock(&p->mu);
	if (p->held >= 0) {
		p->held = -1;
		pthread_cond_signal(&p->freed);
	}
	while (p->count == 0 && !p->done)
		pthread_cond_wait(&p->filled, &p->mu);
	/* A failure ends the stream at once; buffers after it do not count. */
	if (p->done < 0) {
		n = -1;
	} else if (p->count) {
		p->held = (int)p->head;
		p->head = (p->head + 1) % RING;
		p->count--;
		*buf = p->buf[p->held];
		n = (ssize_t)p->len[p->held];
	} else {
		n = 0;
	}
	pthread_mutex_unlock(&p->mu);
	return n;
}

int pump_failed(struct layer_pump *p)
{
	pthread_mutex_lock(&p->mu);
	int f = p->done < 0;
	pthread_mutex_unlock(&p->mu);
	return f;
}

int pump_scan_next(struct layer_pump *p, struct tar_scan_entry *e)
{
	pthread_mutex_lock(&p->mu);
	int r = tar_scan_next(p->scan, e);
	pthread_mutex_unlock(&p->mu);
	return r;
}

void pump_finish(struct layer_pump *p, int *eof, int *codec_failed, char *why, size_t whylen)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	*eof = p->eof;
	*codec_failed = p->codec_failed;
	if (p->codec_failed)
		snprintf(why, whylen, "%s", p->why);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->filled);
	pthread_cond_destroy(&p->freed);
	for (int i = 0; i < RING; i++)
		free(p->buf[i]);
	free(p);
}
