#!/bin/bash
# layer-lint.sh - the link graph as the folders state it: a file includes
# headers of its own folder and of folders BELOW its own, never of a folder
# beside or above it (README "Layout", docs/design.md "Layers").
#
#   rank 0  lib/base                       errors, time, bytes, CRC-32C, globs
#   rank 1  lib/ring                       shared-memory rings (the handle)
#   rank 2  lib/remote lib/store lib/decode   a proxy's streams, containers, decoding
#   rank 3  lib/open                       addresses, following a name
#   rank 4  lib/record                     the recorder engine
#   rank 5  lib/ssm                        SSM 1.0.6's API      (libssm)
#   rank 6  app/proxy app/bridge app/foxglove app/dds   engines (the dssm command)
#   rank 7  app/cli                        the command line: parsing, signals, printing
#
# Public headers count at the rank of the folder that implements them
# (dssm/dssm.h is the handle's API and the types of all: any may include it). The ring's own
# internals (internal.h, and layout.h: the shared-memory layout) are private
# to lib/ring: others use the four headers lib/ring names for them:
# backend.h (a handle of another backend), handle.h (the process-local
# handle), ring.h (names, limits, sizes, writers), sleep.h (reading many
# rings from one thread).
#
# usage: scripts/layer-lint.sh   prints FILE:LINE: what is wrong; exit 1 if any.
#
# scripts/layer-known.txt lists crossings known and not yet removed ("FILE
# HEADER" a line): they are printed as "known", not failed, so the list can
# only shrink; a new crossing fails.
set -u
cd "$(dirname "$0")/.." || exit 2
known=scripts/layer-known.txt
[ -f "$known" ] || known=/dev/null
awk -v known="$known" '
BEGIN { while ((getline line < known) > 0) if (line !~ /^#/ && line != "") allowed[line] = 1 }
function flag(msg) {
	if ((FILENAME " " h) in allowed) { print "known: " msg; nknown++ }
	else { print msg; bad = 1 }
}
function rank(folder) {
	if (folder == "lib/base") return 0
	if (folder == "lib/ring") return 1
	if (folder == "lib/remote" || folder == "lib/store" || folder == "lib/decode") return 2
	if (folder == "lib/open") return 3
	if (folder == "lib/record") return 4
	if (folder == "lib/ssm") return 5
	if (folder ~ /^app\/(proxy|bridge|foxglove|dds)$/) return 6
	if (folder == "app/cli") return 7
	return -1
}
# the folder that implements a public header ("" for the types of all)
function public_owner(h) {
	if (h == "dssm/dssm.h") return ""
	if (h == "dssm/connector.h") return "lib/remote"
	if (h == "dssm/container.h") return "lib/store"
	if (h == "dssm/decoder.h") return "lib/decode"
	if (h == "dssm/follow.h") return "lib/open"
	if (h == "dssm/recorder.h") return "lib/record"
	return ""
}
function folder_of(path,   f) { f = path; sub(/\/[^\/]*$/, "", f); sub(/\/programs$/, "", f); return f }
/^[ \t]*#[ \t]*include[ \t]*"/ {
	h = $0; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
	me = folder_of(FILENAME); r = rank(me)
	if (h ~ /^(lib|app)\//) {
		them = folder_of(h)
		if (them == me) next
		if (rank(them) < 0) { flag(FILENAME ":" FNR ": includes " h ", not in a known folder"); next }
		if (rank(them) >= r)
			flag(FILENAME ":" FNR ": " me " (rank " r ") includes " h " of " them " (rank " rank(them) "): not below it")
		else if (them == "lib/ring" && h != "lib/ring/backend.h" && h != "lib/ring/sleep.h" &&
		         h != "lib/ring/handle.h" && h != "lib/ring/ring.h")
			flag(FILENAME ":" FNR ": " h " is private to lib/ring")
	} else if (h ~ /^dssm\//) {
		o = public_owner(h)
		if (o != "" && o != me && rank(o) >= r)
			flag(FILENAME ":" FNR ": " me " (rank " r ") includes " h " of " o " (rank " rank(o) "): not below it")
	}
}
END { if (nknown) print nknown " known crossing(s) left (" known ")"; exit bad }
' $(ls lib/*/*.[ch] lib/ssm/programs/*.c app/*/*.[ch] 2>/dev/null)
