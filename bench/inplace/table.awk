# table.awk - bench/inplace/run.sh's tables, from its results.tsv (cache,
# format, seconds recorded, case, reader, seconds, count, bytes read):
#   1. per cache, every reader's median, the ratio best peer / dssm and the
#      goal of issue #25 beside it (met or MISSED);
#   2. the sizes side by side: how dssm's cost grows from the smaller file to
#      the larger, against how the file grows (the goal: with the index);
#   3. one line per goal with "ratio" and "(goal ...)", for bench/summary.sh.
# Variables: readers, sizes (seconds), sizes_b ("seconds:bag:mcap:zstd" bytes).
function goal(fmt, c) {
	if (c == "small-10s") return ""
	return fmt == "bag" ? 10 : 1
}
function goal_text(fmt, c) {
	if (c == "small-10s") return "-"
	return fmt == "bag" ? ">=10x rosbag" : ">=1x mcap-js"
}
# the best peer of a row: the fastest, or for a goal the one it names
function best(k, fmt, c,    i, r, bt) {
	bt = 1e99; B = ""
	for (i = 1; i <= nr; i++) {
		r = R[i]
		if (r == "dssm" || !((k SUBSEP r) in t)) continue
		if (fmt == "bag" && r == "mcap-js") continue
		if (t[k, r] < bt) { bt = t[k, r]; B = r }
	}
	return bt
}
# the name of a peer in a case: info runs the whole commands
function label(r, c) {
	if (c != "info") return r
	return r == "rosbag-py" ? "rosbag info" : r == "mcap-js" ? "mcap-js info" : r
}
function bytes(s, fmt) { return fmt == "bag" ? MB[s, 1] : fmt == "mcap" ? MB[s, 2] : MB[s, 3] }
function mbof(s, fmt) { return sprintf("%6.1f MB", bytes(s, fmt) / 1e6) }
function human(b) { return b >= 1e6 ? sprintf("%.1f MB", b / 1e6) : sprintf("%.0f kB", b / 1e3) }
BEGIN {
	FS = "\t"
	nr = split(readers, R, " ")
	ns = split(sizes, S, " ")
	split("bag mcap mcap-zstd", F, " ")
	split("open info small-10s", C, " ")
	m = split(sizes_b, X, " ")
	for (i = 1; i <= m; i++) { split(X[i], y, ":"); MB[y[1], 1] = y[2]; MB[y[1], 2] = y[3]; MB[y[1], 3] = y[4] }
}
{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; t[k, $5] = $6; n[k, $5] = $7; rb[k, $5] = $8 }
END {
	for (ci = 1; ci <= 2; ci++) {
		cache = ci == 1 ? "warm" : "cold"
		printf "\n%-5s %-9s %9s %-9s", cache, "file", "size", "case"
		for (i = 1; i <= nr; i++) printf " %10s", R[i]
		printf " %8s %-14s %s\n", "ratio", "(peer)", "goal"
		for (fi = 1; fi <= 3; fi++) for (c = 1; c <= 3; c++) for (si = 1; si <= ns; si++) {
			fmt = F[fi]; s = S[si]; k = cache SUBSEP fmt SUBSEP s SUBSEP C[c]
			printf "%-5s %-9s %s %-9s", "", fmt, mbof(s, fmt), C[c]
			for (i = 1; i <= nr; i++) {
				if ((k SUBSEP R[i]) in t) printf " %10.4f", t[k, R[i]]; else printf " %10s", "-"
			}
			bt = best(k, fmt, C[c]); g = goal(fmt, C[c])
			if (((k SUBSEP "dssm") in t) && B != "" && t[k, "dssm"] > 0) {
				ratio = bt / t[k, "dssm"]
				printf (ratio < 1 ? " %7.2fx" : " %7.1fx") " %-14s %s", ratio, "(" label(B, C[c]) ")", goal_text(fmt, C[c])
				if (g != "") printf " %s", ratio >= g ? "met" : "MISSED"
			} else printf " %8s %-14s %s", "-", "", goal_text(fmt, C[c])
			for (i = 1; i <= nr; i++)
				if (((k SUBSEP R[i]) in n) && ((k SUBSEP "dssm") in n) && n[k, "dssm"] != "-" && n[k, R[i]] != n[k, "dssm"])
					printf "  COUNT MISMATCH %s=%s dssm=%s", R[i], n[k, R[i]], n[k, "dssm"]
			printf "\n"
		}
	}
	if (ns >= 2) {
		lo = S[1]; hi = S[ns]
		printf "\ndssm's cost from the %s s file to the %s s one (the bag grows %.1fx): seconds, and for open the bytes read\n", lo, hi, MB[hi, 1] / MB[lo, 1]
		for (ci = 1; ci <= 2; ci++) for (fi = 1; fi <= 3; fi++) for (c = 1; c <= 3; c++) {
			cache = ci == 1 ? "warm" : "cold"; fmt = F[fi]
			a = cache SUBSEP fmt SUBSEP lo SUBSEP C[c]; b = cache SUBSEP fmt SUBSEP hi SUBSEP C[c]
			if (!((a SUBSEP "dssm") in t) || !((b SUBSEP "dssm") in t)) continue
			printf "  %-5s %-9s %-9s %s %9.4f s -> %s %9.4f s: %5.1fx", cache, fmt, C[c],
				mbof(lo, fmt), t[a, "dssm"], mbof(hi, fmt), t[b, "dssm"], t[b, "dssm"] / (t[a, "dssm"] > 0 ? t[a, "dssm"] : 1e-9)
			if (C[c] == "open" && rb[a, "dssm"] != "-")
				printf "; read %s -> %s (%.2f%% of the file)", human(rb[a, "dssm"]), human(rb[b, "dssm"]),
					100 * rb[b, "dssm"] / bytes(hi, fmt)
			printf "\n"
		}
	}
	printf "\nbytes read by open (/proc/self/io rchar), warm:\n"
	for (fi = 1; fi <= 3; fi++) for (si = 1; si <= ns; si++) {
		fmt = F[fi]; s = S[si]; k = "warm" SUBSEP fmt SUBSEP s SUBSEP "open"
		printf "  %-9s %s:", fmt, mbof(s, fmt)
		for (i = 1; i <= nr; i++) if (((k SUBSEP R[i]) in rb) && rb[k, R[i]] != "-") printf "  %s %s", R[i], human(rb[k, R[i]])
		printf "\n"
	}
	printf "\n"
	for (ci = 1; ci <= 2; ci++) for (fi = 1; fi <= 3; fi++) for (c = 1; c <= 2; c++) for (si = 1; si <= ns; si++) {
		cache = ci == 1 ? "warm" : "cold"; fmt = F[fi]; s = S[si]; k = cache SUBSEP fmt SUBSEP s SUBSEP C[c]
		bt = best(k, fmt, C[c])
		if (!((k SUBSEP "dssm") in t) || B == "" || t[k, "dssm"] <= 0) continue
		ratio = bt / t[k, "dssm"]
		printf "in place %s %s %s, %s: dssm %.4f s, %s %.4f s, ratio %.2fx (goal %s) %s\n", fmt, mbof(s, fmt),
			C[c], cache, t[k, "dssm"], label(B, C[c]), bt, ratio, goal_text(fmt, C[c]), ratio >= goal(fmt, C[c]) ? "met" : "MISSED"
	}
}
