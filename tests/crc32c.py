"""crc32c.py - CRC-32C as the container format defines it (docs/container-
format.md section 3), for the shell tests that rewrite or check a CLOSED
file (recording-test.sh, set-test.sh): one copy, not one per heredoc."""


def crc32c(data):
    c = 0xffffffff
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
    return c ^ 0xffffffff


def resign(path, body):
    """Write BODY (text before the crc line) to PATH with its crc line."""
    open(path, "wb").write(body.encode() + ("crc %08x\n" % crc32c(body.encode())).encode())
