"""schema.py - numpy dtypes from a stream's struct definition.

A struct-encoded stream (encoding "raw" or "struct") whose schema text is a
list of fields, one per line, `TYPE NAME` or `TYPE[N] NAME` (as the examples'
odometry: "float64 x\\nfloat64 y\\n..."), holds C structs laid out with the
C compiler's alignment. This turns such a definition into the numpy dtype of
that struct (align=True gives C's padding and size). Comments start with '#'.
"""

import re

import numpy as np

# The definition's scalar types and their numpy codes (native byte order: the
# bytes are the writer's own structs).
SCALARS = {
    "float32": "f4", "float64": "f8",
    "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "bool": "?",
}
# Encodings whose bytes are plain C structs.
STRUCT_ENCODINGS = ("raw", "struct")

_FIELD = re.compile(r"^([a-z0-9]+)((?:\[[0-9]+\])*)\s+([A-Za-z_][A-Za-z0-9_]*)$")


def struct_dtype(text):
    """The numpy dtype (C alignment) of a struct definition; ValueError naming
    the line that is not a field."""
    names, formats = [], []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = _FIELD.match(" ".join(line.split()))
        if not m or m.group(1) not in SCALARS:
            raise ValueError(f"struct definition line {n}: {line!r} is not "
                             "'TYPE NAME' or 'TYPE[N] NAME' with TYPE one of "
                             + ", ".join(SCALARS))
        typ, dims, name = m.groups()
        if name in names:
            raise ValueError(f"struct definition line {n}: field {name!r} repeats")
        shape = tuple(int(d) for d in re.findall(r"[0-9]+", dims))
        if any(d == 0 for d in shape):
            raise ValueError(f"struct definition line {n}: {line!r} has an empty array")
        names.append(name)
        formats.append((SCALARS[typ], shape) if shape else SCALARS[typ])
    if not names:
        raise ValueError("struct definition has no fields")
    return np.dtype({"names": names, "formats": formats}, align=True)


def dtype_for(encoding, schema):
    """The struct dtype of a stream with this encoding and schema, or None
    when its samples are not parseable C structs."""
    if encoding not in STRUCT_ENCODINGS or not schema:
        return None
    try:
        return struct_dtype(schema)
    except ValueError:
        return None
