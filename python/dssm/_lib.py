"""_lib.py - loading libdssm and declaring its C API (cffi, ABI mode).

Everything that mirrors include/dssm/*.h lives here: the struct layouts and
prototypes (CDEF, copied from the headers; cffi lays the structs out by the
platform's C rules, so one text serves x86-64, arm64 and armhf) and the flag
constants (one place: a new open flag in dssm.h is one line here). The rest
of the package calls `lib.<function>`, `ffi`, and `check()`.

cffi releases the GIL around every foreign call, so a thread blocked in
dssm_wait_tid or a remote read lets the other Python threads run.
Why cffi's ABI mode and not ctypes or a C extension: docs/python.md.
"""

import enum
import os

import cffi

# ---- flags (include/dssm/dssm.h) -------------------------------------------
READ = 1              # DSSM_READ
WRITE = 2             # DSSM_WRITE
EXCLUSIVE = 4         # DSSM_EXCLUSIVE: the only writing process
FROM_NOW = 0          # DSSM_FROM_NOW
FROM_TID = 1          # DSSM_FROM_TID
FROM_OLDEST = 2       # DSSM_FROM_OLDEST
RQ_HISTORY = 0        # DSSM_RQ_HISTORY (connector.h)
RQ_LATEST = 1         # DSSM_RQ_LATEST
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# ---- declarations (include/dssm/dssm.h, connector.h, container.h, decoder.h)
# Byte pointers the package fills from Python bytes are declared `const char *`
# where the header says `const void *` (the same ABI), so cffi accepts bytes.
CDEF = """
typedef int64_t dssm_time_t;
typedef struct dssm_stream dssm_stream;
typedef struct dssm_stream_config {
    size_t max_size; double life; double cycle; uint32_t slots;
    const char *type; const char *encoding; const char *schema;
    size_t property_capacity; unsigned mode; unsigned flags;
} dssm_stream_config;
typedef struct dssm_sample_info {
    uint64_t tid; dssm_time_t time; size_t len; size_t copied;
} dssm_sample_info;
typedef struct dssm_stream_info {
    char name[64]; int id; char type[64]; char encoding[32];
    size_t max_size; uint32_t slots; double life, cycle;
    size_t schema_len; size_t property_len, property_capacity;
    unsigned mode; int writer_pid; int writer_alive; int writer_crashed;
    uint64_t count; uint64_t tid_oldest, tid_newest;
    dssm_time_t time_oldest, time_newest; double rate_hz; size_t segment_bytes;
} dssm_stream_info;

const char *dssm_strerror(int code);
const char *dssm_last_error(void);
const char *dssm_version(void);
int dssm_name_matches(const char *pattern, const char *name, int id);
dssm_time_t dssm_now(void);
int dssm_parse_time(const char *text, dssm_time_t *ns, int *offset);
int dssm_parse_duration(const char *text, dssm_time_t *ns);
int dssm_create(const char *name, int id, const dssm_stream_config *cfg, dssm_stream **out);
int dssm_open(const char *name, int id, int flags, dssm_stream **out);
void dssm_close(dssm_stream *s);
int64_t dssm_write(dssm_stream *s, const char *data, size_t len, dssm_time_t t);
int64_t dssm_write_flags(dssm_stream *s, const char *data, size_t len, dssm_time_t t,
                         unsigned flags);
int dssm_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);
int dssm_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info);
int dssm_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap, dssm_sample_info *info);
int dssm_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info, uint64_t *missed);
int dssm_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);
int dssm_read_bracket(dssm_stream *s, dssm_time_t t,
                      void *before, size_t before_cap, dssm_sample_info *before_info,
                      void *after, size_t after_cap, dssm_sample_info *after_info);
int dssm_subscribe(dssm_stream *s, int from, uint64_t tid);
int dssm_tid_range(dssm_stream *s, uint64_t *oldest, uint64_t *newest);
int dssm_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout);
int dssm_wait_new(dssm_stream *s, dssm_time_t timeout);
int dssm_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout);
void dssm_set_spin(dssm_stream *s, dssm_time_t spin);
typedef struct dssm_view {
    const void *data; size_t len; uint64_t tid; dssm_time_t time;
} dssm_view;
int dssm_view_tid(dssm_stream *s, uint64_t tid, dssm_view *v);
int dssm_view_last(dssm_stream *s, dssm_view *v);
int dssm_view_check(dssm_stream *s, const dssm_view *v);
int dssm_info(dssm_stream *s, dssm_stream_info *info);
const char *dssm_schema(dssm_stream *s);
int dssm_property_set(dssm_stream *s, const char *data, size_t len);
int dssm_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len);
int dssm_list(dssm_stream_info **out);
int dssm_remove(const char *name, int id);

int dssm_open_address(const char *address, int flags, dssm_stream **out);
int dssm_create_address(const char *address, const dssm_stream_config *cfg, dssm_stream **out);
int dssm_is_remote(dssm_stream *s);
void dssm_set_timeout(dssm_stream *s, dssm_time_t timeout);

typedef struct dssm_remote_query {
    const char *streams; int mode; dssm_time_t start, end; dssm_time_t span;
    uint64_t bandwidth; uint32_t max_bytes;
} dssm_remote_query;
typedef struct dssm_remote_query_result {
    uint64_t count, bytes; dssm_time_t start;
} dssm_remote_query_result;
typedef int (*dssm_record_fn)(void *user, const char *stream, const dssm_sample_info *si,
                              const void *data);
int dssm_query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                      dssm_record_fn fn, void *user, dssm_remote_query_result *result);
typedef struct dssm_remote_warning {
    const char *stream; const char *damage; uint64_t dropped_tail;
} dssm_remote_warning;
typedef void (*dssm_warning_fn)(void *user, const dssm_remote_warning *w);
int dssm_query_remote_salvage(const char *host_port, const char *recording,
                              const dssm_remote_query *q, dssm_record_fn fn, dssm_warning_fn warn,
                              void *user, dssm_remote_query_result *result);

typedef struct dssm_container dssm_container;
typedef struct dssm_recorded {
    dssm_stream_info info; uint64_t count; dssm_time_t first, last;
    uint64_t bytes; uint64_t dropped_tail; const char *damage;
} dssm_recorded;
typedef struct dssm_query dssm_query;
typedef struct dssm_record {
    int stream; uint64_t tid; dssm_time_t time; size_t len; const void *data;
} dssm_record;
int dssm_container_open(const char *dir, dssm_container **out);
int dssm_container_refresh(dssm_container *c);
int dssm_container_stream_count(dssm_container *c);
int dssm_container_stream(dssm_container *c, int stream, dssm_recorded *out);
int dssm_container_stream_brief(dssm_container *c, int stream, dssm_recorded *out);
const char *dssm_container_schema(dssm_container *c, int stream);
int dssm_container_find(dssm_container *c, const char *name, int id);
int dssm_container_closed(dssm_container *c);
const char *dssm_container_warning(dssm_container *c);
void dssm_container_set_salvage(dssm_container *c, int on);
int dssm_container_close(dssm_container *c);
int dssm_query_open(dssm_container *c, const int *streams, int nstreams, dssm_time_t start,
                    dssm_time_t end, dssm_query **out);
int dssm_query_next(dssm_query *q, dssm_record *rec);
typedef struct dssm_batch {
    size_t max; dssm_time_t *times; uint64_t *tids; uint64_t *lens;
    void *data; size_t cap; size_t used;
} dssm_batch;
int dssm_query_next_batch(dssm_query *q, dssm_batch *b);
int64_t dssm_query_remaining(dssm_query *q);
void dssm_query_close(dssm_query *q);

typedef struct dssm_text { char *data; size_t len; size_t cap; } dssm_text;
void dssm_text_free(dssm_text *t);
typedef struct dssm_decoder dssm_decoder;
int dssm_decoder_new(const char *encoding, const char *type, const char *definition,
                     dssm_decoder **out);
void dssm_decoder_free(dssm_decoder *dec);
int dssm_decode_json(const dssm_decoder *dec, const char *data, size_t len, dssm_text *out);
int dssm_decoder_json_schema(const dssm_decoder *dec, dssm_text *out);
int dssm_encode_json(const dssm_decoder *dec, const char *json, size_t len, dssm_text *out);
size_t dssm_decoder_struct_size(const dssm_decoder *dec);
int dssm_decoder_supports(const char *encoding);
typedef struct dssm_decode_column {
    const char *name; char kind; unsigned size; size_t count; size_t offset;
} dssm_decode_column;
typedef struct dssm_decode_columns {
    dssm_decode_column *column; size_t ncolumns; size_t row_size;
    const char **left_out; size_t nleft_out;
} dssm_decode_columns;
int dssm_decoder_columns(const dssm_decoder *dec, dssm_decode_columns *out);
void dssm_decode_columns_free(dssm_decode_columns *c);
int dssm_decode_rows(const dssm_decoder *dec, const char *payload, const int64_t *offsets,
                     size_t n, size_t row_size, char *rows);

void free(void *p);
"""

