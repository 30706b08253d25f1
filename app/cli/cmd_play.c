/*
 * cmd_play.c - `dssm play`: write a recording back into rings with its
 * original pacing (scaled by --speed), keeping the recorded timestamps or
 * shifting them to now. With --ssm-clock it drives the namespace's SSM clock
 * (libssm.h) and is paced by it, as ssm-player was: SSM programs asking
 * gettimeSSM() see the recording's time at the replay's speed, and whoever
 * pauses the clock or changes its speed (ssm-date) pauses or paces the
 * replay.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/container.h"
#include "libssm.h"
#include "lib/base/base.h"
#include "lib/ring/ring.h"

void help_play(FILE *out)
{
	fprintf(out,
	        "usage: dssm play DIR|FILE [--streams A,B,...] [--speed X] [--now] [--loop]\n"
	        "                 [--start T] [--end T] [--fresh] [--ssm-clock] [--ring-mib N]\n\n"
	        "Writes the recording's samples (DIR, or a ROS 1 bag, MCAP, rosbag2 .db3 or\n"
	        "SSM log FILE, read directly) into rings of the same names, layouts, types,\n"
	        "schemas and properties (in DSSM_NAMESPACE), paced as they were recorded and\n"
	        "scaled by --speed (2 = twice as fast). Samples keep their recorded timestamps,\n"
	        "or with --now are stamped when written: now, then each its recorded offset\n"
	        "divided by --speed (and any pause) later, as live streams are. --loop plays\n"
	        "again and again, shifting each pass after the previous one (samples all at\n"
	        "one time are refused; a pass past 2262 stops it). --start/--end T cut a time\n"
	        "range: epoch seconds (1795320000.5), ISO 8601 (2026-11-23T18:29:10Z, with a\n"
	        "fraction, +09:00, or local time without a zone) or +S from the recording's\n"
	        "first sample (+90, +1m30s, +500ms). On a terminal, space pauses and resumes,\n"
	        "q quits. Status per second; Ctrl-C stops with a summary.\n"
	        "A ring that already holds samples newer than the first one it would get is\n"
	        "refused before anything is written (times never go back in a ring): --fresh\n"
	        "removes and re-creates such rings (not one a live process writes), --now\n"
	        "stamps the samples from now, or play into another DSSM_NAMESPACE.\n"
	        "A ring made again while it was recorded (several entries of one NAME:ID) is\n"
	        "played into one ring, in time order, made with the largest sample size and\n"
	        "slot count among them; an entry of another type or encoding cannot share it:\n"
	        "it is skipped, said, and the exit status is 1. A start that fails removes the\n"
	        "rings it made. A ring takes at most --ring-mib MiB of shared memory (default\n"
	        "256): a stream recorded with a longer history (slots x sample size) is played\n"
	        "into a ring of fewer slots, said; samples keep their size (2 slots at least);\n"
	        "a recorded layout no ring can have (samples over 1 GiB) is an error, said.\n"
	        "--ssm-clock drives the namespace's SSM clock as ssm-player did: SSM programs'\n"
	        "gettimeSSM() reads the time being played and runs at --speed; the replay is\n"
	        "paced by that clock (paused or paced from elsewhere too: ssm-date,\n"
	        "settimeSSM_*). At the end the clock is the real one again.\n\n"
	        "examples:\n"
	        "  dssm play run1\n"
	        "  dssm play run1 --streams odom,scan --speed 0.5 --now\n"
	        "  dssm play run1 --start +1m --end +1m30s\n"
	        "  dssm play run1 --fresh\n"
	        "  dssm import odometry.log -o odo && dssm play odo --ssm-clock --speed 2\n");
}

static dssm_time_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (dssm_time_t)ts.tv_sec * DSSM_NSEC_PER_SEC + ts.tv_nsec;
}

/* --ssm-clock: the replay drives the SSM clock and follows it. */
static int drive_clock;

/* Keys on a terminal: space pauses and resumes, q quits. */
static struct termios saved_tty;
static int keys;

