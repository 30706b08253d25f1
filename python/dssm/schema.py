"""schema.py - numpy dtypes from a stream's struct definition.

A struct-encoded stream (encoding "struct", or "raw" with a schema) holds C
structs of the writing machine. Its schema is a message definition in the
syntax of docs/message-encodings.md: the root type's fields, one per line
(`TYPE NAME`, `TYPE[N] NAME`), then a section per nested type after a line of
'=' and "MSG: pkg/Type". This turns it into the numpy dtype of that struct,
laid out as the C struct decoder (lib/decode/layout.c) lays it out: each
primitive at its C alignment, a nested struct aligned as its most aligned
member and padded at its end to a multiple of that; char[N] is a bytes field
('S<N>'), T[N] a subarray, a nested type a nested structured dtype. The
parsing follows lib/decode/msgdef.c line for line, so a definition means the
same here as to `dssm cat`. Python adds one thing: T[N][M] (several array
dimensions, C's `T name[N][M]`).
"""

import math
import re

import numpy as np

# Primitives: numpy code (native byte order: the bytes are the writer's own
# structs). numpy's alignment of each code is C's _Alignof on this machine
# (as lib/decode/layout.c's dec_prim_align: int64/float64 align to 4 on i386).
SCALARS = {
    "float32": "f4", "float64": "f8",
    "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "bool": "?", "char": "u1", "byte": "u1",
}
# time and duration: struct {uint32_t sec, nsec;} in C (align 4)
_TIMES = {
    "time": np.dtype({"names": ["sec", "nsec"], "formats": ["u4", "u4"]}, align=True),
    "duration": np.dtype({"names": ["sec", "nsec"], "formats": ["i4", "i4"]}, align=True),
}
# Known without a section (ROS 2), as msgdef.c's add_builtin.
_BUILTINS = {
    "builtin_interfaces/Time": "int32 sec\nuint32 nanosec",
    "builtin_interfaces/Duration": "int32 sec\nuint32 nanosec",
}
# Encodings whose bytes are plain C structs.
STRUCT_ENCODINGS = ("raw", "struct")

MAX_DEPTH = 32            # DEC_MAX_DEPTH
MAX_DEFINITION = 1 << 20  # DEC_MAX_DEFINITION
MAX_STRUCT = 1 << 30      # DEC_MAX_STRUCT
MAX_NAME = 255            # DEC_MAX_NAME
MAX_TYPES = 4096

_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")
_DIMS = re.compile(r"^(?:\[([0-9]+)\])+$")


def _normalize(name):
    """pkg/msg/Type is pkg/Type (dec_type_normalize)."""
    pkg, sep, rest = name.partition("/")
    if sep and rest.startswith("msg/") and len(rest) > 4:
        return f"{pkg}/{rest[4:]}"
    return name


def _full_name(frm, name):
    """A field's message type seen from type `frm` (msgdef.c's full_name)."""
    if "/" in name:
        return _normalize(name)
    if name == "Header":
        return "std_msgs/Header"
    if "/" in frm:
        return frm.split("/", 1)[0] + "/" + name
    return name


class _Field:
    __slots__ = ("line", "name", "base", "dims", "seq", "type")


def _bad(tname, line, what, text):
    return ValueError(f"struct definition, line {line} (type {tname}): {what}: {text[:80]!r}")


def _count(text):
    """Decimal digits up to 4294967295, else None (parse_count)."""
    if not text or len(text) > 10 or not text.isdigit() or int(text) > 0xFFFFFFFF:
        return None
    return int(text)


