"""decode.py - samples decoded into Python values by the library's decoder.

A Decoder wraps one dssm_decoder (include/dssm/decoder.h), built from a
stream's encoding ("ros1", "cdr", "struct", "json"), type and definition.
The library turns a sample into JSON text; json.loads makes it a dict, and
the few places where JSON cannot say what the message held are mended from
the decoder's own JSON Schema (dssm_decoder_json_schema), so no .msg text is
parsed here a second time:

- uint8 arrays (ROS 1 char[], ROS 2 byte[]) arrive as base64 strings and are
  returned as bytes;
- float fields arrive as numbers or as the strings "NaN", "Infinity",
  "-Infinity", and a float that happens to be whole as an integer: they are
  returned as float, always.

Everything else is as the JSON says (docs/python.md): 64-bit integers exact,
ROS 1 time/duration as {"sec", "nsec"}, struct char[N] as str.
"""

import base64
import json
import re

import numpy as np

from ._lib import ffi, lib, check, fail, Error, ErrorCode

ENCODINGS = ("ros1", "cdr", "struct", "json")


def supports(encoding):
    """True if the library decodes samples of this encoding."""
    return bool(lib.dssm_decoder_supports((encoding or "").encode()))


def _floats(a):
    return [float(x) for x in a]


def _mender(schema):
    """A function that turns one value of this JSON Schema, as json.loads
    gives it, into its Python form (in place for objects), or None when
    nothing in it needs mending."""
    kind = schema.get("type")
    if kind == "number":
        return float
    if kind == "string":
        return base64.b64decode if schema.get("contentEncoding") == "base64" else None
    if kind == "array":
        items = schema.get("items") or {}
        if items.get("type") == "number":
            return _floats
        inner = _mender(items)
        if inner is None:
            return None
        return lambda a: [inner(x) for x in a]
    if kind == "object":
        fields = [(k, m) for k, m in ((k, _mender(v))
                                      for k, v in (schema.get("properties") or {}).items())
                  if m is not None]
        if not fields:
            return None

        def mend(o):
            for k, m in fields:
                if k in o:
                    o[k] = m(o[k])
            return o
        return mend
    return None


def _json_default(o):
    """numpy scalars and arrays in a message given by its fields."""
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} is no JSON value")


