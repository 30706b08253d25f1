#!/usr/bin/env bash
# net-test.sh - two "hosts" in network namespaces on a bridge (the approach
# of shared/tools/netlab): the proxy and an odometry handler on h1, a mirror
# on h2 across the veth link. Checks: remote listing with the shared secret;
# a mirror that loses no sample through 5% packet loss and a 2 s cut link
# (backfilled from the ring's history); a partitioned peer makes calls fail
# within their timeout instead of hanging. Needs root (CAP_NET_ADMIN), ip and
# nft; skips with a message otherwise.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
dssm=$PWD/$BUILD/dssm
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v nft >/dev/null; then
	echo "  skip net tests: need root, ip (iproute2) and nft (nftables)"; exit 0
fi
P=dn$$
SW=${P}sw
if ! ip netns add "$SW" 2>/dev/null; then
	echo "  skip net tests: cannot create network namespaces here"; exit 0
fi
tmp=$(mktemp -d)
passed=0 failed=0
down() {
	for ns in $(ip netns list | awk '{print $1}' | grep "^$P"); do
		for pid in $(ip netns pids "$ns"); do kill "$pid" 2>/dev/null; done
	done
	sleep 0.3
	for ns in $(ip netns list | awk '{print $1}' | grep "^$P"); do
		for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$ns"
	done
	for n in net-a net-b; do DSSM_NAMESPACE=$n "$dssm" cleanup --all-idle >/dev/null 2>&1; done
	rm -rf "$tmp"
}
trap down EXIT
ip -n "$SW" link add br0 type bridge && ip -n "$SW" link set br0 up
for i in 1 2; do
	ip netns add "${P}h$i"
	ip -n "${P}h$i" link set lo up
	ip -n "${P}h$i" link add eth0 type veth peer name p$i netns "$SW"
	ip -n "$SW" link set p$i master br0 && ip -n "$SW" link set p$i up
	ip -n "${P}h$i" addr add 10.77.0.$i/24 dev eth0 && ip -n "${P}h$i" link set eth0 up
done
on() { local h=$1; shift; ip netns exec "${P}$h" "$@"; }
cut() { # a silent blackhole at the switch: no RST, no ICMP
	ip netns exec "$SW" nft add table bridge cut
	ip netns exec "$SW" nft add chain bridge cut fcut '{ type filter hook forward priority 0; }'
	ip netns exec "$SW" nft add rule bridge cut fcut iifname "p$1" drop
	ip netns exec "$SW" nft add rule bridge cut fcut oifname "p$1" drop
}
heal() { ip netns exec "$SW" nft flush chain bridge cut fcut; }
loss() { # percent of packets dropped on h$1's ingress
	on "h$1" nft -f - <<NFT
table netdev emu { chain in { type filter hook ingress device "eth0" priority 0;
  numgen random mod 100 < $2 counter drop; }; }
NFT
}
check() {
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then passed=$((passed + 1)); echo "  ok    $name"; [ -n "${NET_VERBOSE:-}" ] && sed "s/^/        /" "$tmp/out"
	else failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -15; fi
}

secret=$tmp/secret
"$dssm" secret "$secret" >/dev/null || { echo "  FAIL  dssm secret"; exit 1; }
export DSSM_SECRET_FILE=$secret
on h1 env DSSM_NAMESPACE=net-a "$dssm" proxy --listen 10.77.0.1 --port 5800 --secret-file "$secret" \
	2>"$tmp/proxy.log" &
# (not through `on`: $! is the handler itself, whose end is waited for)
ip netns exec "${P}h1" env DSSM_NAMESPACE=net-a "$PWD/$BUILD/examples/odometry" --seconds 10 2>/dev/null &
odometry=$!
sleep 0.5

t_list() { # (the handler and the proxy may take a moment to start)
	for _ in $(seq 50); do
		on h2 env DSSM_NAMESPACE=net-b "$dssm" ls 10.77.0.1:5800 2>/dev/null | grep -q "^odom:0" && return 0
		sleep 0.1
	done
	on h2 env DSSM_NAMESPACE=net-b "$dssm" ls 10.77.0.1:5800; return 1
}
check "remote ls across the veth, with the shared secret" t_list