_SONAME = "libdssm.so.0"

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    """Where libdssm is looked for, in order (docs/python.md)."""
    env = os.environ.get("DSSM_LIBRARY")
    if env:
        return [env]  # asked for explicitly: no silent fallback to another copy
    here = os.path.dirname(os.path.abspath(__file__))
    # python/dssm/ in a checkout (PYTHONPATH=python): the build tree is
    # ../../build. Only a checkout's: an installed package never picks up a
    # stray build/ beside its site directory.
    top = os.path.normpath(os.path.join(here, os.pardir, os.pardir))
    tree = os.path.join(top, "build", "libdssm.so")
    out = []
    if os.path.exists(os.path.join(top, "include", "dssm", "dssm.h")) and os.path.exists(tree):
        out.append(tree)
    out.append(_SONAME)
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("dssm: cannot load libdssm (set DSSM_LIBRARY, build it with "
                      "`make`, or install it): " + "; ".join(errors))


lib, path = _load()
libc = ffi.dlopen(None)  # free() for what dssm_list allocates


def string(p):
    """A C string (char * or char[]) as str; NULL as None."""
    return ffi.string(p).decode(errors="replace") if p != ffi.NULL else None


def struct_dict(cdata):
    """A struct's fields as a dict (char arrays as str)."""
    out = {}
    for name, field in ffi.typeof(cdata).fields:
        v = getattr(cdata, name)
        if field.type.kind == "array" and field.type.item.cname == "char":
            v = ffi.string(v).decode(errors="replace")
        out[name] = v
    return out