static void keys_on(void)
{
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty) < 0)
		return;
	struct termios raw = saved_tty;
	raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	keys = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	if (keys)
		fprintf(stderr, "dssm play: space pauses and resumes, q quits\n");
}

static void keys_off(void)
{
	if (keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
}

/* A key typed within ms milliseconds (0: none; sleeps without a terminal). */
static char poll_key(int ms)
{
	if (!keys) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		return 0;
	}
	struct pollfd p = {STDIN_FILENO, POLLIN, 0};
	char c;
	return poll(&p, 1, ms) > 0 && read(STDIN_FILENO, &c, 1) == 1 ? c : 0;
}

/* Wait until CLOCK_MONOTONIC reaches `when` plus the time spent paused;
 * returns the pause time added while waiting. */
static dssm_time_t wait_until(dssm_time_t when)
{
	dssm_time_t paused = 0, pause_start = 0;
	int pausing = 0;
	for (;;) {
		dssm_time_t now = mono(), end = dssm__time_add(when, paused);
		if (cli_stop || (!pausing && now >= end))
			return paused;
		/* at most a second at a time: a far `when` (a recording spanning
		 * centuries) is waited for in steps, never computed past int */
		dssm_time_t left = dssm__time_sub(end, now);
		if (left > DSSM_NSEC_PER_SEC)
			left = DSSM_NSEC_PER_SEC;
		int ms = pausing ? 200 : (int)((left + 999999) / 1000000);
		if (!keys) {
			struct timespec ts = {0, (long)(left < DSSM_NSEC_PER_SEC ? left : 999999999)};
			nanosleep(&ts, NULL);
			continue;
		}
		char c = poll_key(ms);
		if (c == 'q') {
			cli_stop = 1;
		} else if (c == ' ') {
			pausing = !pausing;
			if (pausing) {
				pause_start = mono();
				fprintf(stderr, "\rdssm play: paused (space resumes)\033[K");
			} else {
				paused += mono() - pause_start;
			}
		}
	}
}

/* --fresh: remove NAME:ID unless another live process writes it: an empty ring. */
static int remove_for_fresh(const dssm_stream_info *want)
{
	dssm_stream *old;
	dssm_stream_info oi;
	if (dssm_open(want->name, want->id, DSSM_READ, &old) < 0)
		return 0; /* not there (or not a stream: dssm_create says why) */
	int rc = dssm_info(old, &oi);
	dssm_close(old);
	if (rc == 0 && oi.writer_alive && oi.writer_pid != getpid())
		return cli_error("play", "--fresh: ring '%s:%d' is written by the live process %d; stop "
		                 "it first, or play into another DSSM_NAMESPACE", want->name, want->id,
		                 (int)oi.writer_pid);
	rc = dssm_remove(want->name, want->id);
	return rc < 0 ? cli_dssm_error("play", rc) : 0;
}

/* A ring whose newest sample is newer than the first one the replay would
 * write to it would refuse that write half-way through (times never go
 * back in a ring): say so before anything is written, and what to do. */
static int check_ring_time(dssm_stream *ring, const dssm_stream_info *want, dssm_time_t first)
{
	dssm_stream_info ri;
	if (dssm_info(ring, &ri) < 0 || !ri.count || ri.time_newest <= first)
		return 0;
	char have[48], from[48];
	cli_format_time(have, sizeof have, ri.time_newest);
	cli_format_time(from, sizeof from, first);
	return cli_error("play", "ring '%s:%d' already holds samples up to %s, newer than the first "
	                 "one it would get (%s): play with --fresh (re-creates the ring), --now "
	                 "(stamps samples from now), or into another DSSM_NAMESPACE",
	                 want->name, want->id, have, from);
}

/* --ssm-clock: wait until the SSM clock reaches t. The clock is paced here,
 * as ssm-player paced its writes: anyone may pause it, change its speed or
 * set it meanwhile (space here, ssm-date, settimeSSM* in a program), and
 * the replay follows. It is looked at every 50 ms at most. */