# (not through `on`: $! must be the mirror itself, not a subshell, for kill)
ip netns exec "${P}h2" env DSSM_NAMESPACE=net-b "$dssm" mirror 10.77.0.1:5800/odom 2>"$tmp/mirror.log" &
mirror=$!
t_lossy_cut() {
	sleep 1; loss 2 5
	sleep 2; cut 2; sleep 2; heal
	# the handler stops at 10 s, or later on a loaded machine
	for _ in $(seq 600); do kill -0 $odometry 2>/dev/null || break; sleep 0.1; done
	# Let the mirror catch up: a link silent after the cut is given up
	# within the connector's 5 s timeout, then the ring's history backfills.
	local a b
	for _ in $(seq 300); do
		a=$(DSSM_NAMESPACE=net-a "$dssm" info odom | awk '/^written:/ {print $2}')
		b=$(DSSM_NAMESPACE=net-b "$dssm" info odom | awk '/^written:/ {print $2}')
		[ -n "$a" ] && [ "$a" = "$b" ] && break
		sleep 0.2
	done
	kill -INT $mirror; wait $mirror
	tr '\r' '\n' <"$tmp/mirror.log" | grep -v '^$' | tail -4
	echo "written on h1: $a, mirrored on h2: $b"
	[ -n "$a" ] && [ "$a" = "$b" ] && grep -q " 0 lost beyond the remote history" "$tmp/mirror.log"
}
check "mirror through 5% loss and a 2 s cut: every sample arrives" t_lossy_cut

# The call fails by its own timeout (said so), not by a hang: how long it
# took beyond its 5 s depends on the machine's load, so the guard against a
# hang (TCP retransmits for minutes) is 60 s.
t_partition() {
	cut 2
	local t0=$SECONDS
	on h2 env DSSM_NAMESPACE=net-b timeout 60 "$dssm" cat 10.77.0.1:5800/odom -n 1 2>"$tmp/e"
	local rc=$? took=$((SECONDS - t0))
	cat "$tmp/e"; echo "failed with $rc after ${took}s"
	heal
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "no answer from the proxy in time" "$tmp/e"
}
check "a partitioned proxy: calls fail within their timeout, no hang" t_partition
t_delay() {
	# 20 ms on every packet h2 sends: this kernel has no netem, so an NFQUEUE
	# program holds them (tests/net/nfq_delay.c; needs libnetfilter-queue)
	if ! gcc -O2 -o "$tmp/nfq_delay" tests/net/nfq_delay.c -lnetfilter_queue 2>/dev/null ||
		! command -v iptables >/dev/null; then
		echo "skipped: no libnetfilter-queue-dev or iptables"; return 0
	fi
	on h2 iptables -A OUTPUT -o eth0 -j NFQUEUE --queue-num 0 || return 1
	ip netns exec "${P}h2" "$tmp/nfq_delay" 0 20000 0 & local nfq=$!
	sleep 0.3
	on h2 "$dssm" ping 10.77.0.1:5800 -n 8 --max-offset 1000 >"$tmp/p" 2>&1
	local rc=$?
	kill $nfq; wait $nfq 2>/dev/null
	on h2 iptables -D OUTPUT -o eth0 -j NFQUEUE --queue-num 0
	cat "$tmp/p"
	[ $rc -eq 0 ] || return 1
	# one-way delay makes the estimate off by half of it: within the bound it reports
	awk '/clock offset/ {
		off = $4 + 0; err = $7 + 0; rtt = $15 + 0
		if (rtt < 20000) { print "round trip " rtt " us < 20 ms"; exit 1 }
		if (off < 0) off = -off
		if (off > err + 1.0) { print "offset " off " ms outside +- " err " ms"; exit 1 }
	}' "$tmp/p"
}
check "20 ms one-way delay: ping sees it, the offset stays within its bound" t_delay
echo "net: $passed passed, $failed failed"
[ $failed -eq 0 ]
