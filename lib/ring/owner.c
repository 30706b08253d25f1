/*
 * owner.c - who writes a stream, and whether that process or thread still
 * lives.
 *
 * The owner word packs a process's pid with its start time (clock ticks
 * after boot, field 22 of /proc/PID/stat); the writers' lock word packs a
 * thread's id with the thread's start time (layout.h). An id alone is not
 * enough: after a crash it may be reused by an unrelated process, which must
 * not keep the stream locked. Both words are computed once (a /proc read)
 * and cached, the thread's per thread; a fork() clears the caches in the
 * child, which is a new process with a new thread id.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define PID_MASK ((UINT64_C(1) << DSSM_OWNER_PID_BITS) - 1)
#define START_SLACK 100 /* clock ticks: 1 s at the usual USER_HZ of 100 */

/* Start time of pid in clock ticks (0 if unknown) and its state letter.
 * A thread id is read through /proc/TID/task/TID/stat: the thread's own
 * entry, the same path whether the thread reads itself or another process
 * reads it (qemu-user fakes /proc/self/stat and /proc/PID/stat only). */
static uint64_t read_stat_path(const char *path, char *state);

static uint64_t read_stat(pid_t pid, char *state)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	return read_stat_path(path, state);
}

static uint64_t read_thread_stat(pid_t tid, char *state)
{
	char path[80];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)tid, (int)tid);
	return read_stat_path(path, state);
}

static uint64_t read_stat_path(const char *path, char *state)
{
	char buf[1024];
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and ')': skip to the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* After ')': fields 3..22; field 3 is the state, 22 is starttime. */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
	                  "%*d %*d %llu",
	           state, &start) != 2)
		return 0;
	return (uint64_t)start;
}

static uint64_t make_owner(pid_t pid, uint64_t start)
{
	return (start << DSSM_OWNER_PID_BITS) | ((uint64_t)pid & PID_MASK);
}

/* The caches. The process word is shared by all threads (relaxed: any
 * thread computes the same value); the lock word is the calling thread's. */
_Atomic uint64_t dssm__self_process;
_Thread_local struct dssm__thread_id dssm__self_thread;
#define self_process dssm__self_process
#define self_thread dssm__self_thread
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static _Atomic uint64_t self_pid_ns;

static void forget_self(void)
{
	/* In the child, in the thread that called fork(): the only thread left.
	 * Its pid namespace too: after unshare(CLONE_NEWPID) a child is in a
	 * new one. */
	atomic_store_explicit(&self_process, 0, memory_order_relaxed);
	atomic_store_explicit(&self_pid_ns, 0, memory_order_relaxed);
	self_thread.word = 0;
	self_thread.robust = NULL;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_self);
}

uint64_t dssm__owner_self_slow(void)
{
	uint64_t w = atomic_load_explicit(&self_process, memory_order_relaxed);
	if (w == 0) {
		pthread_once(&atfork_once, register_atfork);
		pid_t pid = getpid();
		char state;
		w = make_owner(pid, read_stat(pid, &state));
		atomic_store_explicit(&self_process, w, memory_order_relaxed);
	}
	return w;
}

#define START_MASK DSSM_WLOCK_ID_MASK

static pid_t lock_tid(uint64_t word)
{
	return (pid_t)(word & DSSM_WLOCK_TID_MASK);
}

/* The calling thread's robust list, if the lock's entry can join it: the
 * libc registered it when the thread started. NULL under qemu-user (it
 * refuses get_robust_list: the guest's list is not the host's) and when the
 * libc's futex_offset would put the entry outside wlock_entry (layout.h). */
static struct robust_list_head *robust_head(void)
{
	struct robust_list_head *h = NULL;
	size_t len = 0;
	if (syscall(SYS_get_robust_list, 0, &h, &len) != 0 || !h || len != sizeof *h)
		return NULL;
	/* The entry's {prev, next} pair spans [-off - ptr, -off + ptr) from the
	 * futex word, which is `low` bytes into wlock (4 on big-endian hosts);
	 * it must fall within bytes 8 .. 8 + ENTRY_BYTES of wlock. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	const long low = 4;
#else
	const long low = 0;
#endif
	long off = h->futex_offset - low, ptr = (long)sizeof(void *);
	if (off > -(8 + ptr) || off < -(8 + (long)DSSM_WLOCK_ENTRY_BYTES - ptr))
		return NULL;
	return h;
}

/* 31 bits that tell this thread from one with the same id in another pid
 * namespace. */
static uint64_t random_id(pid_t tid)
{
	uint32_t r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		/* No entropy yet (early boot): the clock and addresses still
		 * differ between two threads. */
		uint64_t x = (uint64_t)dssm__monotonic() ^ ((uint64_t)(uintptr_t)&r << 7) ^
		             ((uint64_t)tid << 40);
		x *= UINT64_C(0x9e3779b97f4a7c15);
		r = (uint32_t)(x >> 32);
	}
	return r & DSSM_WLOCK_ID_MASK;
}