class Decoder:
    """Decodes samples of one encoding, type and definition (a stream's
    `info["encoding"]`, `info["type"]` and `schema`):

        dec = dssm.Decoder("cdr", "std_msgs/msg/String", "string data\\n")
        dec.decode(sample_bytes)    # {'data': 'hello'}
        dec.json(sample_bytes)      # '{"data":"hello"}' (the library's text)

    Raises dssm.Error EINVAL naming what is wrong with the definition, or
    saying the encoding has no decoder. Immutable once built: threads may
    share one. `label` names the samples' stream in error messages."""

    def __init__(self, encoding, type="", definition=None, label=None):
        self.encoding = encoding or ""
        self.type = type or ""
        self.label = label
        out = ffi.new("dssm_decoder **")
        rc = lib.dssm_decoder_new(self.encoding.encode(), self.type.encode(),
                                  definition.encode() if definition is not None else ffi.NULL,
                                  out)
        if rc < 0:
            e = fail(rc)
            raise Error(e.code, f"{self._who()}{e.message}")
        self._h = ffi.gc(out[0], lib.dssm_decoder_free)
        self._mend = self._schema_error = self._columns = None
        try:
            self._mend = _mender(json.loads(self.json_schema))
        except Error as e:
            # a definition whose schema, written out inline, passes 16 MiB
            # (types used twice at each of many levels): json() still works
            self._schema_error = (e.code, e.message)

    def _who(self):
        return f"stream '{self.label}': " if self.label else ""

    @property
    def json_schema(self):
        """The JSON Schema (text) of what json() writes (dssm_decoder_json_schema)."""
        text = ffi.new("dssm_text *")
        try:
            rc = lib.dssm_decoder_json_schema(self._h, text)
            if rc < 0:
                raise fail(rc)
            return ffi.string(text.data, text.len).decode()
        finally:
            lib.dssm_text_free(text)

    def encode(self, message):
        """A message given by its fields (a dict, as decode() returns, or a
        JSON text) as the bytes of this encoding (dssm_encode_json): fields
        left out are 0; a field the type does not have, a value of the
        wrong kind or out of range raises dssm.Error EINVAL naming it."""
        text = message if isinstance(message, str) else json.dumps(
            message, allow_nan=False, default=_json_default)
        raw = text.encode()
        out = ffi.new("dssm_text *")
        try:
            rc = lib.dssm_encode_json(self._h, raw, len(raw), out)
            if rc < 0:
                e = fail(rc)
                raise Error(e.code, f"{self._who()}{e.message}")
            return ffi.unpack(out.data, out.len)
        finally:
            lib.dssm_text_free(out)

    @property
    def struct_size(self):
        """For the struct encoding the C size of a sample, else 0."""
        return lib.dssm_decoder_struct_size(self._h)

    def _text(self, data, length, text, what):
        """The JSON text of one sample; `what` (a str, or a function giving
        one, called only on failure) says which sample in an error."""
        rc = lib.dssm_decode_json(self._h, data, length, text)
        if rc < 0:
            e = fail(rc)
            raise Error(e.code, f"{self._who()}{what if isinstance(what, str) else what()}"
                        f"{e.message}")
        return ffi.string(text.data, text.len).decode()

    def json(self, data, what=""):
        """One sample (bytes-like) as the library's JSON text (one line).
        A sample that does not match the definition raises dssm.Error
        ECORRUPT naming the field and the byte offset."""
        text = ffi.new("dssm_text *")
        try:
            return self._text(*_pointer(data), text, what)
        finally:
            lib.dssm_text_free(text)

    def decode(self, data, what=""):
        """One sample (bytes-like) as Python values: a dict for a message
        (uint8 arrays as bytes, floats as float; see the module's text).
        Errors as json()."""
        if self._schema_error is not None:
            code, message = self._schema_error
            raise Error(code, f"{self._who()}{message}: decode() needs it to know which "
                        "strings are bytes and which floats (json() gives the library's text)")
        v = json.loads(self.json(data, what))
        return v if self._mend is None else self._mend(v)

    def _decode_many(self, payload, offsets, what):
        """Each sample of a query's payload/offsets pair, decoded; one output
        text reused for all. what(i) names sample i in an error."""
        if self._schema_error is not None:
            self.decode(b"")  # raises the schema's error
        text = ffi.new("dssm_text *")
        buf = ffi.from_buffer(payload)   # kept alive here: base points into it
        base = ffi.cast("const char *", buf) if len(buf) else _EMPTY
        mend, loads = self._mend, json.loads
        ends = offsets.tolist()
        try:
            for i in range(len(ends) - 1):
                a, b = ends[i], ends[i + 1]
                v = loads(self._text(base + a, b - a, text, lambda: what(i)))
                yield v if mend is None else mend(v)
        finally:
            lib.dssm_text_free(text)
            del buf

    def columns(self):
        """The message as table columns (dssm_decoder_columns), for a ros1
        or cdr decoder: (dtype, left_out). dtype is a packed structured
        numpy dtype with one field per column, named by its flat path
        ("header.stamp.sec", as `dssm cat --field` and the JSON name it; a
        fixed array one field of that shape); None when the message has no
        field of fixed size. left_out: the paths of the fields without a
        column (strings, variable-length arrays...)."""
        if self._columns is None:
            c = ffi.new("dssm_decode_columns *")
            check(lib.dssm_decoder_columns(self._h, c))
            try:
                names, formats, offsets = [], [], []
                for i in range(c.ncolumns):
                    col = c.column[i]
                    kind = col.kind.decode()
                    base = np.dtype("?") if kind == "b" else np.dtype(f"={kind}{col.size}")
                    names.append(ffi.string(col.name).decode())
                    formats.append(base if col.count == 1 else (base, (col.count,)))
                    offsets.append(col.offset)
                dtype = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                                  "itemsize": c.row_size}) if names else None
                left = [ffi.string(c.left_out[i]).decode() for i in range(c.nleft_out)]
            finally:
                lib.dssm_decode_columns_free(c)
            self._columns = (dtype, left)
        return self._columns

    def rows(self, payload, offsets, what=None):
        """The samples of a query's payload/offsets pair as one structured
        array of columns()'s dtype, filled by the library in one call (no
        Python object per sample). A sample that does not decode raises
        dssm.Error ECORRUPT naming it (what(i), else its index) and the
        field; no row is left zero silently."""
        dtype, _ = self.columns()
        if dtype is None:
            raise Error(ErrorCode.EINVAL, f"{self._who()}the message has no field of fixed size")
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        n = max(len(offsets) - 1, 0)
        out = np.empty(n, dtype=dtype)
        if n == 0:
            return out
        payload = np.ascontiguousarray(payload, dtype=np.uint8)
        src = ffi.from_buffer(payload) if len(payload) else _EMPTY
        rc = lib.dssm_decode_rows(self._h, ffi.cast("const char *", src),
                                  ffi.cast("const int64_t *", ffi.from_buffer(offsets)), n,
                                  dtype.itemsize, ffi.cast("char *", ffi.from_buffer(out)))
        if rc < 0:
            e = fail(rc)
            m = re.match(r"sample (\d+): ", e.message)
            if m and what is not None:
                raise Error(rc, f"{self._who()}{what(int(m.group(1)))}{e.message[m.end():]}")
            raise Error(rc, f"{self._who()}{e.message}")
        return out

    def __repr__(self):
        return f"<dssm.Decoder {self.encoding} {self.type!r}>"