# ---- errors ------------------------------------------------------------------
def _error_codes():
    """DSSM_E* names and numbers, from the library itself (dssm_strerror says
    "DSSM_ETOOOLD: sample left the history"), so they never drift."""
    names = {}
    code = -1
    while True:
        text = ffi.string(lib.dssm_strerror(code)).decode()
        if not text.startswith("DSSM_E"):
            break
        names[text.split(":", 1)[0][len("DSSM_"):]] = code
        code -= 1
    return enum.IntEnum("ErrorCode", names)


ErrorCode = _error_codes()


class Closing:
    """A handle closed by close(), at the end of a with-block, and when
    collected (errors at collection are ignored: the interpreter may be
    shutting down)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Error(Exception):
    """A libdssm failure: `code` is the DSSM_E* code (an IntEnum: compare with
    dssm.ETOOOLD or -7; code.name is "ETOOOLD"), `message` the library's
    sentence naming what was wrong."""

    def __init__(self, code, message):
        try:
            code = ErrorCode(code)
        except ValueError:
            pass
        self.code = code
        self.message = message
        name = f"DSSM_{code.name}" if isinstance(code, ErrorCode) else str(code)
        super().__init__(f"{name} ({int(code)}): {message}")


def fail(rc):
    """The Error for a negative return code of the last call in this thread."""
    return Error(rc, string(lib.dssm_last_error()))


def check(rc):
    if rc < 0:
        raise fail(rc)
    return rc