def _parse_type(tname, line, tok, f):
    """The type token ("float64[3]", "pkg/T", "char[8]") into f."""
    br = tok.find("[")
    f.dims, f.seq = (), False
    base = tok if br < 0 else tok[:br]
    if br >= 0:
        if not tok.endswith("]"):
            raise _bad(tname, line, "array type without its ']'", tok)
        inner = tok[br + 1:-1]
        if inner == "" or (len(inner) > 2 and inner.startswith("<=")):
            f.seq = True
            if inner and _count(inner[2:]) is None:
                raise _bad(tname, line, "array length is not a number up to 4294967295", tok)
        elif _DIMS.match(tok[br:]):
            f.dims = tuple(_count(d) for d in re.findall(r"\[([0-9]+)\]", tok[br:]))
            if None in f.dims:
                raise _bad(tname, line, "array length is not a number up to 4294967295", tok)
        else:
            raise _bad(tname, line, "array length is not a number up to 4294967295", tok)
    le = base.rfind("<=")
    name = base if le < 0 else base[:le]
    if not name:
        raise _bad(tname, line, "no type before the array brackets", tok)
    if name in ("wstring", "wchar"):
        raise _bad(tname, line, "wstring and wchar are not supported", tok)
    if le >= 0 and (name != "string" or _count(base[le + 2:]) is None):
        raise _bad(tname, line, "only string takes a bound (string<=N)", tok)
    if name in SCALARS or name in _TIMES or name == "string":
        f.base, f.type = name, None
        return
    if not all(_NAME_CHAR.match(c) or c == "/" for c in name):
        raise _bad(tname, line, "not a type name", tok)
    if len(name) > MAX_NAME:
        raise _bad(tname, line, "type name too long", tok)
    f.base, f.type = None, name


def _parse_line(tname, fields, s, line):
    """One line of a type's section (msgdef.c's parse_line): a field is
    appended to `fields`; blanks, comments and constants are skipped."""
    t = s.lstrip()
    if not t or t[0] == "#":
        return
    if t.startswith("---"):
        raise _bad(tname, line, "a '---' line: this is a service or action definition "
                   "(.srv/.action), not the definition of one message", s)
    tok = t.split(None, 1)[0]
    rest = t[len(tok):].lstrip()
    m = re.match(r"[A-Za-z0-9_]*", rest)
    name, after = m.group(0), rest[m.end():]
    eq = tok.find("=")
    if 0 <= eq < len(tok) - 1 and not (eq > 0 and tok[eq - 1] == "<"):
        return  # "int32 X=5" without a space: a constant
    if after.lstrip().startswith("="):
        return  # a constant: takes no bytes
    if not name:
        raise _bad(tname, line, "a field needs a type and a name", s)
    if len(name) > MAX_NAME:
        raise _bad(tname, line, "field name too long", s)
    if after and not after[0].isspace() and after[0] != "#":
        raise _bad(tname, line, "field name has a character names cannot have", s)
    f = _Field()
    f.line, f.name = line, name
    _parse_type(tname, line, tok, f)
    fields.append(f)


def _sections(text, root):
    """[(type name, [fields])], the root first (dec_def_parse)."""
    if len(text.encode()) > MAX_DEFINITION:
        raise ValueError(f"struct definition of {len(text.encode())} bytes: more than "
                         f"{MAX_DEFINITION}")
    types = [(_normalize(root), [])]
    want_msg = False
    for line, s in enumerate(text.split("\n"), 1):
        r = s.rstrip()
        if len(r) >= 3 and set(r) == {"="}:
            want_msg = True
            continue
        if want_msg:
            t = s.strip()
            if not t:
                continue
            if len(t) < 5 or not t.startswith("MSG:"):
                raise ValueError(f"struct definition, line {line}: a '===' line is not "
                                 "followed by \"MSG: pkg/Type\"")
            name = t[4:].strip()
            if not name or len(name) > MAX_NAME:
                raise ValueError(f"struct definition, line {line}: \"MSG:\" without a type "
                                 "name (or one too long)")
            if len(types) >= MAX_TYPES:
                raise ValueError(f"struct definition, line {line}: more than {MAX_TYPES} types")
            types.append((_normalize(name), []))
            want_msg = False
            continue
        _parse_line(types[-1][0], types[-1][1], s, line)
    if want_msg:
        raise ValueError("struct definition ends after a '===' line")
    return types


