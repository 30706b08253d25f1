/*
 * set.c - a recording set read as one container (docs/container-format.md,
 * section 6): DIR/part-0001, DIR/part-0002, ... are containers the recorder
 * wrote one after another (--split-duration, --split-size), maybe the last
 * K of them only (--max-splits); DIR/SET marks the set, DIR/CLOSED its end.
 *
 * Each part is opened as a container of its own. A stream of the set is a
 * chain of *segments*, one stream entry per part: the first entry of a
 * NAME:ID in a part continues the chain that ended with that NAME:ID's
 * last entry in an earlier part, when it describes the same ring (type,
 * encoding, size) and does not go back in time; any other entry (a ring
 * made again, a ring found later) begins a stream of its own, as in one
 * container. So a stream's segments are in time order, and its samples are
 * its segments' samples one after another: entry i of the set stream is
 * entry i - base of the segment that holds it.
 *
 * What a set keeps open is bounded by what is read, not by its parts: a
 * closed part's stream files are opened when a query reaches it and
 * closed again when the query leaves it; a merged query opens a part's
 * query only once the merge reaches the part's first time.
 *
 * A foreign bag directory (a rosbag2 bag: dssm__set_list_files, views.c)
 * is a set too: its parts are the files it lists, in order, each read in
 * place (view.h), the set closed from the start. A stream goes on across
 * them by the same rule, but for the largest sample (a file view's
 * max_size is what its file holds, not what a ring declared): the set's
 * is the largest of its segments'.
 *
 * A part the rolling window removed while the set is open is found by its
 * missing CONTAINER: its segments leave the front of their streams (the
 * count of entries each lost is kept, so a recorded stream's read position
 * follows), and what still needs its files fails with DSSM_ETOOOLD naming
 * it. Its container object stays until the set is closed: a query may be
 * reading it (its open files still read on a POSIX file system).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "query.h"
#include "set.h"
#include "store.h"

/* ---- finding and opening parts ---- */

/* NNNN of "part-NNNN" (4 or more digits), or -1. */
static int part_number(const char *name)
{
	if (strncmp(name, "part-", 5) != 0)
		return -1;
	size_t digits = strspn(name + 5, "0123456789");
	if (digits < 4 || digits > 9 || name[5 + digits])
		return -1;
	/* only the name the recorder writes (part-%04d): "part-00002" is not
	 * part 2 (list_parts says so) */
	int num = atoi(name + 5);
	char canon[32];
	snprintf(canon, sizeof canon, "part-%04d", num);
	return strcmp(canon, name) ? -1 : num;
}

/* "part-" and digits, but not a part name part_number takes. */
static int part_like(const char *name)
{
	size_t digits = strncmp(name, "part-", 5) ? 0 : strspn(name + 5, "0123456789");
	return digits && !name[5 + digits] && part_number(name) < 0;
}

int dssm__set_has_file(const char *dir, const char *name)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

int dssm__set_is(const char *dir)
{
	if (!dir || dssm__set_has_file(dir, "CONTAINER"))
		return 0;
	if (dssm__set_has_file(dir, "SET"))
		return 1;
	if (dssm__set_list_files && dssm__set_list_files(dir, NULL, NULL, NULL) == 0)
		return 1;
	DIR *d = opendir(dir);
	int found = 0;
	for (struct dirent *e; d && !found && (e = readdir(d));)
		found = part_number(e->d_name) >= 0;
	if (d)
		closedir(d);
	return found;
}

static void note(struct rset *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct rset *s, const char *fmt, ...)
{
	if (s->note)
		return; /* the first is said; handed-out text stays valid */
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s->note, fmt, ap) < 0)
		s->note = NULL;
	va_end(ap);
}

static struct sstream *stream_new(struct rset *s)
{
	if (s->ns == s->scap) {
		int cap = s->scap ? s->scap * 2 : 8;
		struct sstream *v = realloc(s->st, sizeof *v * (size_t)cap);
		if (!v)
			return NULL;
		s->st = v;
		s->scap = cap;
	}
	struct sstream *t = &s->st[s->ns];
	memset(t, 0, sizeof *t);
	return t;
}

static int segment_add(struct sstream *t, int part, int local)
{
	if (t->nseg == t->cap) {
		int cap = t->cap ? t->cap * 2 : 4;
		struct segment *v = realloc(t->seg, sizeof *v * (size_t)cap);
		if (!v)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		t->seg = v;
		t->cap = cap;
	}
	t->seg[t->nseg++] = (struct segment){.part = part, .local = local};
	return 0;
}

