/*
 * playback.c - a recording (a container directory) served as the source of
 * the channels instead of the rings: its samples replayed in time order at
 * --speed, each with its recorded measurement time as log time, and a Time
 * message before each batch (the `time` capability) so Foxglove's clock
 * follows the recording. The replay starts from the beginning with the
 * first subscription (when none is running), and runs once, or with --loop
 * for ever - until the app takes control (the playbackControl capability,
 * docs/foxglove.md): then its Playback Control Requests play, pause, seek
 * and set the speed, each answered with a Playback State, and the end of
 * the recording is a state of its own (Ended) that a play starts again.
 * Paced by a loop timer; nothing blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base/bytes.h"
#include "dssm/container.h"
#include "pace.h"
#include "protocol.h"
#include "server.h"

/* Samples handed out per timer call at most: a fast replay yields to the sockets. */
#define PLAY_BATCH 256

struct fg_playback {
	dssm_container *c;
	dssm_query *q;
	struct fg_channel **by_stream; /* channel of each recorded stream (NULL: skipped) */
	int nstreams;
	dssm_record rec;
	int have;                      /* rec holds the next sample */
	dssm_time_t first;             /* recording time at the replay's clock start */
	dssm_time_t prev;              /* the sample played last (gaps, pace.h) */
	int64_t start_us;              /* monotonic clock then */
	uint64_t rounds;
	/* under the app's control (playbackControl) */
	int controlled, paused, ended;
	double speed;                  /* a factor of real time */
	dssm_time_t current;           /* the playback position: last played, or sought */
	dssm_time_t data_start, data_end; /* the recording's time range */
};

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The replay from recording time `from` on (INT64_MIN: the beginning);
 * its clock starts again at the next sample. */
static int restart_at(struct fg_playback *p, dssm_time_t from)
{
	if (p->q)
		dssm_query_close(p->q);
	p->q = NULL;
	p->have = 0;
	int rc = dssm_query_open(p->c, NULL, 0, from, INT64_MAX, &p->q);
	if (rc < 0)
		return rc;
	p->start_us = mono_us();
	p->first = INT64_MIN;
	p->current = from == INT64_MIN ? p->data_start : from;
	return 0;
}

static int restart(struct fg_playback *p)
{
	return restart_at(p, INT64_MIN);
}

int fg_playback_open(struct fg_server *srv, const char *dir)
{
	struct fg_playback *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	int rc = dssm_container_open(dir, &p->c);
	if (rc < 0) {
		fprintf(stderr, "dssm foxglove: cannot open the recording '%s': %s\n", dir, dssm_last_error());
		free(p);
		return -1;
	}
	p->nstreams = dssm_container_stream_count(p->c);
	p->by_stream = calloc((size_t)(p->nstreams > 0 ? p->nstreams : 1), sizeof *p->by_stream);
	for (int i = 0; p->by_stream && i < p->nstreams; i++) {
		dssm_recorded r;
		if (dssm_container_stream_brief(p->c, i, &r) < 0 || r.damage) {
			fprintf(stderr, "dssm foxglove: recorded stream %d of '%s' skipped: %s\n", i, dir,
			        r.damage ? r.damage : dssm_last_error());
			continue;
		}
		struct fg_channel *ch = calloc(1, sizeof *ch);
		if (!ch)
			break;
		if (fg_channel_describe(ch, &r.info, dssm_container_schema(p->c, i)) < 0) {
			fprintf(stderr, "dssm foxglove: not serving recorded '%s:%d': %s\n", r.info.name,
			        r.info.id, dssm_last_error());
			fg_struct_close(ch);
			free(ch->schema);
			free(ch);
			continue;
		}
		ch->rec_stream = i;
		/* ROS data: the recording's own topic (a bag's, an MCAP file's), the
		 * one `dssm info` shows and `dssm export` writes */
		char topic[sizeof ch->topic];
		if (ch->topic[0] == '/' && dssm_container_topic(p->c, i, topic, sizeof topic) == 0)
			snprintf(ch->topic, sizeof ch->topic, "%s", topic);
		if (r.count && (!p->data_start || r.first < p->data_start))
			p->data_start = r.first;
		if (r.count && (!p->data_end || r.last > p->data_end))
			p->data_end = r.last;
		ch->id = ++srv->channels.next_id;
		ch->next = srv->channels.head;
		srv->channels.head = ch;
		p->by_stream[i] = ch;
	}
	p->speed = srv->cfg->speed > 0 ? srv->cfg->speed : 1.0;
	if (!p->by_stream || restart(p) < 0) {
		fprintf(stderr, "dssm foxglove: cannot read the recording '%s': %s\n", dir, dssm_last_error());
		srv->play = p;
		fg_playback_close(srv);
		return -1;
	}
	srv->play = p;
	return 0;
}

static void send_time(struct fg_server *srv, dssm_time_t t)
{
	struct fg_sample *s = fg_sample_new(0, t);
	if (!s)
		return;
	for (struct fg_client *c = srv->clients; c; c = c->next)
		fg_client_queue(c, NULL, s);
	fg_sample_put(s);
}

/* A gap over FG_PLAY_MAX_GAP_S: the replay's clock restarts at the next
 * sample, now, and every client is told. */
static void jump(struct fg_server *srv, struct fg_playback *p, int64_t now)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		fg_client_status(c, FG_INFO, "recording: jumped over a gap of %.0f s (from %lld to %lld ns), "
		                 "longer than %d s", ((double)p->rec.time - (double)p->prev) / 1e9,
		                 (long long)p->prev, (long long)p->rec.time, FG_PLAY_MAX_GAP_S);
	p->first = p->prev = p->rec.time;
	p->start_us = now;
}