static void wait_clock(dssm_time_t t)
{
	double want = dssm_time_to_sec(t);
	while (!cli_stop) {
		double now = gettimeSSM();
		if (now >= want)
			return;
		double speed = gettimeSSM_speed();
		double real = gettimeSSM_is_pause() || !(speed > 0) ? 0.05 : (want - now) / speed;
		char c = poll_key(real < 0.05 ? (int)(real * 1000) + 1 : 50);
		if (c == 'q') {
			cli_stop = 1;
		} else if (c == ' ') {
			int pausing = !gettimeSSM_is_pause();
			settimeSSM_is_pause(pausing);
			fprintf(stderr, pausing ? "\rdssm play: paused (space resumes)\033[K" : "\r\033[K");
		}
	}
}

/* What `dssm play` was asked for. */
struct play_opts {
	const char *list;
	double speed, ring_mib;   /* (--ring-mib: the most shared memory a ring takes) */
	struct cli_time start, end;
	int now, loop, fresh;
};

/* 0, or the exit status after a usage error was printed. */
static int play_parse_options(int argc, char **argv, struct play_opts *o)
{
	static const struct option longopts[] = {{"streams", required_argument, 0, 's'},
	                                         {"fresh", no_argument, 0, 'f'},
	                                         {"speed", required_argument, 0, 'x'},
	                                         {"now", no_argument, 0, 'n'},
	                                         {"loop", no_argument, 0, 'l'},
	                                         {"start", required_argument, 0, 'a'},
	                                         {"end", required_argument, 0, 'e'},
	                                         {"ssm-clock", no_argument, 0, 'C'},
	                                         {"ring-mib", required_argument, 0, 'R'},
	                                         {0, 0, 0, 0}};
	int opt;
	drive_clock = 0;
	while ((opt = cli_getopt("play", argc, argv, "", longopts)) != -1) {
		if (opt == 'C')
			drive_clock = 1;
		if ((opt == 'x' && cli_parse_double("play", "--speed", optarg, &o->speed) < 0) ||
		    (opt == 'a' && cli_parse_time("play", "--start", optarg, &o->start) < 0) ||
		    (opt == 'e' && cli_parse_time("play", "--end", optarg, &o->end) < 0) ||
		    (opt == 'R' && cli_parse_double("play", "--ring-mib", optarg, &o->ring_mib) < 0))
			return EXIT_USAGE;
		if (opt == 's' && cli_parse_stream_globs("play", "--streams", optarg) < 0)
			return EXIT_USAGE;
		if (opt == 's')
			o->list = optarg;
		else if (opt == 'n')
			o->now = 1;
		else if (opt == 'l')
			o->loop = 1;
		else if (opt == 'f')
			o->fresh = 1;
		else if (opt == '?')
			return cli_refused_option();
	}
	if (optind != argc - 1)
		return cli_usage("play", "needs one recording DIR");
	if (!(o->speed > 0))
		return cli_usage("play", "--speed must be > 0");
	return o->ring_mib >= 1 && o->ring_mib <= 1 << 30
	           ? 0 : cli_usage("play", "--ring-mib needs MiB from 1 to 2^30");
}

/* A replay, from the rings' creation to the summary. */
struct play_run {
	const struct play_opts *o;
	dssm_container *c;
	int n, ns;
	int *sel;                 /* the played streams' indexes, ns of them */
	struct cli_damage dmg;    /* damaged streams, said */
	dssm_stream **rings;      /* a played stream's ring, by stream index */
	int *lead;                /* the entry whose ring entry i plays into */
	char *made;               /* the ring of entry i was made by this run */
	int skipped;              /* entries that cannot share their name's ring */
	dssm_time_t first, last;  /* the played streams' span */
	dssm_time_t t0, t1;       /* the window played */
	uint64_t played, bytes;
	int progress;             /* a status line (only on a terminal) */
};

/* Do entries A and B (the same NAME:ID: a ring made again while it was
 * recorded) fit one ring? Their type and encoding must agree (sizes are
 * met by the largest). */
static int same_kind(const dssm_stream_info *a, const dssm_stream_info *b)
{
	return !strcmp(a->type, b->type) && !strcmp(a->encoding, b->encoding);
}

