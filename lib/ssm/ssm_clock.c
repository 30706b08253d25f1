/*
 * ssm_clock.c - SSM's clock (libssm.h, ssm-time.h): a virtual time shared
 * by every process of a namespace, set by players, followed by gettimeSSM()
 * and the SSM sleeps. Also calcSSM_table/life and the node/edge calls.
 *
 * The state is SSM's: SSM time = speed * real + offset, or pausetime while
 * paused. It lives in the shared-memory object "/dssm-ssmclock:NS":
 *
 *   magic, version, the setters' lock (the holder's pid), a generation
 *   number, and two copies of the state.
 *
 * A setter takes the mutex, writes the copy readers are not using (the one
 * of generation + 1), then publishes generation + 1. A reader loads the
 * generation, copies that state, and loads the generation again: equal
 * means the copy was whole (a setter writes a copy only after publishing
 * the generation that retires it). A setter killed anywhere leaves the
 * published state whole; the next setter takes its lock over once it sees
 * the holder's process is gone (not with a robust pthread mutex: qemu-user,
 * where the armhf tests run, has no robust futex list).
 * Fields are atomics read and written relaxed between the fences, so no
 * access is a data race.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "libssm.h"

#define CLOCK_MAGIC 0x4b4c434du   /* "MCLK" */
#define CLOCK_VERSION 2u
#define LOCK_PATIENCE 20   /* ms a holder may keep the lock before it is checked */

struct clock_state {
	_Atomic uint64_t offset, speed, pausetime; /* doubles' bits */
	_Atomic uint32_t is_pause;
};

struct clock_seg {
	_Atomic uint32_t magic;        /* set last by the creator */
	uint32_t version;
	_Atomic uint32_t lock;         /* setters: the holder's pid, 0 free */
	_Atomic uint64_t generation;   /* the copy in use is state[generation & 1] */
	struct clock_state state[2];
};

struct clock_view {
	double offset, speed, pausetime;
	int is_pause;
};

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clock_seg *_Atomic seg;   /* NULL: not attached */
/* Not attached: the time calls look for a clock again from this time on
 * (once a second), so a player started later is followed within a second
 * and a namespace nobody sets gets no clock object at all. */
static _Atomic int64_t next_look;

static uint64_t bits_of(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof b);
	return b;
}

static double double_of(uint64_t b)
{
	double d;
	memcpy(&d, &b, sizeof d);
	return d;
}

static int clock_name(char *out, size_t cap)
{
	char ns[DSSM_NAMESPACE_MAX + 1];
	int rc = dssm__namespace(ns);
	if (rc < 0)
		return rc;
	snprintf(out, cap, "/dssm-ssmclock:%s", ns);
	return 0;
}

static void store_state(struct clock_state *s, const struct clock_view *v)
{
	atomic_store_explicit(&s->offset, bits_of(v->offset), memory_order_relaxed);
	atomic_store_explicit(&s->speed, bits_of(v->speed), memory_order_relaxed);
	atomic_store_explicit(&s->pausetime, bits_of(v->pausetime), memory_order_relaxed);
	atomic_store_explicit(&s->is_pause, (uint32_t)v->is_pause, memory_order_relaxed);
}

static void load_state(const struct clock_state *s, struct clock_view *v)
{
	v->offset = double_of(atomic_load_explicit(&s->offset, memory_order_relaxed));
	v->speed = double_of(atomic_load_explicit(&s->speed, memory_order_relaxed));
	v->pausetime = double_of(atomic_load_explicit(&s->pausetime, memory_order_relaxed));
	v->is_pause = (int)atomic_load_explicit(&s->is_pause, memory_order_relaxed);
}

static const struct clock_view real_clock = {0.0, 1.0, 0.0, 0};

/* A new segment's contents: the real clock, the lock free. */
static int init_segment(struct clock_seg *c)
{
	atomic_store_explicit(&c->lock, 0, memory_order_relaxed);
	c->version = CLOCK_VERSION;
	store_state(&c->state[0], &real_clock);
	store_state(&c->state[1], &real_clock);
	atomic_store_explicit(&c->generation, 0, memory_order_relaxed);
	atomic_store_explicit(&c->magic, CLOCK_MAGIC, memory_order_release);
	return 0;
}

