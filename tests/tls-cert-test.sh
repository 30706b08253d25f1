#!/usr/bin/env bash
# tls-cert-test.sh [DSSM] - `dssm proxy --tls-cert/--tls-key/--tls-client-ca`
# and the connector's DSSM_TLS_CA, DSSM_TLS_CERT, DSSM_TLS_KEY, DSSM_TLS_NAME
# (#29, docs/protocol.md section 3.1 "Certificates"), as a user sees them.
# The certificates are made here with openssl: a CA, a server certificate for
# localhost and 127.0.0.1, one of another CA, an expired one, one for another
# name, and client certificates. Checks: a connector with the right CA reads
# a ring; wrong CA, wrong name, expired: refused naming the reason; the name
# checked is the address's host or DSSM_TLS_NAME; a proxy with a secret and a
# certificate takes certificate clients that prove the secret by AUTH inside
# TLS, and PSK clients; a proxy requiring client certificates refuses a
# client without one or with one of another CA, and takes one of its CA
# (with a secret too: no AUTH then), and may listen beyond loopback; a
# rotation of the secret does not count client certificates as on the
# previous secret; usage errors of the options.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
command -v openssl >/dev/null || { echo "  skip: no openssl to make the test certificates"; exit 0; }
tmp=$(mktemp -d /tmp/dssm-tls-cert.XXXXXX)
export DSSM_NAMESPACE=tlsc$$
proxy=
cleanup() {
	[ -n "$proxy" ] && kill "$proxy" 2>/dev/null && wait "$proxy" 2>/dev/null
	"$dssm" rm tc_note 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0 failed=0 bad_proxy=
check() {
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then passed=$((passed + 1)); echo "  ok    $name"
	else failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -15; fi
}
# (under ASan a report is a failure too, even where the command should fail)
has() { grep -qF -- "$1" "$2" || { echo "expected '$1' in:"; cat "$2"; return 1; }
	! grep -q "Sanitizer" "$2" || { cat "$2"; return 1; }; }

# ---- the certificates ----
c=$tmp/c
mkdir -p "$c"
. tests/tls-certs.sh
{ tls_ca ca && tls_ca otherca && tls_cert server ca 30 DNS:localhost,IP:127.0.0.1 &&
	tls_cert expired ca -1 DNS:localhost,IP:127.0.0.1 && tls_cert elsewhere ca 30 DNS:robot.example &&
	tls_cert client ca 30 DNS:client && tls_cert stranger otherca 30 DNS:client; } ||
	{ echo "  FAIL  openssl could not make the certificates"; exit 1; }
"$dssm" secret "$tmp/secret" >/dev/null || exit 1

"$dssm" write tc_note "hello over certificates" --create 64 >/dev/null || exit 1

# start ARGS...: a proxy on a free loopback port; sets addr
start() {
	if [ -n "$proxy" ]; then
		kill "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null
		grep -q Sanitizer "$tmp/proxy.log" && { bad_proxy=1; cat "$tmp/proxy.log"; }
	fi
	rm -f "$tmp/port"
	"$dssm" proxy --port 0 --port-file "$tmp/port" "$@" 2>"$tmp/proxy.log" & proxy=$!
	for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
	port=$(cat "$tmp/port")
	addr=127.0.0.1:$port
}
# read [ENV...]: `dssm cat` of the ring through the proxy, stdout and stderr in $tmp/r
read_ring() { env "$@" timeout 30 "$dssm" cat "$1" -n 1 >"$tmp/r" 2>&1; }
reads() { env "$@" timeout 30 "$dssm" cat "$addr/tc_note" -n 1 >"$tmp/r" 2>&1 &&
	has "|hello over certi|" "$tmp/r"; }
refused() { # WHY ENV...: the read fails, saying WHY
	local why=$1; shift
	env "$@" timeout 30 "$dssm" cat "$addr/tc_note" -n 1 >"$tmp/r" 2>&1 && { cat "$tmp/r"; return 1; }
	has "$why" "$tmp/r"
}

start --tls-cert "$c/server.pem" --tls-key "$c/server.key"
t_announce() { has "TLS (certificate)" "$tmp/proxy.log"; }
check "a proxy with a certificate says so when it starts" t_announce
check "the right CA reads a ring (127.0.0.1 in the SAN)" reads DSSM_TLS_CA="$c/ca.pem"
check "the host name localhost is checked too" env DSSM_TLS_CA="$c/ca.pem" \
	bash -c "timeout 30 '$dssm' cat localhost:$port/tc_note -n 1 | grep -q 'hello over'"
check "another CA: refused, naming it" refused "signed by no CA of the CA file" DSSM_TLS_CA="$c/otherca.pem"
check "DSSM_TLS_NAME another name: refused, naming it" refused "issued for another name" \
	DSSM_TLS_CA="$c/ca.pem" DSSM_TLS_NAME=robot.example
check "no certificate and no secret: a TLS-only proxy refuses a clear client" refused \
	"speaks only version 4"
check "a PSK client (a secret, no DSSM_TLS_CA) at a certificate-only proxy: told to set DSSM_TLS_CA" \
	refused "set DSSM_TLS_CA" DSSM_SECRET_FILE="$tmp/secret"
check "DSSM_TLS_CERT without DSSM_TLS_KEY: refused, naming both" refused \
	"DSSM_TLS_CERT and DSSM_TLS_KEY go together" DSSM_TLS_CA="$c/ca.pem" DSSM_TLS_CERT="$c/client.pem"
check "DSSM_TLS_CA that is not a file: refused, naming it" refused "$tmp/nosuch" \
	DSSM_TLS_CA="$tmp/nosuch"

start --tls-cert "$c/expired.pem" --tls-key "$c/expired.key"
check "an expired certificate: refused, naming it" refused "certificate is expired" DSSM_TLS_CA="$c/ca.pem"
start --tls-cert "$c/elsewhere.pem" --tls-key "$c/elsewhere.key"
check "a certificate for another name: refused" refused "issued for another name" DSSM_TLS_CA="$c/ca.pem"
check "... and taken with DSSM_TLS_NAME set to its name" reads DSSM_TLS_CA="$c/ca.pem" \
	DSSM_TLS_NAME=robot.example

# a secret and a certificate: certificate clients prove the secret by AUTH
start --tls-cert "$c/server.pem" --tls-key "$c/server.key" --secret-file "$tmp/secret"
check "secret and certificate: a certificate client with the secret reads" reads \
	DSSM_TLS_CA="$c/ca.pem" DSSM_SECRET_FILE="$tmp/secret"
check "... a PSK client (no DSSM_TLS_CA) reads" reads DSSM_SECRET_FILE="$tmp/secret"
check "... a certificate client without the secret is refused" refused \
	"requires a secret: set DSSM_SECRET_FILE (or a client certificate" DSSM_TLS_CA="$c/ca.pem"
"$dssm" secret "$tmp/wrong" >/dev/null
check "... a certificate client with a wrong secret is refused" refused "wrong secret" \
	DSSM_TLS_CA="$c/ca.pem" DSSM_SECRET_FILE="$tmp/wrong"

start --secret-file "$tmp/secret"
check "a certificate client at a PSK-only proxy: told it has no certificate" refused \
	"the proxy has no certificate to offer" DSSM_TLS_CA="$c/ca.pem" DSSM_SECRET_FILE="$tmp/secret"

# client certificates required
start --tls-cert "$c/server.pem" --tls-key "$c/server.key" --tls-client-ca "$c/ca.pem"
check "client certificates: one of the CA reads" reads DSSM_TLS_CA="$c/ca.pem" \
	DSSM_TLS_CERT="$c/client.pem" DSSM_TLS_KEY="$c/client.key"
check "... a client without one is refused, told why" refused "requires a client certificate signed by its CA" \
	DSSM_TLS_CA="$c/ca.pem"
check "... one of another CA is refused" refused "not of that CA" \
	DSSM_TLS_CA="$c/ca.pem" DSSM_TLS_CERT="$c/stranger.pem" DSSM_TLS_KEY="$c/stranger.key"
# both: a certificate client proves itself by its certificate (no AUTH, no
# secret needed); PSK clients go on
start --tls-cert "$c/server.pem" --tls-key "$c/server.key" --tls-client-ca "$c/ca.pem" \
	--secret-file "$tmp/secret"
check "client certificates and a secret: a client certificate alone reads" reads \
	DSSM_TLS_CA="$c/ca.pem" DSSM_TLS_CERT="$c/client.pem" DSSM_TLS_KEY="$c/client.key"
check "... and a PSK client reads" reads DSSM_SECRET_FILE="$tmp/secret"

# AUTH inside TLS is bound to the session (the TLS exporter): an attacker
# holding another certificate of the CA for the proxy's name cannot relay a
# client's proof into its own session with the proxy
start --tls-cert "$c/server.pem" --tls-key "$c/server.key" --secret-file "$tmp/secret"
t_relay() {
	rm -f "$tmp/rport"
	python3 tests/tls_auth_relay.py "$c/server.pem" "$c/server.key" "$port" "$tmp/rport" \
		>"$tmp/relay" 2>&1 & local relay=$!
	for _ in $(seq 200); do [ -s "$tmp/rport" ] && break; sleep 0.05; done
	DSSM_TLS_CA="$c/ca.pem" DSSM_SECRET_FILE="$tmp/secret" timeout 30 "$dssm" cat \
		"127.0.0.1:$(cat "$tmp/rport")/tc_note" -n 1 >"$tmp/r" 2>&1
	wait "$relay"
	cat "$tmp/relay" "$tmp/r"
	has "relayed AUTH refused" "$tmp/relay"
}
check "a relayed AUTH is refused (the proof is bound to its TLS session)" t_relay

# a rotation of the secret does not count clients of a certificate as
# still proving the previous secret
start --tls-cert "$c/server.pem" --tls-key "$c/server.key" --tls-client-ca "$c/ca.pem" \
	--secret-file "$tmp/secret" --secret-grace 1
DSSM_TLS_CA="$c/ca.pem" DSSM_TLS_CERT="$c/client.pem" DSSM_TLS_KEY="$c/client.key" \
	"$dssm" cat "$addr/tc_note" --follow >"$tmp/follow" 2>&1 & follower=$!
t_rotation() {
	for _ in $(seq 600); do grep -q "hello over certi" "$tmp/follow" && break; sleep 0.05; done
	has "hello over certi" "$tmp/follow" || return 1
	"$dssm" secret "$tmp/secret2" >/dev/null && mv "$tmp/secret2" "$tmp/secret" && kill -HUP "$proxy"
	for _ in $(seq 600); do grep -q "grace of the previous secret ended" "$tmp/proxy.log" && break; sleep 0.05; done
	has "(0 connections that proved it stay connected)" "$tmp/proxy.log"
}
check "a client certificate's connection is not counted as proving the previous secret" t_rotation
kill "$follower" 2>/dev/null; wait "$follower" 2>/dev/null

kill "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null; proxy=
check "no proxy reported a sanitizer error" bash -c "[ -z '${bad_proxy:-}' ] && ! grep -q Sanitizer '$tmp/proxy.log'"

# usage errors
usage() { # WHY ARGS...: dssm proxy ARGS exits 2 saying WHY
	local why=$1; shift
	"$dssm" proxy --port 0 "$@" >"$tmp/e" 2>&1; local rc=$?
	[ $rc -eq 2 ] || { echo "exit $rc"; cat "$tmp/e"; return 1; }
	has "$why" "$tmp/e"
}
check "--tls-cert without --tls-key: usage error" usage "--tls-cert and --tls-key go together" \
	--tls-cert "$c/server.pem"
check "--tls-client-ca without --tls-cert: usage error" usage "--tls-client-ca needs --tls-cert" \
	--tls-client-ca "$c/ca.pem"
check "a key that is not the certificate's: usage error naming the file" usage "$c/server.pem" \
	--tls-cert "$c/server.pem" --tls-key "$c/client.key"
check "a missing certificate file: usage error naming it" usage "$tmp/none.pem" \
	--tls-cert "$tmp/none.pem" --tls-key "$c/server.key"
t_listen_any() { # client certificates authenticate: any address is allowed
	start --listen 0.0.0.0 --tls-cert "$c/server.pem" --tls-key "$c/server.key" --tls-client-ca "$c/ca.pem"
	has "on 0.0.0.0:" "$tmp/proxy.log" && kill "$proxy" && wait "$proxy"; local rc=$?; proxy=; return $rc
}
check "--listen 0.0.0.0 with --tls-client-ca and no secret: served" t_listen_any
check "--listen 0.0.0.0 with a certificate but no client authentication: refused" usage \
	"needs --secret-file (or --tls-client-ca)" --listen 0.0.0.0 --tls-cert "$c/server.pem" \
	--tls-key "$c/server.key"

echo "tls-cert: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