static int same_address(const dssm_stream_info *a, const dssm_stream_info *b)
{
	return a->id == b->id && !strcmp(a->name, b->name);
}

/* The ring for entry i and the later entries of its NAME:ID that can share
 * it: the largest max_size and slots among them. */
static void group_layout(struct play_run *p, int i, const dssm_recorded *r,
                         dssm_stream_config *cfg)
{
	cfg->max_size = r->info.max_size ? r->info.max_size : 1;
	cfg->slots = r->info.slots >= 2 ? r->info.slots : 1000;
	for (int k = i + 1; k < p->n; k++) {
		dssm_recorded o;
		if (dssm_container_stream(p->c, k, &o) < 0 || !same_address(&o.info, &r->info) ||
		    !same_kind(&o.info, &r->info) || !o.count || !cli_stream_selected(&o.info, p->o->list))
			continue;
		cfg->max_size = o.info.max_size > cfg->max_size ? o.info.max_size : cfg->max_size;
		cfg->slots = o.info.slots > cfg->slots ? o.info.slots : cfg->slots;
	}
}

/* The recorded layout within --ring-mib: fewer slots (said), never smaller
 * samples; 2 at least (dssm_create says if /dev/shm cannot hold them), in
 * bytes as dssm_create counts them (schema too; 64 bits: armhf). A layout it
 * refuses for another reason (a size out of range) is its to say. */
static void play_cap_layout(const struct play_run *p, const dssm_recorded *r,
                            dssm_stream_config *cfg)
{
	uint64_t cap = (uint64_t)(p->o->ring_mib * 1048576.0);
	int64_t asked = dssm__ring_bytes(r->info.name, r->info.id, cfg);
	uint32_t slots = cfg->slots, most = dssm__ring_slots_within(r->info.name, r->info.id, cfg, cap);
	if (most == slots || (asked < 0 && asked != DSSM_ENOMEM)) /* (ENOMEM: past what maps) */
		return;
	cfg->slots = most ? most : 2;
	char was[40] = "more than this machine can map", now[16];
	if (asked >= 0)
		cli_format_bytes(was, sizeof was, (double)asked);
	cli_format_bytes(now, sizeof now, (double)dssm__ring_bytes(r->info.name, r->info.id, cfg));
	fprintf(stderr, "dssm play: ring '%s:%d' as recorded (%u slots of %zu bytes) would take %s "
	        "of shared memory, over --ring-mib %g: made with %u slots (%s)%s\n", r->info.name,
	        r->info.id, slots, cfg->max_size, was, p->o->ring_mib, cfg->slots, now,
	        most ? "" : ", the fewest a ring has");
}

/* Create the ring of stream i as it was recorded (--fresh: made again) and
 * check that it can take the replay's first sample. 0, or the exit status
 * after an error was printed. */
static int play_create_ring(struct play_run *p, int i, const dssm_recorded *r)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	group_layout(p, i, r, &cfg);
	cfg.type = r->info.type;
	cfg.encoding = r->info.encoding;
	cfg.schema = dssm_container_schema(p->c, i);
	size_t plen;
	const void *prop = dssm_container_property(p->c, i, &plen);
	if (plen > cfg.property_capacity)
		cfg.property_capacity = plen;
	play_cap_layout(p, r, &cfg);
	int status, rc;
	if (p->o->fresh && (status = remove_for_fresh(&r->info)) != 0)
		return status;
	dssm_stream *there = NULL;
	if (dssm_open(r->info.name, r->info.id, DSSM_READ | DSSM_NOWAIT, &there) == 0)
		dssm_close(there);
	if ((rc = dssm_create(r->info.name, r->info.id, &cfg, &p->rings[i])) < 0) /* layout: way out */
		return rc != DSSM_ELAYOUT ? cli_dssm_error("play", rc) : cli_error("play", "%s: play with "
		       "--fresh (re-creates the ring) or into another DSSM_NAMESPACE", dssm_last_error());
	p->made[i] = !there;
	p->lead[i] = i;
	/* (--now stamps from now: nothing recorded can be newer) */
	if (!p->o->now &&
	    (status = check_ring_time(p->rings[i], &r->info, r->first > p->t0 ? r->first : p->t0)))
		return status;
	if (plen)
		dssm_property_set(p->rings[i], prop, plen);
	return 0;
}

