/*
 * glob.h - what a glob selects, with one meaning everywhere: the recorder's
 * and `--streams`' NAME[:ID] patterns, the servers' `--allow-write`, the
 * DDS bridge's `--publish`, and the topic globs of `--topics`, `dds:GLOB`
 * and `--subscribe` (docs/design.md, "Globs"). Not installed; the public
 * face of stream globs is dssm_name_matches/dssm_name_list_matches
 * (dssm/dssm.h).
 *
 * Characters, in every glob: fnmatch(3) without flags. '*' is any run of
 * characters, '/' included; '?' one character; [abc], [a-z], [!a] a set;
 * '\' makes the next character itself. A '[' without its ']' is itself.
 *
 * Stream globs match a ring's NAME and ID, never an address as text: the
 * first ':' parts the NAME glob from the ID glob (a name holds no ':').
 *   odom       every ID of odom           odom:*   the same
 *   odom:1     odom:1 alone               odom:1*  odom:1, odom:10 .. odom:19, ...
 *   cam*       every ID of each name starting with "cam"
 *   *          every stream               *:2      ID 2 of every name
 * The ID glob is tried against the ID in decimal ("odom:01" matches
 * nothing). A stream glob written as a ROS topic stands for the stream
 * `dssm import` names after it: leading '/'s dropped, each other '/' read
 * as '.' ("/turtle1/pose" is turtle1.pose, "/ns/x*" is ns.x*). (An SSM name
 * with '/' is a percent-encoded ring name: laser/front is the ring
 * laser%2Ffront, selected as "laser%2Ffront".) An empty glob, an empty
 * NAME (":1") or ID ("odom:") matches nothing; dssm__stream_glob_check
 * names what is wrong with such a glob, for commands that refuse it.
 *
 * Topic globs match a whole topic name (ROS or DDS), '*' crossing '/': /ns/
 * followed by '*' takes /ns/a and /ns/a/b; ':' is an ordinary character.
 *
 * Lists: comma-separated globs (a glob holds no ','); empty items are
 * skipped; a NULL list selects everything, a list of no glob ("") nothing.
 */
#ifndef DSSM_GLOB_H
#define DSSM_GLOB_H

#include <stddef.h>

/* 1 if TEXT is a glob rather than one name: it has '*', '?' or '['. */
int dssm__is_glob(const char *text);
/* 1 if TEXT matches GLOB (the character rules above), else 0. */
int dssm__glob_match(const char *glob, const char *text);
/* 1 if TEXT matches one of LIST's topic globs (NULL: all), else 0. */
int dssm__glob_list_match(const char *list, const char *text);
/* 0 if PATTERN is a stream glob that can match a ring, else DSSM_EINVAL
 * with dssm_last_error() saying why ("... '/ns/x' has '/' at 0: ..."). */
int dssm__stream_glob_check(const char *pattern);
/* dssm__stream_glob_check for each glob of a comma-separated LIST. */
int dssm__stream_glob_list_check(const char *list);

/* A stream's ROS topic, the inverse of the rule above: "/" and NAME with
 * each '.' read as '/', and ":ID" when ID is not 0 (turtle1.pose is
 * /turtle1/pose). For servers that name streams to ROS tools (Foxglove). */
void dssm__topic_of(const char *name, int id, char *out, size_t cap);
/* The topic a recorded ring exports as (dssm_container_topic): as above,
 * but an ID other than 0 as "_ID", not ":ID": a ROS graph resource name
 * holds only letters, digits, '_' and '/' (ROS tools refuse "/scan:1"). */
void dssm__ring_topic(const char *name, int id, char *out, size_t cap);
/* The other way for a name that ends in _N (N > 0, decimal, no leading
 * 0): 1, base (NAME without _N) and *id = N; else 0. "odom_3" may be
 * odom:3 as dssm__ring_topic names it (the caller looks for that ring). */
int dssm__ring_topic_split(const char *name, char *base, size_t cap, int *id);
/* The stream NAME[:ID] a topic stands for (the rule above) into OUT: 0, or
 * DSSM_ENAME when it does not fit. */
int dssm__topic_to_name(const char *topic, char *out, size_t cap);
/* The stream name a file's topic is stored under (an import, a file read in
 * place): no leading '/', '/' -> '.', characters a name cannot hold -> '_'
 * ("" is "topic"; a leading '.' is '_'). Never fails: a name for any topic. */
void dssm__topic_stream_name(const char *topic, char name[DSSM_NAME_MAX + 1]);
/* The stream a file's channel is stored under: the NAME:ID its property's
 * `dssm_stream` field (a bag header field; MCAP metadata, meta.dssm_stream)
 * names when it is a valid NAME:ID (`dssm export` writes it for a ring its
 * topic does not name back: scan:1 as /scan_1), else the topic's name
 * (above) and ID 0. The name into NAME; returns the ID (the caller takes
 * the next free one from it). */
int dssm__channel_stream_name(const char *topic, const void *prop, size_t prop_len,
                              char name[DSSM_NAME_MAX + 1]);

#endif