_EMPTY = ffi.new("char[1]")


def _pointer(data):
    """(pointer, length) of a sample given as bytes, a memoryview, a numpy
    record or array, or anything else with the buffer protocol."""
    if isinstance(data, bytes):
        return data, len(data)
    if hasattr(data, "tobytes") and not isinstance(data, memoryview):
        data = data.tobytes()  # numpy: a record (np.void) has no plain buffer
        return data, len(data)
    buf = ffi.from_buffer(data)  # a char[] cdata: it keeps data alive
    return buf, len(buf)


class Decodes:
    """What a stream (live, remote or recorded) offers about decoding; the
    class sets self._dec, its LazyDecoder."""

    @property
    def decoder(self):
        """The stream's dssm.Decoder (built once, on first use); Error EINVAL
        naming the stream when its encoding has no decoder or its definition
        is wrong."""
        return self._dec.get()

    @property
    def decodable(self):
        """True if the library decodes this stream's samples (Sample.decode)."""
        return self._dec.ok()


class LazyDecoder:
    """The decoder of one stream, built on first use and kept; a failure is
    kept too and raised again (as a fresh Error) on each use."""

    __slots__ = ("label", "encoding", "type", "definition", "_dec", "_err")

    def __init__(self, label, encoding, type, definition):
        self.label = label
        self.encoding = encoding or ""
        self.type = type or ""
        self.definition = definition
        self._dec = None
        self._err = None

    def get(self):
        if self._dec is not None:
            return self._dec
        if self._err is None:
            try:
                self._dec = self._build()
                return self._dec
            except Error as e:
                self._err = (e.code, e.message)
        raise Error(*self._err)

    def _build(self):
        if not supports(self.encoding):
            what = f"encoding '{self.encoding}'" if self.encoding else "no encoding"
            raise Error(ErrorCode.EINVAL,
                        f"stream '{self.label}' has {what}: the library decodes only "
                        + ", ".join(ENCODINGS) + " (its samples are bytes: Sample.data)")
        return Decoder(self.encoding, self.type, self.definition, label=self.label)

    def ok(self):
        try:
            self.get()
            return True
        except Error:
            return False