/* A ring made again while it was recorded: entry i goes into the ring of
 * the first played entry of its NAME:ID (1), made big enough for both; if
 * it cannot (another type or encoding), it is skipped and said (-1). 0:
 * the first entry of its name, its ring is to be made. */
static int play_shared_ring(struct play_run *p, int i, const dssm_recorded *r)
{
	for (int k = 0; k < p->ns; k++) {
		int j = p->sel[k];
		dssm_recorded o;
		if (dssm_container_stream_brief(p->c, j, &o) < 0 || !same_address(&o.info, &r->info))
			continue;
		if (same_kind(&o.info, &r->info)) {
			p->rings[i] = p->rings[j];
			p->lead[i] = j;
			return 1;
		}
		int nth = 1;
		for (int e = 0; e < i; e++)
			nth += dssm_container_stream_brief(p->c, e, &o) == 0 && same_address(&o.info, &r->info);
		dssm_container_stream_brief(p->c, j, &o);
		fprintf(stderr, "dssm play: '%s:%d' was made again while it was recorded, with another "
		        "type or encoding: one ring cannot hold both; its ring %d (stream entry %d: type "
		        "%s, encoding %s, %llu samples) is skipped, the first one played has type %s, "
		        "encoding %s\n", r->info.name, r->info.id, nth, i,
		        r->info.type[0] ? r->info.type : "-", r->info.encoding[0] ? r->info.encoding : "-",
		        (unsigned long long)r->count, o.info.type[0] ? o.info.type : "-",
		        o.info.encoding[0] ? o.info.encoding : "-");
		p->skipped++;
		return -1;
	}
	return 0;
}

/* A start that failed: the rings this run made are removed again (none is
 * left empty behind it); rings that were there before are kept. */
static void play_unmake(struct play_run *p)
{
	for (int i = 0; i < p->n; i++) {
		if (!p->rings[i] || p->lead[i] != i)
			continue;
		dssm_recorded r;
		dssm_container_stream_brief(p->c, i, &r);
		dssm_close(p->rings[i]);
		if (p->made[i])
			dssm_remove(r.info.name, r.info.id);
	}
	memset(p->rings, 0, sizeof *p->rings * (size_t)(p->n ? p->n : 1));
}

/* The rings of the selected streams; damaged streams are said (the exit
 * status is 1: never a silently shorter replay), and one whose description
 * is lost is skipped. 0, or the exit status after an error was printed. */
static int play_create_rings(struct play_run *p, const char *path)
{
	p->first = INT64_MAX;
	p->last = INT64_MIN;
	char miss[256];
	if (p->o->list && dssm_container_unmatched(p->c, p->o->list, miss, sizeof miss))
		return cli_error("play", "no stream of %s matches '%s' (--streams %s)", path, miss,
		                 p->o->list);
	for (int i = 0; i < p->n; i++) {
		dssm_recorded r;
		dssm_container_stream_brief(p->c, i, &r);
		/* its files checked against CLOSED before it is played: damage the
		 * replay would meet is said here, not played as a shorter stream */
		if (cli_stream_selected(&r.info, p->o->list)) {
			/* an error (out of descriptors...) is not damage: said as is */
			int rc = dssm_container_verify(p->c, i);
			if (rc < 0)
				return cli_dssm_error("play", rc);
			dssm_container_stream(p->c, i, &r);
		}
		if (cli_damage_of(&r)) {
			cli_damage_say(&p->dmg, &r, i);
			if (!r.info.name[0])
				continue;
		}
		if (!cli_stream_selected(&r.info, p->o->list) || !r.count)
			continue;
		int shared = play_shared_ring(p, i, &r);
		if (shared < 0)
			continue;
		int status = shared ? 0 : play_create_ring(p, i, &r);
		if (status)
			return status;
		p->sel[p->ns++] = i;
		p->first = r.first < p->first ? r.first : p->first;
		p->last = r.last > p->last ? r.last : p->last;
	}
	if (p->ns == 0)
		return cli_error("play", "nothing to play in %s%s%s", path, p->o->list ? " for " : "",
		                 p->o->list ? p->o->list : "");
	return p->o->loop ? cli_loop_instant("play", p->t0 > p->first ? p->t0 : p->first,
	                                     p->last < p->t1 ? p->last : p->t1) : 0;
}