const struct dssm__thread_id *dssm__thread_id_slow(void)
{
	if (self_thread.word == 0) {
		pthread_once(&atfork_once, register_atfork);
		pid_t tid = (pid_t)syscall(SYS_gettid);
		struct robust_list_head *head = robust_head();
		uint64_t id;
		if (head) {
			id = random_id(tid);
			dssm__pid_ns(); /* cached now: a borrow makes no system call */
		} else {
			char state;
			id = read_thread_stat(tid, &state) & START_MASK;
		}
		self_thread.robust = head;
		self_thread.word = (id << DSSM_WLOCK_ID_SHIFT) |
		                   ((uint64_t)tid & DSSM_WLOCK_TID_MASK) |
		                   (head ? DSSM_WLOCK_ROBUST : 0);
	}
	return &self_thread;
}

/* self_pid_ns when /proc could not tell (no /proc mounted): remembered, so
 * that a borrow makes no system call there either. */
#define NS_UNKNOWN UINT64_MAX

uint64_t dssm__pid_ns(void)
{
	uint64_t ns = atomic_load_explicit(&self_pid_ns, memory_order_relaxed);
	if (ns == 0) {
		pthread_once(&atfork_once, register_atfork);
		struct stat st;
		ns = stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0 ? (uint64_t)st.st_ino
		                                                           : NS_UNKNOWN;
		atomic_store_explicit(&self_pid_ns, ns, memory_order_relaxed);
	}
	return ns == NS_UNKNOWN ? 0 : ns;
}

int dssm__tid_gone(pid_t tid)
{
	return tid <= 0 || (kill(tid, 0) < 0 && errno == ESRCH);
}

pid_t dssm__owner_pid(uint64_t owner)
{
	return (pid_t)(owner & PID_MASK);
}

/* Is task id (a pid or a thread id) alive with start time `want` (mod
 * `mask`)? Checked with kill(id, 0), which accepts thread ids too, and the
 * start time read by `stat`. */
static int task_alive(pid_t id, uint64_t want, uint64_t mask,
                      uint64_t (*stat)(pid_t, char *))
{
	if (id <= 0 || (kill(id, 0) < 0 && errno == ESRCH))
		return 0;
	char state = '?';
	uint64_t start = stat(id, &state);
	/* Without /proc (here, or where the holder ran: it recorded 0) we
	 * cannot tell reuse apart: the task exists, so take it as alive. A live
	 * writer taken for dead would tear a committed sample. */
	if (start == 0 || want == 0)
		return 1;
	/* A zombie (killed, not yet reaped) or dead task writes no more. */
	if (state == 'Z' || state == 'X')
		return 0;
	/* Same task if it started within START_SLACK ticks of the recorded
	 * start. Exact equality would do on Linux, but qemu-user (how the ARM
	 * builds are tested) reports its own start time a few ticks off; an id
	 * cannot be reused within a second of its first owner's start. */
	uint64_t diff = (start - want) & mask;
	return diff <= START_SLACK || mask - diff < START_SLACK;
}

int dssm__owner_alive(uint64_t owner)
{
	owner &= ~DSSM_OWNER_EXCLUSIVE;
	if (owner == 0)
		return 0;
	/* This very process: alive, with no /proc read (under qemu-user, on a
	 * loaded machine, its own faked start time was seen to drift past the
	 * slack, and a process took its own stream for a dead writer's). */
	if (owner == dssm__owner_self())
		return 1;
	return task_alive(dssm__owner_pid(owner), owner >> DSSM_OWNER_PID_BITS,
	                  ~(uint64_t)0 >> DSSM_OWNER_PID_BITS, read_stat);
}

int dssm__thread_alive(uint64_t word)
{
	if (lock_tid(word) == 0)
		return 0;
	return task_alive(lock_tid(word), (word >> DSSM_WLOCK_ID_SHIFT) & START_MASK, START_MASK,
	                  read_thread_stat);
}

pid_t dssm__thread_tid(uint64_t word)
{
	return lock_tid(word);
}