class _Layout:
    """Resolves the types the root reaches and makes their dtypes."""

    def __init__(self, types):
        self.sections = {}
        for name, fields in types:
            self.sections.setdefault(name, fields)  # the first section of a name wins
        self.done = {}
        self.busy = set()

    def fields_of(self, name):
        if name not in self.sections and name in _BUILTINS:
            fields = []
            for s in _BUILTINS[name].split("\n"):
                _parse_line(name, fields, s, 0)
            self.sections[name] = fields
        return self.sections.get(name)

    def dtype(self, tname, depth=0):
        """The numpy dtype of type tname (C layout; align=True)."""
        if tname in self.done:
            return self.done[tname]
        if depth > MAX_DEPTH:
            raise ValueError(f"struct definition: types nest deeper than {MAX_DEPTH} "
                             f"(at {tname})")
        self.busy.add(tname)
        names, formats, offsets = [], [], []
        off, align = 0, 1
        for f in self.sections[tname]:
            if f.base == "string" or f.seq:
                raise ValueError(
                    f"struct definition, line {f.line}: field {f.name} of {tname} is a "
                    f"{f.base or f.type}{'[] of variable length' if f.seq else ''}: the struct "
                    "encoding takes only fixed-size fields (char[N] for text, T[N] for arrays)")
            if f.type is not None:
                full = _full_name(tname, f.type)
                if self.fields_of(full) is None:
                    raise ValueError(
                        f"struct definition, line {f.line}: type {full} (field {f.name} of "
                        f"{tname}) is not defined in it (no \"MSG: {full}\" section)")
                if full in self.busy:
                    raise ValueError(f"struct definition, line {f.line}: type {full} contains "
                                     f"itself (field {f.name} of {tname})")
                item = self.dtype(full, depth + 1)
            elif f.base in _TIMES:
                item = _TIMES[f.base]
            else:
                item = np.dtype(SCALARS[f.base])
            if any(d == 0 for d in f.dims):
                raise ValueError(f"struct definition, line {f.line}: field {f.name} of {tname} "
                                 "is an empty array (T[0]), which numpy cannot hold")
            if f.name in names:
                raise ValueError(f"struct definition, line {f.line}: field {f.name!r} of "
                                 f"{tname} repeats")
            a = item.alignment
            off = (off + a - 1) // a * a
            n = math.prod(f.dims)
            if item.itemsize * n > MAX_STRUCT - off:
                raise ValueError(f"struct definition, line {f.line}: field {f.name} of {tname} "
                                 f"ends past {MAX_STRUCT} bytes")
            if f.base == "char" and f.dims:    # char[N]: text, as the C decoder shows it
                fmt = np.dtype(f"S{f.dims[-1]}")
                fmt = (fmt, f.dims[:-1]) if len(f.dims) > 1 else fmt
            else:
                fmt = (item, f.dims) if f.dims else item
            names.append(f.name)
            formats.append(fmt)
            offsets.append(off)
            off += item.itemsize * n
            align = max(align, a)
        if not names:
            raise ValueError(f"struct definition: type {tname} has no fields")
        size = (off + align - 1) // align * align
        dt = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                       "itemsize": size}, align=True)
        self.busy.discard(tname)
        self.done[tname] = dt
        return dt


def struct_dtype(text, type=None):
    """The numpy dtype (C layout) of a struct definition whose root type is
    `type` (the stream's type name: bare type names in the root's fields are
    in its package; default "root"). ValueError naming the line and field
    that is not a fixed-size field."""
    types = _sections(text, type or "root")
    return _Layout(types).dtype(types[0][0])


def dtype_for(encoding, schema, type=None):
    """The struct dtype of a stream with this encoding, schema and type
    name, or None when its samples are not parseable C structs."""
    if encoding not in STRUCT_ENCODINGS or not schema:
        return None
    try:
        return struct_dtype(schema, type)
    except ValueError:
        return None