/* Map an existing segment, waiting (up to ~1 s) for its creator to finish. */
static int map_existing(const char *name, struct clock_seg **out)
{
	for (int i = 0; i < 1000; i++) {
		int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
		if (fd < 0 && errno == EACCES)
			return dssm__access_denied(name, "SSM clock: opening");
		if (fd < 0)
			return errno == ENOENT ? 1 : dssm__fail_errno(DSSM_ESYS, "SSM clock: shm_open %s", name);
		struct stat st;
		void *p = MAP_FAILED;
		if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct clock_seg))
			p = mmap(NULL, sizeof(struct clock_seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p != MAP_FAILED) {
			struct clock_seg *c = p;
			if (atomic_load_explicit(&c->magic, memory_order_acquire) == CLOCK_MAGIC) {
				if (c->version != CLOCK_VERSION) {
					munmap(p, sizeof *c);
					return dssm__fail(DSSM_ELAYOUT, "SSM clock %s has version %u; this "
					                  "libssm knows %u", name, c->version, CLOCK_VERSION);
				}
				*out = c;
				return 0;
			}
			munmap(p, sizeof *c);
		}
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return dssm__fail(DSSM_ECORRUPT, "SSM clock %s was never finished by its creator (remove "
	                  "it with destroytimeSSM or rm /dev/shm%s)", name, name);
}

static int create_segment(const char *name, struct clock_seg **out)
{
	unsigned mode;
	int rc = dssm__create_mode(0, &mode); /* as the streams: DSSM_MODE, or 0660 */
	if (rc < 0)
		return rc;
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
	if (fd < 0 && errno == EACCES)
		return dssm__access_denied(name, "SSM clock: creating");
	if (fd < 0)
		return errno == EEXIST ? 1 : dssm__fail_errno(DSSM_ESYS, "SSM clock: creating %s", name);
	void *p = MAP_FAILED;
	if (fchmod(fd, (mode_t)mode) < 0 || ftruncate(fd, sizeof(struct clock_seg)) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "SSM clock: sizing %s", name);
	else if ((p = mmap(NULL, sizeof(struct clock_seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	                   0)) == MAP_FAILED)
		rc = dssm__fail_errno(DSSM_ESYS, "SSM clock: mapping %s", name);
	close(fd);
	if (rc == 0 && (rc = init_segment(p)) == 0) {
		*out = p;
		return 0;
	}
	if (p != MAP_FAILED)
		munmap(p, sizeof(struct clock_seg));
	shm_unlink(name);
	return rc;
}

/* Attach; create the clock too if `create`. 1 attached, 0 no clock (and
 * not `create`), or a dssm error (reported). */
static int attach(int create)
{
	pthread_mutex_lock(&attach_lock);
	struct clock_seg *c = atomic_load(&seg);
	char name[DSSM_NAMESPACE_MAX + 32];
	int rc = c ? 0 : clock_name(name, sizeof name);
	/* open it, or create it; a creator racing us makes one of the two work */
	for (int i = 0; !c && rc >= 0 && i < 8; i++) {
		rc = map_existing(name, &c);
		if (rc == 1 && !create)
			break;
		if (rc == 1)
			rc = create_segment(name, &c);
		if (rc == 1)
			rc = 0;   /* created meanwhile by another process: open it */
	}
	if (c)
		atomic_store(&seg, c);
	pthread_mutex_unlock(&attach_lock);
	return c ? 1 : rc == 1 ? 0 : rc;
}

int opentimeSSM(void)
{
	return attach(1) == 1;
}

int createtimeSSM(void)
{
	return opentimeSSM();
}

void closetimeSSM(void)
{
	pthread_mutex_lock(&attach_lock);
	struct clock_seg *c = atomic_exchange(&seg, NULL);
	atomic_store(&next_look, 0);
	pthread_mutex_unlock(&attach_lock);
	/* a thread still reading through c would fault: SSM's closetimeSSM
	 * has the same rule (close when no other thread tells the time) */
	if (c)
		munmap(c, sizeof *c);
}

int destroytimeSSM(void)
{
	closetimeSSM();
	char name[DSSM_NAMESPACE_MAX + 32];
	if (clock_name(name, sizeof name) < 0)
		return 0;
	if (shm_unlink(name) < 0 && errno != ENOENT)
		return dssm__fail_errno(DSSM_ESYS, "SSM clock: removing %s", name), 0;
	return 1;
}

/* A clock that is there but cannot be read (another user's, mode 0660; a
 * damaged one) must not be ignored silently: SSM time would then be real
 * time while a player drives everybody else's. Said once per process on
 * stderr, as SSM's own library told its failures there (the one place
 * libssm prints without being asked: gettimeSSM has no error to return). */
static void tell_real_time_once(void)
{
	static atomic_int told;
	if (atomic_exchange(&told, 1))
		return;
	fprintf(stderr, "libssm: gettimeSSM() follows the real time, not the SSM clock: %s\n",
	        dssm_last_error());
}

/* The clock if there is one (looked for at most once a second); NULL:
 * the real clock. */
static struct clock_seg *clock_at(dssm_time_t now)
{
	struct clock_seg *c = atomic_load_explicit(&seg, memory_order_acquire);
	if (c)
		return c;
	if (now < atomic_load_explicit(&next_look, memory_order_relaxed))
		return NULL;
	atomic_store_explicit(&next_look, now + DSSM_NSEC_PER_SEC, memory_order_relaxed);
	int rc = attach(0);
	if (rc == 1)
		return atomic_load_explicit(&seg, memory_order_acquire);
	if (rc < 0)
		tell_real_time_once();
	return NULL;
}

static struct clock_seg *the_clock(void)
{
	return clock_at(dssm_now());
}

/* The setters make the clock when there is none. */
static struct clock_seg *the_clock_made(void)
{
	struct clock_seg *c = atomic_load_explicit(&seg, memory_order_acquire);
	if (c || !opentimeSSM())
		return c;
	return atomic_load_explicit(&seg, memory_order_acquire);
}

static void read_clock(struct clock_seg *c, struct clock_view *v)
{
	for (;;) {
		uint64_t g = atomic_load_explicit(&c->generation, memory_order_acquire);
		load_state(&c->state[g & 1], v);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&c->generation, memory_order_relaxed) == g)
			return;
	}
}