/* How long after the pass's start a sample recorded `elapsed` after the
 * window's start is due at `speed`: saturated, as a double past the int64
 * range may not be converted (a recording from INT64_MIN to INT64_MAX). */
static dssm_time_t due_after(dssm_time_t elapsed, double speed)
{
	double d = (double)elapsed / speed;
	return d >= 9.2e18 ? INT64_MAX : (dssm_time_t)d;
}

/* One pass, paced by the monotonic clock (or the SSM clock), a sample stamped
 * `base` plus its time after the window's start; --now: plus that time / --speed
 * and the pauses, when it is written (saturating: times reach INT64_MIN and
 * INT64_MAX). 0, or the exit status after an error was printed. */
static int play_samples(struct play_run *p, dssm_query *q, int pass, dssm_time_t base,
                        dssm_time_t span)
{
	dssm_time_t start = mono(), pass_mono = start, report = start;
	dssm_record rec;
	int rc = 0;
	while (!cli_stop && (rc = dssm_query_next(q, &rec)) > 0) {
		dssm_time_t elapsed = dssm__time_sub(rec.time, p->t0), due = due_after(elapsed, p->o->speed);
		dssm_time_t stamp = dssm__time_add(base, elapsed);
		if (drive_clock)
			wait_clock(stamp);
		else /* a pause shifts the rest of the pass (pass_mono: its start, shifted) */
			pass_mono = dssm__time_add(pass_mono, wait_until(dssm__time_add(pass_mono, due)));
		if (p->o->now && !drive_clock)
			stamp = dssm__time_add(base, dssm__time_add(dssm__time_sub(pass_mono, start), due));
		if (cli_stop)
			break;
		int64_t w = dssm_write(p->rings[rec.stream], rec.data, rec.len, stamp);
		if (w < 0)
			return cli_dssm_error("play", (int)w);
		p->played++;
		p->bytes += rec.len;
		if (p->progress && mono() - report >= DSSM_NSEC_PER_SEC) {
			char b[16];
			cli_format_bytes(b, sizeof b, (double)p->bytes);
			fprintf(stderr, "\rdssm play: pass %d, %llu sample%s, %s, at %.1f s of %.1f s\033[K",
			        pass + 1, (unsigned long long)p->played, cli_s(p->played), b, dssm__span_sec(p->t0, rec.time),
			        dssm_time_to_sec(span));
			report = mono();
		}
	}
	return rc < 0 ? cli_dssm_error("play", rc) : 0;
}

/* Pass number `pass`: each loop pass is stamped after the previous one,
 * --now from now. With --ssm-clock the clock reads the pass's first time
 * now, then runs at --speed (in that order: a reader that sees the new speed
 * sees the new time). 0, or the exit status after an error was printed. */