/* measured: max_size is a file's largest sample, not a ring's size */
static int same_ring(const dssm_stream_info *a, const dssm_stream_info *b, int measured)
{
	return a->id == b->id && !strcmp(a->name, b->name) && !strcmp(a->type, b->type) &&
	       !strcmp(a->encoding, b->encoding) && (measured || a->max_size == b->max_size);
}

/* The set stream entry `local` of part pi continues, or -1: see the top. */
static int continued(struct rset *s, int pi, int local, const dssm_recorded *e)
{
	dssm_container *c = s->p[pi].c;
	dssm_recorded o;
	for (int k = 0; k < local; k++) /* not the first of its NAME:ID here */
		if (dssm_container_stream_brief(c, k, &o) == 0 && o.info.id == e->info.id &&
		    !strcmp(o.info.name, e->info.name))
			return -1;
	for (int j = s->ns - 1; j >= 0; j--) {
		struct sstream *t = &s->st[j];
		if (t->info.id != e->info.id || strcmp(t->info.name, e->info.name))
			continue;
		/* the newest stream of NAME:ID: continued only if it ends before
		 * this part and is the same ring, not going back in time (a stream
		 * whose parts the rolling window all took goes on by what they
		 * held: the reader following it misses what came between) */
		if ((t->nseg && t->seg[t->nseg - 1].part >= pi) ||
		    !same_ring(&t->info, &e->info, s->files != NULL))
			return -1;
		for (int g = t->nseg - 1; g >= 0; g--) {
			struct segment *sg = &t->seg[g];
			if (dssm_container_stream_brief(s->p[sg->part].c, sg->local, &o) == 0 && o.count)
				return e->count && e->first < o.last ? -1 : j;
		}
		return e->count && t->has_gone && e->first < t->gone_last ? -1 : j;
	}
	return -1;
}

/* Give the stream entries of part pi not yet chained their set streams. */
static int chain_part(struct rset *s, int pi)
{
	struct part *p = &s->p[pi], *prev = pi ? &s->p[pi - 1] : NULL;
	/* a part read while it was made is whole once the next one exists: its entries
	 * chain first (after the next's, each began a stream: a ring made again to cat -f) */
	int rc, n = dssm_container_stream_count(p->c);
	if (!p->nchain && prev && !prev->removed && !dssm_container_closed(prev->c) &&
	    dssm_container_refresh(prev->c) == 0 && (rc = chain_part(s, pi - 1)) < 0)
		return rc;
	if (n <= p->nchain)
		return 0;
	int *v = realloc(p->chain, sizeof *v * (size_t)n);
	if (!v)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	p->chain = v;
	for (; p->nchain < n; p->nchain++) {
		int local = p->nchain;
		dssm_recorded e;
		dssm_container_stream_brief(p->c, local, &e);
		int j = continued(s, pi, local, &e);
		if (j < 0) {
			struct sstream *t = stream_new(s);
			if (!t)
				return dssm__fail(DSSM_ENOMEM, "out of memory");
			j = s->ns++;
		}
		if ((rc = segment_add(&s->st[j], pi, local)) < 0)
			return rc;
		s->st[j].info = e.info; /* (a set of files: its max_size is set_streams.c's) */
		p->chain[local] = j;
	}
	return 0;
}

/* Remember part NUM as left out (why): a stream with samples on both sides
 * of it is missing its samples there (set_streams.c says so). */
static void left_out(struct rset *s, int num, const char *why)
{
	int *nums = realloc(s->out_num, sizeof *nums * (size_t)(s->nout + 1));
	if (nums)
		s->out_num = nums;
	char **whys = nums ? realloc(s->out_why, sizeof *whys * (size_t)(s->nout + 1)) : NULL;
	if (!whys)
		return; /* (the warning still says it) */
	s->out_why = whys;
	s->out_num[s->nout] = num;
	s->out_why[s->nout] = strdup(why);
	s->nout++;
}

/* Open part NUM and add it (parts come in number order). 1 if added or
 * left out, 0 if it is not there (yet), an error. A part that cannot be
 * read is left out and said in the warning when `final`; otherwise (the
 * newest part of a set still written: its CONTAINER may be being written)
 * it is taken as not there yet and looked at again. */