/* No subscriber is left: the replay stops, and the next subscription
 * starts it again from the beginning. */
void fg_playback_stop(struct fg_server *srv)
{
	if (!srv->playing)
		return;
	lws_sul_cancel(&srv->pace);
	srv->playing = 0;
	if (!srv->play->controlled) /* (the app's position is kept) */
		restart(srv->play);
}

void fg_playback_range(struct fg_server *srv, dssm_time_t *start, dssm_time_t *end)
{
	*start = srv->play->data_start;
	*end = srv->play->data_end;
}

int fg_playback_may_run(struct fg_server *srv)
{
	return srv->play && !srv->play->paused;
}

/* The replay's state, to every client that controls it (req_id: the
 * request this answers, or NULL). */
static void tell_state(struct fg_server *srv, int did_seek, const char *req_id)
{
	struct fg_playback *p = srv->play;
	struct fg_play_state st = {p->ended ? FG_ENDED : p->paused ? FG_PAUSED : FG_PLAYING,
	                           p->current, (float)p->speed, did_seek, req_id};
	struct wbuf w = {0};
	fg_put_play_state(&w, &st);
	for (struct fg_client *c = srv->clients; c; c = c->next)
		if (c->controls)
			fg_client_send_binary(c, &w);
	wbuf_free(&w);
}

static void run(struct fg_server *srv, int on)
{
	if (on && !srv->playing) {
		srv->playing = 1;
		lws_sul_schedule(srv->ctx, 0, &srv->pace, fg_server_on_pace, 1);
	} else if (!on && srv->playing) {
		lws_sul_cancel(&srv->pace);
		srv->playing = 0;
	}
}

void fg_playback_control(struct fg_server *srv, struct fg_client *c,
                         const struct fg_play_request *req)
{
	struct fg_playback *p = srv->play;
	c->controls = 1;
	p->controlled = 1;
	int did_seek = 0;
	if (req->seek || (p->ended && !req->pause)) {
		/* a seek, or a play after the end (from the beginning): what the
		 * clients still have queued is of the old position */
		dssm_time_t t = !req->seek ? INT64_MIN
		                : req->seek_time > INT64_MAX ? INT64_MAX : (dssm_time_t)req->seek_time;
		if (restart_at(p, t) < 0) {
			fg_client_status(c, FG_ERROR, "seek to %lld: %s", (long long)t, dssm_last_error());
		} else {
			for (struct fg_client *k = srv->clients; k; k = k->next)
				fg_client_drop_queued(k);
			send_time(srv, p->current);
			did_seek = req->seek;
			p->ended = 0;
		}
	}
	if (p->speed != req->speed) {
		p->speed = req->speed;
		p->first = INT64_MIN; /* the clock goes on from the next sample at the new speed */
	}
	p->paused = req->pause;
	if (p->paused)
		p->first = INT64_MIN; /* no catching up on the pause afterwards */
	run(srv, !p->paused && !p->ended);
	tell_state(srv, did_seek, req->request_id);
}

int64_t fg_playback_step(struct fg_server *srv)
{
	struct fg_playback *p = srv->play;
	double speed = p->speed;
	dssm_time_t last = INT64_MIN;
	for (int n = 0; n < PLAY_BATCH; n++) {
		if (!p->have) {
			int rc = dssm_query_next(p->q, &p->rec);
			if (rc <= 0) {
				if (rc < 0)
					fprintf(stderr, "dssm foxglove: reading the recording: %s\n", dssm_last_error());
				if (last != INT64_MIN)
					send_time(srv, last);
				p->rounds++;
				/* (a round that found no sample does not loop: an empty
				 * recording restarted every millisecond) */
				if (srv->cfg->loop && rc == 0 && p->first != INT64_MIN && restart(p) == 0)
					return 1000;
				for (struct fg_client *c = srv->clients; c; c = c->next) {
					c->tell_end = 1; /* after its queued samples (client.c) */
					lws_callback_on_writable(c->wsi);
				}
				if (p->controlled) { /* the app says when to play again */
					p->ended = 1;
					tell_state(srv, 0, NULL);
				} else {
					restart(p); /* the next subscription replays it again */
				}
				return -1;
			}
			p->have = 1;
		}
		if (p->first == INT64_MIN) { /* the replay's clock starts now */
			p->first = p->prev = p->rec.time;
			p->start_us = mono_us();
		}
		int64_t now = mono_us();
		int64_t wait = fg_pace_wait_us(p->first, p->start_us, p->prev, p->rec.time, now, speed);
		if (wait < 0)
			jump(srv, p, now);
		else if (wait > 0) {
			if (last != INT64_MIN)
				send_time(srv, last);
			return wait;
		}
		struct fg_channel *ch = p->rec.stream >= 0 && p->rec.stream < p->nstreams
		                                ? p->by_stream[p->rec.stream] : NULL;
		if (ch && ch->subscribers) {
			struct fg_sample *s = fg_sample_new(p->rec.len, p->rec.time);
			if (s) {
				memcpy(s->data, p->rec.data, p->rec.len);
				fg_server_deliver(srv, ch, s);
				fg_sample_put(s);
			}
		}
		last = p->prev = p->current = p->rec.time;
		p->have = 0;
	}
	if (last != INT64_MIN)
		send_time(srv, last);
	return 0;
}

void fg_playback_close(struct fg_server *srv)
{
	struct fg_playback *p = srv->play;
	if (!p)
		return;
	if (p->q)
		dssm_query_close(p->q);
	dssm_container_close(p->c);
	free(p->by_stream);
	free(p);
	srv->play = NULL;
}
