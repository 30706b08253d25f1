# tls-certs.sh - sourced by the tests that need X.509 certificates
# (tls-cert-test.sh, foxglove-test.sh): makes them with openssl in the
# directory $c, EC P-256 (quick to make), valid from now.
#   tls_ca NAME                  a CA: $c/NAME.pem, $c/NAME.key
#   tls_cert NAME CA DAYS SAN    a certificate NAME signed by CA, valid DAYS
#                                (-1: expired since yesterday), for SAN
#                                ("DNS:localhost,IP:127.0.0.1")
tls_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$c/$1.key" 2>/dev/null; }
tls_ca() {
	tls_key "$1" && openssl req -x509 -new -key "$c/$1.key" -out "$c/$1.pem" -days 30 -subj "/CN=$1" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
}
tls_cert() {
	tls_key "$1" && openssl req -new -key "$c/$1.key" -out "$c/$1.csr" -subj "/CN=$1" 2>/dev/null &&
		printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$4" >"$c/$1.ext" &&
		openssl x509 -req -in "$c/$1.csr" -CA "$c/$2.pem" -CAkey "$c/$2.key" -CAcreateserial \
			-days "$3" -extfile "$c/$1.ext" -out "$c/$1.pem" 2>/dev/null
}