static ssmTimeT clock_time(const struct clock_view *v, ssmTimeT real)
{
	return v->is_pause ? v->pausetime : v->speed * real + v->offset;
}

/* The setters' lock. Setters are rare (a player, ssm-date): a waiter
 * sleeps a millisecond between tries, and after LOCK_PATIENCE tries takes
 * the lock over from a holder whose process no longer exists. */
static void lock_setters(struct clock_seg *c)
{
	uint32_t me = (uint32_t)getpid();
	for (int tries = 0;; tries++) {
		uint32_t holder = 0;
		if (atomic_compare_exchange_strong_explicit(&c->lock, &holder, me, memory_order_acquire,
		                                            memory_order_relaxed))
			return;
		if (tries >= LOCK_PATIENCE && holder != me && kill((pid_t)holder, 0) < 0 &&
		    errno == ESRCH &&
		    atomic_compare_exchange_strong_explicit(&c->lock, &holder, me, memory_order_acquire,
		                                            memory_order_relaxed))
			return;   /* a setter died holding it: what it wrote was never published */
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
}

static void unlock_setters(struct clock_seg *c)
{
	atomic_store_explicit(&c->lock, 0, memory_order_release);
}

/* Run `change` on the state under the setters' lock and publish it. */
static int update(void (*change)(struct clock_view *v, double arg), double arg)
{
	struct clock_seg *c = the_clock_made();
	if (!c)
		return 0;
	lock_setters(c);
	uint64_t g = atomic_load_explicit(&c->generation, memory_order_relaxed);
	struct clock_view v;
	load_state(&c->state[g & 1], &v);
	change(&v, arg);
	store_state(&c->state[(g + 1) & 1], &v);
	atomic_store_explicit(&c->generation, g + 1, memory_order_release);
	unlock_setters(c);
	return 1;
}

/* ---- the setters, as SSM defines them ---- */

static void set_time(struct clock_view *v, double t)
{
	v->offset = t - v->speed * gettimeSSM_real();
	v->pausetime = t;
}

static void set_speed(struct clock_view *v, double speed)
{
	double now = clock_time(v, gettimeSSM_real());
	v->speed = speed;
	set_time(v, now);
}

static void set_pause(struct clock_view *v, double on)
{
	double now = clock_time(v, gettimeSSM_real());
	set_time(v, now);
	v->is_pause = on != 0;
}

static void set_real(struct clock_view *v, double unused)
{
	(void)unused;
	*v = real_clock;
}

void inittimeSSM(void)
{
	update(set_real, 0);
}

int settimeSSM(ssmTimeT time)
{
	return isfinite(time) && update(set_time, time);
}

int settimeSSM_speed(double speed)
{
	return isfinite(speed) && update(set_speed, speed);
}

double gettimeSSM_speed(void)
{
	struct clock_seg *c = the_clock();
	struct clock_view v = real_clock;
	if (c)
		read_clock(c, &v);
	return v.speed;
}

int settimeSSM_is_pause(int is_pause)
{
	return update(set_pause, is_pause ? 1 : 0);
}

int gettimeSSM_is_pause(void)
{
	struct clock_seg *c = the_clock();
	struct clock_view v = real_clock;
	if (c)
		read_clock(c, &v);
	return v.is_pause;
}

static void set_reverse(struct clock_view *v, double on)
{
	if ((v->speed < 0) != (on != 0))
		set_speed(v, -v->speed);
}

int settimeSSM_is_reverse(int is_reverse)
{
	update(set_reverse, is_reverse ? 1 : 0);
	return 1;
}

int gettimeSSM_is_reverse(void)
{
	return gettimeSSM_speed() < 0.0;
}

/* ---- ssm-time.h ---- */

ssmTimeT gettimeSSM_real(void)
{
	return dssm_time_to_sec(dssm_now());
}

ssmTimeT gettimeSSM(void)
{
	dssm_time_t now = dssm_now();   /* one clock read for both */
	ssmTimeT real = dssm_time_to_sec(now);
	struct clock_seg *c = clock_at(now);
	if (!c)
		return real;
	struct clock_view v;
	read_clock(c, &v);
	return clock_time(&v, real);
}

/* A real-time sleep for an SSM-time request: divided by |speed| (a
 * stopped or paused clock sleeps the real time, as SSM did). */
int nanosleepSSM(const struct timespec *req, struct timespec *rem)
{
	double speed = fabs(gettimeSSM_speed());
	if (!req || speed == 0.0 || speed == 1.0)
		return nanosleep(req, rem);
	double sec = ((double)req->tv_sec + (double)req->tv_nsec * 1e-9) / speed;
	if (!(sec < 1e9))
		sec = 1e9;   /* a speed near 0: about 31 years, not an overflow */
	struct timespec t = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
	if (t.tv_nsec >= 1000000000L)
		t.tv_nsec = 999999999L;
	return nanosleep(&t, rem);
}

unsigned int sleepSSM(double sec)
{
	if (!(sec > 0))
		return 0;
	if (sec > 1e9)
		sec = 1e9;
	struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
	return (unsigned int)nanosleepSSM(&ts, NULL);
}

int usleepSSM(useconds_t usec)
{
	struct timespec ts = {(time_t)(usec / 1000000), (long)(usec % 1000000) * 1000};
	return nanosleepSSM(&ts, NULL);
}

/* ---- libssm.h: tables, nodes, edges ---- */

int calcSSM_table(ssmTimeT life, ssmTimeT cycle)
{
	return (int)(SSM_BUFFER_MARGIN * (life / cycle)) + SSM_MARGIN;
}

ssmTimeT calcSSM_life(int table_num, ssmTimeT cycle)
{
	return (ssmTimeT)(table_num - SSM_MARGIN) * cycle / SSM_BUFFER_MARGIN;
}

/* The distinct live writer pids of this namespace's streams, sorted. */
static int writer_pids(pid_t **out)
{
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n < 0)
		return n;
	pid_t *p = malloc(sizeof *p * (size_t)(n ? n : 1));
	int k = 0;
	for (int i = 0; p && i < n; i++) {
		if (!v[i].writer_alive || v[i].writer_pid <= 0)
			continue;
		int j = 0;
		while (j < k && p[j] < v[i].writer_pid)
			j++;
		if (j < k && p[j] == v[i].writer_pid)
			continue;
		memmove(p + j + 1, p + j, sizeof *p * (size_t)(k - j));
		p[j] = v[i].writer_pid;
		k++;
	}
	free(v);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	*out = p;
	return k;
}

int getSSM_node_num(void)
{
	pid_t *p;
	int n = writer_pids(&p);
	if (n >= 0)
		free(p);
	return n < 0 ? -1 : n;
}

int getSSM_node_info(int n, int *node_num)
{
	pid_t *p;
	int k = writer_pids(&p);
	if (k < 0)
		return 0;
	int ok = n >= 0 && n < k;
	if (ok && node_num)
		*node_num = (int)p[n];
	free(p);
	return ok;
}

int getSSM_edge_num(void)
{
	return 0;
}

int getSSM_edge_info(int n, char *name, size_t name_size, int *id, int *node1, int *node2,
                     int *dir)
{
	(void)n;
	(void)name;
	(void)name_size;
	(void)id;
	(void)node1;
	(void)node2;
	(void)dir;
	return 0;
}