int dssm__set_add_part(dssm_container *c, int num, int final)
{
	struct rset *s = c->set;
	char *path = NULL;
	if (s->files ? !(path = strdup(s->files[num - 1]))
	             : asprintf(&path, "%s/part-%04d", c->dir, num) < 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	dssm_container *pc = NULL;
	int rc = dssm_container_open(path, &pc);
	if (rc < 0 && s->files) {   /* a file the bag lists: the bag is not whole */
		rc = dssm__fail(rc == DSSM_ENOMEM ? rc : DSSM_ECORRUPT, "%s: %s", c->dir,
		                dssm_last_error());
		free(path);
		return rc;
	}
	int unreadable = rc < 0 && rc != DSSM_ENOENT && rc != DSSM_ENOMEM && rc != DSSM_ESYS &&
	                 rc != DSSM_EPERM;
	if (rc == DSSM_ENOENT || (unreadable && !final)) {
		free(path);
		return 0;
	}
	if (num > s->last_num)
		s->last_num = num;
	if (unreadable) {
		note(s, "%s is left out: %s", path, dssm_last_error());
		left_out(s, num, dssm_last_error());
		free(path);
		return 1;
	}
	if (rc == 0 && s->np == s->pcap) {
		int cap = s->pcap ? s->pcap * 2 : 8;
		struct part *v = realloc(s->p, sizeof *v * (size_t)cap);
		rc = v ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
		s->p = v ? v : s->p;
		s->pcap = v ? cap : s->pcap;
	}
	if (rc < 0) {
		dssm_container_close(pc);
		free(path);
		return rc;
	}
	/* read while it was removed (its CONTAINER gone now): not there */
	if (!s->files && !dssm__set_has_file(path, "CONTAINER")) {
		dssm_container_close(pc);
		free(path);
		if (num > s->last_num)
			s->last_num = num;
		return 1;
	}
	dssm_container_set_salvage(pc, c->salvage);
	s->p[s->np] = (struct part){.num = num, .path = path, .c = pc};
	s->np++;
	rc = chain_part(s, s->np - 1);
	return rc < 0 ? rc : 1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The part numbers in DIR, sorted, into *out (malloc'd); how many, or an error. */
static int list_parts(dssm_container *c, int **out)
{
	const char *dir = c->dir;
	DIR *d = opendir(dir);
	if (!d)
		return dssm__fail_errno(DSSM_ENOENT, "%s", dir);
	int *v = NULL, n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		int num = part_number(e->d_name);
		if (num < 0 && part_like(e->d_name))
			note(c->set, "%s/%s is left out: not a part name the recorder writes (part-NNNN, "
			     "at least 4 digits, no other leading zeros)", dir, e->d_name);
		if (num < 0)
			continue;
		if (n == cap) {
			int *w = realloc(v, sizeof *w * (size_t)(cap = cap ? cap * 2 : 16));
			if (!w) {
				free(v);
				closedir(d);
				return dssm__fail(DSSM_ENOMEM, "out of memory");
			}
			v = w;
		}
		v[n++] = num;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof *v, cmp_int);
	*out = v;
	return n;
}

/* ---- the set's own files: SET and CLOSED ---- */

/* 1 if DIR/CLOSED is there and whole (its last line the CRC-32C of the
 * bytes before it), 0 if absent; a damaged one is said and taken as absent. */
static int load_closed(dssm_container *c)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/CLOSED", c->dir);
	uint8_t *text = NULL;
	size_t len = 0;
	if (dssm__store_read_file(path, &text, &len) < 0) {
		if (errno != ENOENT)
			note(c->set, "%s cannot be read (%s): the set is taken as still being written",
			     path, strerror(errno));
		return 0;
	}
	const char *crc = len ? strstr((char *)text, "crc ") : NULL;
	int ok = crc && strncmp((char *)text, "closed ", 7) == 0 &&
	         strtoul(crc + 4, NULL, 16) == dssm__crc32c(text, (size_t)((uint8_t *)crc - text));
	if (!ok)
		note(c->set, "%s is damaged (its checksum fails): the set is taken as still being "
		     "written", path);
	const char *parts = ok ? strstr((char *)text, "\nparts ") : NULL;
	int first, last;
	if (parts && sscanf(parts + 7, "%d %d", &first, &last) == 2 && first >= 0 && last >= first) {
		c->set->closed_first = first;
		c->set->closed_last = last;
	}
	free(text);
	return ok;
}

/* ---- open, refresh, close ---- */

static int known_part(const struct rset *s, int num)
{
	for (int i = 0; i < s->np; i++)
		if (s->p[i].num == num)
			return 1;
	for (int i = 0; i < s->nout; i++)
		if (s->out_num[i] == num)
			return 1;
	return 0;
}

/* Which of the n numbers from lo on a part present or left out has (1),
 * in one pass over both: find_gaps looked each number up in both lists,
 * minutes for one part numbered 200000 in a set without a rolling window
 * (every number before it missing) or a set of 200000 parts. NULL: no
 * memory (known_part then looks each number up). */
static unsigned char *known_parts(const struct rset *s, int lo, int n)
{
	unsigned char *k = calloc((size_t)n, 1);
	for (int i = 0; k && i < s->np; i++)
		if (s->p[i].num >= lo && s->p[i].num - lo < n)
			k[s->p[i].num - lo] = 1;
	for (int i = 0; k && i < s->nout; i++)
		if (s->out_num[i] >= lo && s->out_num[i] - lo < n)
			k[s->out_num[i] - lo] = 1;
	return k;
}

/* Parts that should be there and are not: a number between two parts (the
 * recorder numbers them one after another, and the rolling window takes
 * the oldest only), or, once the set is closed, one its CLOSED lists. Each
 * is left out and said: a stream with samples on both sides of it is
 * missing samples (set_streams.c), never a silently shorter answer. */
static void find_gaps(dssm_container *c)
{
	struct rset *s = c->set;
	int lo = s->np ? s->p[0].num : 0, hi = s->np ? s->p[s->np - 1].num : -1;
	/* no rolling window: the parts before the first one present are lost */
	if (s->window == 0 && s->np)
		lo = 1;
	if (s->closed && s->closed_last) {
		lo = s->closed_first < lo || !s->np ? s->closed_first : lo;
		hi = s->closed_last > hi ? s->closed_last : hi;
	}
	long long span = (long long)hi - lo + 1;
	int n = span > 1000000 ? 1000000 : (int)span; /* (a hostile CLOSED's) */
	unsigned char *known = n > 0 ? known_parts(s, lo, n) : NULL;
	for (int num = lo; num - lo < n; num++)
		if (!(known ? known[num - lo] : known_part(s, num))) {
			note(s, "%s/part-%04d is missing (%s)", c->dir, num,
			     s->closed && s->closed_last && num >= s->closed_first
			         ? "its CLOSED lists the parts it held"
			     : s->np && num < s->p[0].num ? "its SET says no part is removed: no --max-splits"
			                                  : "parts are numbered one after another");
			left_out(s, num, "the part is missing");
		}
	free(known);
}

/* Add the parts DIR holds beyond the last looked at. */
static int add_listed(dssm_container *c)
{
	struct rset *s = c->set;
	int *nums = NULL;
	int n = list_parts(c, &nums), rc = n < 0 ? n : 0;
	for (int i = 0; i < n && rc >= 0; i++)
		if (nums[i] > s->last_num)
			rc = dssm__set_add_part(c, nums[i], s->closed || i < n - 1);
	free(nums);
	return rc < 0 ? rc : 0;
}

int dssm__set_open(dssm_container *c)
{
	struct rset *s = calloc(1, sizeof *s);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	dssm__set_attach(c, s);
	s->last_num = -1;
	s->window = -1;
	if (dssm__set_list_files && dssm__set_list_files(c->dir, NULL, NULL, NULL) == 0)
		return dssm__set_open_files(c);
	/* CLOSED before the parts: a set closed after this look is refreshed */
	s->closed = load_closed(c);
	s->window = dssm__set_window(c->dir);
	int rc = add_listed(c);
	if (rc == 0)
		find_gaps(c);
	return rc;
}

/* Close segment g's one-stream query (set_query.c) if open. */
void dssm__set_segment_close(struct rset *s, struct segment *g)
{
	if (!g->q)
		return;
	dssm_query_close(g->q);
	g->q = NULL;
	struct part *p = &s->p[g->part];
	if (--p->users == 0)
		dssm__store_stream_release(p->c, g->local);
	dssm__set_part_release(p);
}

void dssm__set_free(struct rset *s)
{
	if (!s)
		return;
	for (int j = 0; j < s->ns; j++) {
		for (int g = 0; g < s->st[j].nseg; g++)
			dssm__set_segment_close(s, &s->st[j].seg[g]);
		free(s->st[j].seg);
		free(s->st[j].gap);
	}
	for (int i = 0; i < s->nout; i++)
		free(s->out_why[i]);
	free(s->out_num);
	free(s->out_why);
	for (int i = 0; i < s->np; i++) {
		dssm_container_close(s->p[i].c);
		free(s->p[i].path);
		free(s->p[i].chain);
		free(s->p[i].tid_base);
	}
	free(s->p);
	free(s->st);
	free(s->note);
	for (int i = 0; i < s->nfiles; i++)
		free(s->files[i]);
	free(s->files);
	free(s);
}

/* The rolling window removed the oldest parts: find them (their CONTAINER
 * gone) and take their segments off the front of their streams. */
static void find_removed(dssm_container *c)
{
	struct rset *s = c->set;
	for (int i = 0; i < s->np; i++) {
		struct part *p = &s->p[i];
		if (p->removed)
			continue;
		if (dssm__set_has_file(p->path, "CONTAINER"))
			break; /* removal goes oldest first */
		p->removed = 1;
		for (int j = 0; j < s->ns; j++) {
			struct sstream *t = &s->st[j];
			int g = 0;
			for (; g < t->nseg && t->seg[g].part == i; g++) {
				dssm_recorded e = {0};
				if (dssm_container_stream_brief(p->c, t->seg[g].local, &e) == 0)
					t->dropped += e.count;
				if (e.count && (!t->has_gone || e.last > t->gone_last)) {
					t->gone_last = e.last;
					t->has_gone = 1;
				}
				dssm__set_segment_close(s, &t->seg[g]);
			}
			if (g) {
				memmove(t->seg, t->seg + g, sizeof *t->seg * (size_t)(t->nseg - g));
				t->nseg -= g;
			}
		}
	}
}

/* Parts made since the last look: the next number, one stat when there
 * is none (the recorder numbers its parts one after another). */
static int find_added(dssm_container *c)
{
	struct rset *s = c->set;
	if (s->last_num < 0) /* none yet: the recorder may begin with any number */
		return add_listed(c);
	int rc = 1;
	while (rc == 1)
		rc = dssm__set_add_part(c, s->last_num + 1, s->closed);
	/* No next part, and the last one known is closed: the set ended, or
	 * the rolling window moved past parts this reader never saw (it
	 * stopped for a while): the directory says which parts are there. */
	if (rc == 0 && (!s->np || s->p[s->np - 1].removed || dssm_container_closed(s->p[s->np - 1].c)))
		rc = add_listed(c);
	return rc < 0 ? rc : 0;
}

/* Refresh the set: CLOSED first (as for a container: parts read after it
 * are complete), then parts removed and added, then the parts still being
 * written (all their streams, or stream entry `local` of each when only
 * set stream `only` is read). */
static int refresh(dssm_container *c, int only)
{
	struct rset *s = c->set;
	if (s->closed)
		return 0;
	s->closed = load_closed(c);
	find_removed(c);
	int had = s->np, rc = find_added(c);
	/* what CLOSED lists, now that it is there; a part missing before the
	 * ones just found (SET's max-splits 0) or between them, as soon as they
	 * are seen, as by a reader opening the set now */
	if (rc == 0 && (s->closed || s->np != had))
		find_gaps(c);
	for (int i = 0; i < s->np && rc == 0; i++) {
		struct part *p = &s->p[i];
		if (p->removed || dssm_container_closed(p->c))
			continue;
		int found = 0;
		for (int k = 0; only >= 0 && k < p->nchain && rc == 0; k++)
			if (p->chain[k] == only) {
				rc = dssm__store_refresh_stream(p->c, k);
				found = 1;
			}
		/* everything, or (one stream read) a part whose entry of it may
		 * not be written yet: its new entries are looked for */
		if (!found && rc == 0)
			rc = dssm_container_refresh(p->c);
		if (rc == 0)
			rc = chain_part(s, i);
		dssm__set_part_release(p); /* (if it closed now) */
	}
	return rc;
}

int dssm__set_refresh(dssm_container *c)
{
	return refresh(c, -1);
}

int dssm__set_refresh_stream(dssm_container *c, int idx)
{
	return refresh(c, idx);
}
