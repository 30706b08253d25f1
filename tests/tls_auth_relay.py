#!/usr/bin/env python3
"""tls_auth_relay.py CERT KEY PROXY_PORT PORT_FILE - an attacker between a
connector and a proxy that holds a certificate of the same CA for the
proxy's name (tests/tls-cert-test.sh, #29). It passes the client's HELLO to
the proxy and the proxy's reply (its nonce) back, ends the client's TLS with
its own certificate and opens its own TLS to the proxy, then relays the
client's AUTH into its session with the proxy. Prints "relayed AUTH
accepted" if the proxy took the proof (the attacker is then in as that
client), "relayed AUTH refused: ..." otherwise. Python's ssl (OpenSSL)
only: one connection, then it exits."""
import socket
import ssl
import struct
import sys

cert, key, proxy_port, port_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def read_exact(s, n):
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            raise EOFError("closed after %d of %d bytes" % (len(b), n))
        b += k
    return b


def frame(s):
    head = read_exact(s, 12)
    length, ftype = struct.unpack_from("<IH", head)
    return head + read_exact(s, length), ftype


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
with open(port_file, "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
client, _ = listener.accept()
proxy = socket.create_connection(("127.0.0.1", proxy_port))
hello, _ = frame(client)
proxy.sendall(hello)
reply, _ = frame(proxy)
client.sendall(reply)  # the proxy's nonce, for the client's proof
server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server_side.load_cert_chain(cert, key)
client_tls = server_side.wrap_socket(client, server_side=True)
client_side = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
client_side.check_hostname = False
client_side.verify_mode = ssl.CERT_NONE
proxy_tls = client_side.wrap_socket(proxy)
auth, ftype = frame(client_tls)
proxy_tls.sendall(auth)
answer, atype = frame(proxy_tls)
if atype == 0x8002:
    print("relayed AUTH accepted")
else:
    print("relayed AUTH refused: %s" % answer[12:].decode("latin-1", "replace"))
client_tls.sendall(answer)
sys.stdout.flush()
