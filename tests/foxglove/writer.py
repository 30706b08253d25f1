"""writer.py - rings for the Foxglove server test (tests/foxglove-test.sh):
  writer.py create NAME ENCODING [MAX_SIZE [SLOTS]]   a ring of std_msgs/String (ros1, cdr) or JSON
  writer.py write NAME ENCODING COUNT T0 HZ [PAD]
      COUNT samples "msg I" measured at T0 + I ms (ns), HZ per second (0: at once);
      json samples are {"i": I, "text": "msg I", "pad": PAD x's}
  writer.py times NAME json T...   one json sample {"i": I} at each time T (ns)
  writer.py recreate NAME json COUNT   remove NAME and create it anew as `create`
      does (the same layout), with COUNT json samples
  writer.py hold NAME json    borrow a slot (the ring's writers' lock held), say
      "held" on stdout, and abandon it when stdin ends
Run with PYTHONPATH=python (the dssm package)."""
import json
import struct
import sys
import time

import dssm

TYPES = {"ros1": ("std_msgs/String", "string data\n"),
         "cdr": ("std_msgs/msg/String", "string data\n"),
         "json": ("dssm_test/Text", '{"type":"object","properties":{"i":{"type":"integer"},'
                                    '"text":{"type":"string"}}}')}


def payload(enc, i, pad):
    text = f"msg {i}".encode()
    if enc == "ros1":
        return struct.pack("<I", len(text)) + text
    if enc == "cdr":  # encapsulation header (CDR little-endian), then the string with its NUL
        return b"\x00\x01\x00\x00" + struct.pack("<I", len(text) + 1) + text + b"\x00"
    return json.dumps({"i": i, "text": text.decode(), "pad": "x" * pad}).encode()


def hold(name):
    # the binding has no borrow: declared here on its cffi handle
    from dssm._lib import ffi, lib
    ffi.cdef("int dssm_write_borrow(dssm_stream *s, void **buf, size_t *capacity);"
             "int dssm_write_abandon(dssm_stream *s);")
    s = dssm.open(name, write=True)
    buf = ffi.new("void **")
    if lib.dssm_write_borrow(s._handle(), buf, ffi.NULL) != 0:
        sys.exit("cannot borrow a slot of " + name)
    print("held", flush=True)
    sys.stdin.read()
    lib.dssm_write_abandon(s._handle())
    s.close()


def main():
    cmd, name, enc = sys.argv[1:4]
    if cmd == "hold":
        hold(name)
        return
    if cmd == "times":
        s = dssm.open(name, write=True)
        for i, t in enumerate(sys.argv[4:]):
            s.write(json.dumps({"i": i}).encode(), int(t))
        s.close()
        return
    typ, schema = TYPES[enc]
    if cmd == "recreate":
        dssm.remove(name)
        s = dssm.create(name, max_size=256, slots=4096, type=typ, encoding=enc, schema=schema)
        for i in range(int(sys.argv[4])):
            s.write(json.dumps({"i": 100 + i}).encode(), time.time_ns())
        s.close()
        return
    if cmd == "create":
        size = int(sys.argv[4]) if len(sys.argv) > 4 else 256
        slots = int(sys.argv[5]) if len(sys.argv) > 5 else 4096
        dssm.create(name, max_size=size, slots=slots, type=typ, encoding=enc, schema=schema).close()
        return
    count, t0, hz = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    pad = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    s = dssm.open(name, write=True)
    start = time.monotonic()
    for i in range(count):
        if hz > 0:
            delay = start + i / hz - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        s.write(payload(enc, i, pad), t0 + i * 1000000)
    s.close()


main()
