/*
 * app/dds/discover.h - what a DDS domain offers, for `dssm ls --dds`: its
 * topics with their types, how many writers and readers each has, and the
 * hosts and processes of the writers, read from Cyclone DDS's built-in
 * discovery topics after a discovery window. ROS 2's names are demangled
 * ("rt/chatter" is the topic /chatter, "std_msgs::msg::dds_::String_" the
 * type std_msgs/msg/String). docs/dds.md, "Listing a domain"; the command
 * (options, printing) is app/cli/ls_dds.c.
 */
#ifndef DSSM_DDS_DISCOVER_H
#define DSSM_DDS_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

/* How a DDS topic name reads in ROS 2. */
enum ddsb_kind {
	DDSB_PLAIN,        /* not a ROS 2 name: shown as it is */
	DDSB_ROS_TOPIC,    /* rt/NAME: the topic /NAME */
	DDSB_ROS_REQUEST,  /* rq/NAMERequest: requests of the service /NAME */
	DDSB_ROS_REPLY,    /* rr/NAMEReply: replies of the service /NAME */
};

/* One end of a topic: a writer's or reader's process. */
struct ddsb_peer {
	char *host;        /* the participant's __Hostname, or NULL (another vendor) */
	char *process;     /* __ProcessName, or NULL */
	long pid;          /* __Pid, or -1 */
};

/* A (topic, type) pair of the domain and its endpoints. */
struct ddsb_topic {
	char *dds_topic, *dds_type;   /* as on the wire */
	char *topic, *type;           /* demangled (the same when not ROS 2) */
	enum ddsb_kind kind;
	int writers, readers;
	struct ddsb_peer *pubs;       /* one per writer */
};

struct ddsb_domain {
	struct ddsb_topic *topics;    /* sorted by topic, then type */
	int ntopics;
};

/* Join DOMAIN (0..232) for WAIT_NS, then list what its other participants
 * offer into OUT (freed with ddsb_domain_free). 0, or -1 with why in ERR. */
int ddsb_discover(int domain, int64_t wait_ns, struct ddsb_domain *out, char *err, size_t cap);
void ddsb_domain_free(struct ddsb_domain *d);

/* ROS 2's names: "rt/chatter" -> "/chatter" (kind DDSB_ROS_TOPIC),
 * "rq/add_two_intsRequest" -> "/add_two_ints" (DDSB_ROS_REQUEST), others
 * unchanged (DDSB_PLAIN); "std_msgs::msg::dds_::String_" ->
 * "std_msgs/msg/String", other type names unchanged. */
enum ddsb_kind ddsb_demangle_topic(const char *dds, char *out, size_t cap);
void ddsb_demangle_type(const char *dds, char *out, size_t cap);

#endif
