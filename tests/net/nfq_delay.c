/* (Taken from the project's shared netlab tools, ../shared/tools/netlab, which
 * are provided for copying into the project's tests.)
 *
 * nfq_delay: userspace stand-in for `tc netem delay X loss Y` when the kernel
 * lacks sch_netem. Packets sent to NFQUEUE <qnum> are held for <delay_us> and
 * then accepted, or dropped with probability <loss_pct>/100.
 * build: gcc -O2 -o nfq_delay nfq_delay.c -lnetfilter_queue
 * use:   iptables -A OUTPUT -o vA -j NFQUEUE --queue-num 0
 *        ./nfq_delay 0 2000 1.0 */
#define _GNU_SOURCE
#include <libnetfilter_queue/libnetfilter_queue.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <signal.h>

#define QMAX 65536
static struct { uint32_t id; uint64_t due; } q[QMAX];
static unsigned qh, qt;           /* head/tail of ring of pending verdicts */
static uint64_t delay_ns;
static double loss;
static volatile sig_atomic_t stop;

static uint64_t now_ns(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cb(struct nfq_q_handle *h, struct nfgenmsg *m, struct nfq_data *d, void *u) {
    (void)m; (void)u;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(d);
    uint32_t id = ntohl(ph->packet_id);
    if (drand48() * 100.0 < loss || qt - qh == QMAX)
        return nfq_set_verdict(h, id, NF_DROP, 0, NULL);
    q[qt % QMAX].id = id; q[qt % QMAX].due = now_ns() + delay_ns; qt++;
    return 0;
}

static void onsig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s qnum delay_us loss_pct\n", argv[0]); return 2; }
    int qnum = atoi(argv[1]); delay_ns = strtoull(argv[2], 0, 10) * 1000; loss = atof(argv[3]);
    srand48(time(NULL)); signal(SIGTERM, onsig); signal(SIGINT, onsig);
    struct nfq_handle *h = nfq_open();
    if (!h) { perror("nfq_open"); return 1; }
    struct nfq_q_handle *qhd = nfq_create_queue(h, qnum, &cb, NULL);
    if (!qhd) { perror("nfq_create_queue"); return 1; }
    nfq_set_mode(qhd, NFQNL_COPY_META, 0);   /* we only need the packet id */
    nfq_set_queue_maxlen(qhd, QMAX);
    int fd = nfq_fd(h);
    char buf[4096] __attribute__((aligned));
    while (!stop) {
        struct timespec ts, *tp = NULL;
        if (qh != qt) {
            uint64_t n = now_ns(), due = q[qh % QMAX].due, w = due > n ? due - n : 0;
            ts.tv_sec = w / 1000000000ull; ts.tv_nsec = w % 1000000000ull; tp = &ts;
        }
        struct pollfd p = { fd, POLLIN, 0 };
        int r = ppoll(&p, 1, tp, NULL);   /* ns-resolution timeout */
        if (r > 0) {
            int n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            while (n > 0) { nfq_handle_packet(h, buf, n); n = recv(fd, buf, sizeof buf, MSG_DONTWAIT); }
        }
        uint64_t n = now_ns();
        while (qh != qt && q[qh % QMAX].due <= n) {
            nfq_set_verdict(qhd, q[qh % QMAX].id, NF_ACCEPT, 0, NULL); qh++;
        }
    }
    while (qh != qt) { nfq_set_verdict(qhd, q[qh % QMAX].id, NF_ACCEPT, 0, NULL); qh++; }
    nfq_destroy_queue(qhd); nfq_close(h);
    return 0;
}
