/*
 * recstream_tids.c - where a TID is among a recorded stream's entries
 * (container_stream.c), past damaged index entries. An entry whose index
 * entry fails its CRC has no TID one can trust; the entries around it
 * bound it (TIDs grow with the entries). A search for a TID treats it as
 * not before the TID unless a good entry after it is: so the entry found
 * is either a good one at or after the TID, or a damaged one that may be
 * (a read of it fails, naming it, and read_next passes over it, counting
 * it missed); never a good sample passed over for one that might be older.
 */
#include "lib/base/base.h"
#include "recstream.h"
#include "store.h"

/* Entry i's TID; *rc set to the error (DSSM_ECORRUPT: its index entry is
 * damaged), when it is 0 before. */
uint64_t dssm__recstream_tid_at(struct recording *r, uint64_t i, int *rc)
{
	uint64_t tid = 0;
	if (*rc == 0)
		*rc = dssm__query_entry(r->q, i, NULL, &tid);
	return tid;
}

/* The first good entry from i on, before end (end if none), its TID in
 * *tid; or an error other than a damaged index entry. */
static int good_from(struct recording *r, uint64_t i, uint64_t end, uint64_t *at, uint64_t *tid)
{
	for (; i < end; i++) {
		int rc = 0;
		*tid = dssm__recstream_tid_at(r, i, &rc);
		if (rc != DSSM_ECORRUPT) {
			*at = i;
			return rc;
		}
	}
	*at = end;
	return 0;
}

int dssm__recstream_find_tid(struct recording *r, uint64_t tid, uint64_t *at)
{
	uint64_t n = dssm__query_count(r->q), lo = 0, hi = n, k, t = 0;
	/* a format 4 stream: the span its chunk entries give, in one chunk */
	int rc = dssm__query_tid_span(r->q, tid, &lo, &hi);
	if (rc < 0)
		return rc;
	/* no gap before it: the entry is where the TIDs say */
	rc = n && lo == 0 && hi == n ? good_from(r, 0, 1, &k, &t) : DSSM_ECORRUPT;
	if (rc == 0 && k == 0 && tid >= t && tid - t < n &&
	    dssm__recstream_tid_at(r, tid - t, &rc) == tid && rc == 0) {
		*at = tid - t;
		return 0;
	}
	rc = rc == DSSM_ECORRUPT ? 0 : rc;
	while (rc == 0 && lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		rc = good_from(r, mid, hi, &k, &t);
		if (rc == 0 && k < hi && t < tid)
			lo = k + 1;   /* (the damaged ones before k are older too) */
		else
			hi = mid;     /* a good one at or after tid, or damaged ones */
	}
	*at = lo;
	return rc;
}