static int play_pass(struct play_run *p, int pass)
{
	/* a loop pass whose stamps would pass INT64_MAX (all saturated to one
	 * time) is refused: its last, t0 + span * (pass + 1) - 1, must fit */
	dssm_time_t end = p->last < p->t1 ? p->last : p->t1, n, x;
	if (!p->o->now && (__builtin_sub_overflow(end, p->t0, &n) || __builtin_add_overflow(n, 1, &n) ||
	                   __builtin_mul_overflow(n, (int64_t)pass + 1, &x) ||
	                   __builtin_add_overflow(p->t0, x - 1, &x)))
		return cli_error("play", "--loop: pass %d would be stamped past the last time a stamp "
		                 "holds (2262-04-11T23:47:16.854775807Z): stopped after %d pass%s (--now "
		                 "stamps each pass from now)", pass + 1, pass, pass == 1 ? "" : "es");
	dssm_query *q;
	int rc = dssm_query_open(p->c, p->sel, p->ns, p->t0, p->t1, &q);
	if (rc < 0)
		return cli_dssm_error("play", rc);
	cli_damage_recheck(&p->dmg, p->c, p->sel, p->ns); /* what opening the query met */
	keys_on();
	dssm_time_t span = dssm__time_add(dssm__time_sub(end, p->t0), 1);
	/* the pass's first stamp: now, or the window's start after `pass` spans */
	dssm_time_t base = p->o->now ? dssm_now() : dssm__time_add(p->t0, dssm__time_mul(span, pass));
	int status;
	if (drive_clock && (!settimeSSM(dssm_time_to_sec(base)) || !settimeSSM_speed(p->o->speed)))
		status = cli_error("play", "cannot set the SSM clock: %s", dssm_last_error());
	else
		status = play_samples(p, q, pass, base, span);
	dssm_query_close(q);
	cli_damage_recheck(&p->dmg, p->c, p->sel, p->ns); /* what the replay met and read past */
	keys_off();
	return status;
}

int cmd_play(int argc, char **argv)
{
	struct play_opts o = {.speed = 1.0, .ring_mib = 256, .start = {0, 0, 0, NULL}, .end = {0, 0, 0, NULL}};
	int status = play_parse_options(argc, argv, &o);
	if (status)
		return status;
	struct cli_recording recording;
	if ((status = cli_recording_open("play", argv[optind], &recording)) != 0)
		return status;
	struct play_run p = {.o = &o, .c = recording.c,
	                     .dmg = {.cmd = "play", .intact = "playing its intact part", .lost = "skipped"}};
	p.n = dssm_container_stream_count(p.c);
	dssm_container_set_salvage(p.c, 1);
	p.sel = calloc((size_t)(p.n ? p.n : 1), sizeof *p.sel);
	p.rings = calloc((size_t)(p.n ? p.n : 1), sizeof *p.rings);
	p.dmg.said = calloc((size_t)(p.n ? p.n : 1), 1);
	p.lead = calloc((size_t)(p.n ? p.n : 1), sizeof *p.lead);
	p.made = calloc((size_t)(p.n ? p.n : 1), 1);
	if (!p.sel || !p.rings || !p.dmg.said || !p.lead || !p.made)
		status = cli_error("play", "no memory for %d streams", p.n);
	/* the window is checked before any ring is made */
	dssm_time_t begins, ends;
	cli_recording_span(p.c, &begins, &ends);
	if (status == 0)
		status = cli_time_window("play", &o.start, &o.end, begins, ends, &p.t0, &p.t1);
	if (status == 0 && (status = play_create_rings(&p, argv[optind])) != 0 && p.rings)
		play_unmake(&p);
	cli_catch_signals();
	p.progress = isatty(STDERR_FILENO);
	if (p.t0 < p.first)
		p.t0 = p.first;
	dssm_time_t wall_start = dssm_now();
	for (int pass = 0; status == 0 && !cli_stop && (pass == 0 || o.loop); pass++)
		status = play_pass(&p, pass);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)p.bytes);
	int rings = 0; /* (the entries of a ring made again share one) */
	for (int k = 0; p.lead && k < p.ns; k++)
		rings += p.lead[p.sel[k]] == p.sel[k];
	fprintf(stderr, "%sdssm play: wrote %llu sample%s (%s) into %d stream%s in %.1f s\n",
	        p.progress ? "\r\033[K" : "", (unsigned long long)p.played, cli_s(p.played), b, rings,
	        rings == 1 ? "" : "s", dssm_time_to_sec(dssm_now() - wall_start));
	if (drive_clock)
		inittimeSSM();   /* the real clock again */
	for (int i = 0; p.rings && p.lead && i < p.n; i++)
		if (p.lead[i] == i)
			dssm_close(p.rings[i]);
	free(p.rings);
	free(p.sel);
	free(p.lead);
	free(p.made);
	free(p.dmg.said);
	cli_recording_close(&recording);
	/* skipped entries were said, and the replay is shorter: not a success */
	return status ? status : p.dmg.damaged || p.skipped ? 1 : 0;
}
