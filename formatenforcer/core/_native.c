/* formatenforcer.core._native: the compiled token walk.
 *
 * Two immutable objects and one walk:
 *   Trie       the vocabulary's byte trie as flat arrays (CSR): nodes numbered in preorder, each node's
 *              edges sorted by byte, the ids of the tokens ending at each node contiguous and in node
 *              order, so a node's subtree is a node range and a token range.
 *   Automaton  a deterministic automaton over characters: code point -> class by sorted intervals, a
 *              transition table (state x class), accepting states, and per state the sorted intervals of
 *              the characters it accepts (for tokens that end inside a UTF-8 character).
 *   walk_mask  the packed int32 mask row of the tokens the automaton accepts as a prefix from a state:
 *              a depth-first walk of the trie that decodes UTF-8 itself, with the GIL released.
 *
 * Every array is validated once, when its object is built (ValueError on anything malformed), and held in
 * an immutable bytes object that Python reads too; the walk then trusts them. Per call, only the state,
 * the pending bytes and the output buffer are checked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CODE_POINT 0x10FFFF

/* ------------------------------------------------------------------------------------------------ */
/* helpers                                                                                          */

static int utf8_length(uint8_t lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

/* The code points whose UTF-8 encoding starts with ``prefix`` (``count`` bytes of an incomplete character),
   as [*lo, *hi]; 0 when there are none (a bad lead or continuation byte, an overlong or surrogate-only or
   out-of-range prefix). The interval is clipped to the lead's smallest character and to Unicode. */
static int utf8_prefix_interval(const uint8_t *prefix, int count, int64_t *lo_out, int64_t *hi_out) {
    uint8_t lead = prefix[0];
    int size = utf8_length(lead);
    int64_t value, floor;
    if (size == 2) value = lead & 0x1F, floor = 0x80;
    else if (size == 3) value = lead & 0x0F, floor = 0x800;
    else if (size == 4) value = lead & 0x07, floor = 0x10000;
    else return 0;
    if (count >= size) return 0;
    for (int i = 1; i < count; i++) {
        if (prefix[i] < 0x80 || prefix[i] > 0xBF) return 0;
        value = (value << 6) | (prefix[i] & 0x3F);
    }
    int free_bits = 6 * (size - count);
    int64_t lo = value << free_bits, hi = ((value + 1) << free_bits) - 1;
    if (lo < floor) lo = floor;
    if (hi > MAX_CODE_POINT) hi = MAX_CODE_POINT;
    if (size == 3 && lo >= 0xD800 && hi <= 0xDFFF) return 0; /* only surrogates: not UTF-8 */
    if (lo > hi) return 0;
    *lo_out = lo;
    *hi_out = hi;
    return 1;
}

/* The code point of a complete UTF-8 character, or -1 where a strict decoder refuses it. */
static int32_t decode(const uint8_t *bytes, int count) {
    int32_t cp;
    if (count == 2) cp = bytes[0] & 0x1F;
    else if (count == 3) cp = bytes[0] & 0x0F;
    else cp = bytes[0] & 0x07;
    for (int i = 1; i < count; i++) {
        if (bytes[i] < 0x80 || bytes[i] > 0xBF) return -1;
        cp = (cp << 6) | (bytes[i] & 0x3F);
    }
    static const int32_t smallest[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < smallest[count] || cp > MAX_CODE_POINT || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return cp;
}

/* A bytes object holding a copy of any contiguous buffer, its length a multiple of ``item``: a bytes object
   itself (immutable) is shared, not copied (the flat trie read from the disk cache: 5 MB for 128k tokens). */
static PyObject *as_bytes(PyObject *source, Py_ssize_t item, const char *name) {
    if (PyBytes_CheckExact(source) && PyBytes_GET_SIZE(source) % item == 0) {
        Py_INCREF(source);
        return source;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(source, &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected a contiguous buffer, not %.100s", name,
                     Py_TYPE(source)->tp_name);
        return NULL;
    }
    if (view.len % item != 0) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items", name, view.len,
                     item);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static const int32_t *i32(PyObject *bytes) { return (const int32_t *)PyBytes_AS_STRING(bytes); }
static Py_ssize_t n32(PyObject *bytes) { return PyBytes_GET_SIZE(bytes) / 4; }

/* Checks an offsets array: ``count + 1`` entries, starting at 0, never decreasing, ending at ``total``. */
static int check_offsets(const int32_t *offsets, Py_ssize_t entries, Py_ssize_t count, Py_ssize_t total,
                         const char *name) {
    if (entries != count + 1) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries, expected %zd", name, entries, count + 1);
        return -1;
    }
    if (offsets[0] != 0 || offsets[count] != total) {
        PyErr_Format(PyExc_ValueError, "%s: must start at 0 and end at %zd", name, total);
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (offsets[i + 1] < offsets[i]) {
            PyErr_Format(PyExc_ValueError, "%s: decreases at entry %zd", name, i + 1);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Trie                                                                                             */

typedef struct {
    PyObject_HEAD
    PyObject *edge_start;  /* int32[nodes + 1] */
    PyObject *edge_byte;   /* uint8[edges] */
    PyObject *edge_child;  /* int32[edges] */
    PyObject *tok_start;   /* int32[nodes + 1] */
    PyObject *tok_ids;     /* int32[tokens] */
    PyObject *subtree_end; /* int32[nodes] */
    Py_ssize_t nodes, edges, tokens, vocab_size, max_depth;
    /* per node, what its subtree (the nodes strictly below it) holds, for taking a subtree whole (see
       Trie_summarize): the ASCII bytes of its edges (two 64-bit halves), flags, and the most characters a
       path below it starts, counted from the node (meaningful where the node is a character boundary) */
    uint64_t *below_ascii;
    uint8_t *below_flags;
    int32_t *below_chars;
    int32_t *node_chars; /* per node, the characters its path from the root starts */
    int32_t *tok_chars;  /* per entry of tok_ids, its node's node_chars: the token's length in characters */
    /* the JSON machine's string-body exits (_machine.c, body_exits), built on first use */
    struct BodyExits *body_exits;
} TrieObject;

#define BELOW_NON_ASCII 1 /* a byte >= 0x80 below */
#define BELOW_INVALID 2   /* a path below that is not UTF-8 (from a character boundary at the node) */
#define NODE_BOUNDARY 4   /* the node's own path from the root is whole UTF-8 characters */

static void free_body_exits(struct BodyExits *exits);

static void Trie_dealloc(TrieObject *self) {
    free_body_exits(self->body_exits);
    Py_XDECREF(self->edge_start);
    Py_XDECREF(self->edge_byte);
    Py_XDECREF(self->edge_child);
    Py_XDECREF(self->tok_start);
    Py_XDECREF(self->tok_ids);
    Py_XDECREF(self->subtree_end);
    free(self->below_ascii);
    free(self->below_flags);
    free(self->below_chars);
    free(self->node_chars);
    free(self->tok_chars);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Validates the arrays and computes max_depth. Children are numbered after their parent, so the walk
   always ends; the depth bound sizes the walk's stack. */
static int Trie_validate(TrieObject *t) {
    t->nodes = n32(t->subtree_end);
    t->edges = PyBytes_GET_SIZE(t->edge_byte);
    t->tokens = n32(t->tok_ids);
    if (t->nodes < 1) {
        PyErr_SetString(PyExc_ValueError, "trie: no root node");
        return -1;
    }
    if (t->nodes > INT32_MAX - 1 || t->vocab_size < 0 || t->vocab_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "trie: too large");
        return -1;
    }
    if (n32(t->edge_child) != t->edges) {
        PyErr_Format(PyExc_ValueError, "trie: %zd edge bytes but %zd edge children", t->edges, n32(t->edge_child));
        return -1;
    }
    const int32_t *es = i32(t->edge_start), *ec = i32(t->edge_child), *ts = i32(t->tok_start);
    const int32_t *ids = i32(t->tok_ids), *se = i32(t->subtree_end);
    const uint8_t *eb = (const uint8_t *)PyBytes_AS_STRING(t->edge_byte);
    if (check_offsets(es, n32(t->edge_start), t->nodes, t->edges, "trie edge_start") < 0) return -1;
    if (check_offsets(ts, n32(t->tok_start), t->nodes, t->tokens, "trie tok_start") < 0) return -1;
    for (Py_ssize_t i = 0; i < t->tokens; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab_size) {
            PyErr_Format(PyExc_ValueError, "trie: token id %d at %zd is outside the vocabulary of %zd", ids[i], i,
                         t->vocab_size);
            return -1;
        }
    }
    int32_t *depth = calloc((size_t)t->nodes, sizeof(int32_t));
    if (depth == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t deepest = 0;
    for (Py_ssize_t n = 0; n < t->nodes; n++) {
        if (se[n] <= n || se[n] > t->nodes) {
            free(depth);
            PyErr_Format(PyExc_ValueError, "trie: subtree_end of node %zd is %d, outside (%zd, %zd]", n, se[n], n,
                         t->nodes);
            return -1;
        }
        for (int32_t e = es[n]; e < es[n + 1]; e++) {
            if (ec[e] <= n || ec[e] >= t->nodes) {
                free(depth);
                PyErr_Format(PyExc_ValueError, "trie: edge %d of node %zd leads to node %d (children come after "
                             "their parent, below %zd)", e, n, ec[e], t->nodes);
                return -1;
            }
            if (e > es[n] && eb[e] <= eb[e - 1]) {
                free(depth);
                PyErr_Format(PyExc_ValueError, "trie: the edges of node %zd are not sorted by byte", n);
                return -1;
            }
            if (depth[ec[e]] < depth[n] + 1) depth[ec[e]] = depth[n] + 1;
        }
        if (depth[n] > deepest) deepest = depth[n];
    }
    free(depth);
    t->max_depth = deepest;
    /* a tree in preorder: the first child of n is n + 1, each next child starts where the one before ends,
       and n's subtree ends where its last child's does; the root's holds every node */
    if (se[0] != t->nodes) {
        PyErr_SetString(PyExc_ValueError, "trie: the root's subtree must hold every node");
        return -1;
    }
    for (Py_ssize_t n = 0; n < t->nodes; n++) {
        int32_t expected = (int32_t)n + 1;
        for (int32_t e = es[n]; e < es[n + 1]; e++) {
            if (ec[e] != expected) {
                PyErr_Format(PyExc_ValueError, "trie: node %zd is not in preorder (edge %d leads to %d, expected %d)",
                             n, e, ec[e], expected);
                return -1;
            }
            expected = se[ec[e]];
        }
        if (se[n] != expected) {
            PyErr_Format(PyExc_ValueError, "trie: subtree_end of node %zd is %d, its children end at %d", n, se[n],
                         expected);
            return -1;
        }
    }
    return 0;
}

/* The subtree summaries (see TrieObject): one pass down the tree for each node's UTF-8 decoding state from
   the root (whether its path is valid UTF-8, how many characters it starts), one pass up to gather them. */
static int Trie_summarize(TrieObject *t) {
    Py_ssize_t nodes = t->nodes;
    const int32_t *es = i32(t->edge_start), *ec = i32(t->edge_child);
    const uint8_t *eb = (const uint8_t *)PyBytes_AS_STRING(t->edge_byte);
    int32_t *parent = malloc(sizeof(int32_t) * (size_t)nodes);
    uint8_t *byte = malloc((size_t)nodes), *pending = malloc(4 * (size_t)nodes), *count = malloc((size_t)nodes);
    uint8_t *invalid = malloc((size_t)nodes);
    t->below_ascii = calloc(2 * (size_t)nodes, sizeof(uint64_t));
    t->below_flags = calloc((size_t)nodes, 1);
    t->below_chars = calloc((size_t)nodes, sizeof(int32_t));
    int32_t *started = t->node_chars = malloc(sizeof(int32_t) * (size_t)nodes);
    t->tok_chars = malloc(sizeof(int32_t) * (size_t)(t->tokens + 1));
    int ok = parent && byte && pending && count && invalid && started && t->below_ascii && t->below_flags &&
             t->below_chars && t->tok_chars;
    if (ok) {
        parent[0] = -1;
        count[0] = 0;
        invalid[0] = 0;
        started[0] = 0;
        for (Py_ssize_t n = 0; n < nodes; n++)
            for (int32_t e = es[n]; e < es[n + 1]; e++) parent[ec[e]] = (int32_t)n, byte[ec[e]] = eb[e];
        for (Py_ssize_t n = 1; n < nodes; n++) { /* parents come first in preorder */
            int32_t p = parent[n];
            uint8_t b = byte[n], data[4];
            int have = count[p];
            invalid[n] = invalid[p];
            started[n] = started[p];
            count[n] = 0;
            if (invalid[n]) continue;
            if (have == 0) {
                started[n]++;
                if (b < 0x80) continue;
                data[0] = b;
                int64_t lo, hi;
                if (utf8_length(b) < 2 || !utf8_prefix_interval(data, 1, &lo, &hi)) invalid[n] = 1;
                else memcpy(pending + 4 * n, data, 1), count[n] = 1;
                continue;
            }
            memcpy(data, pending + 4 * p, (size_t)have);
            data[have] = b;
            if (have + 1 == utf8_length(data[0])) {
                if (decode(data, have + 1) < 0) invalid[n] = 1;
            } else {
                int64_t lo, hi;
                if (b < 0x80 || b > 0xBF || !utf8_prefix_interval(data, have + 1, &lo, &hi)) invalid[n] = 1;
                else memcpy(pending + 4 * n, data, (size_t)have + 1), count[n] = (uint8_t)(have + 1);
            }
        }
        for (Py_ssize_t n = 0; n < nodes; n++) {
            t->below_chars[n] = started[n]; /* the most below, for now */
            if (!invalid[n] && count[n] == 0) t->below_flags[n] = NODE_BOUNDARY;
        }
        for (Py_ssize_t n = nodes - 1; n > 0; n--) {
            int32_t p = parent[n];
            uint8_t b = byte[n];
            if (b < 0x80) t->below_ascii[2 * p + (b >> 6)] |= (uint64_t)1 << (b & 63);
            t->below_ascii[2 * p] |= t->below_ascii[2 * n];
            t->below_ascii[2 * p + 1] |= t->below_ascii[2 * n + 1];
            t->below_flags[p] |= (t->below_flags[n] & (BELOW_NON_ASCII | BELOW_INVALID)) |
                                 (b >= 0x80 ? BELOW_NON_ASCII : 0) | (invalid[n] ? BELOW_INVALID : 0);
            if (t->below_chars[n] > t->below_chars[p]) t->below_chars[p] = t->below_chars[n];
        }
        for (Py_ssize_t n = 0; n < nodes; n++) {
            t->below_chars[n] -= started[n];
            for (int32_t k = i32(t->tok_start)[n]; k < i32(t->tok_start)[n + 1]; k++) t->tok_chars[k] = started[n];
        }
    }
    free(parent);
    free(byte);
    free(pending);
    free(count);
    free(invalid);
    if (!ok) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyTypeObject TrieType;

static PyObject *Trie_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"edge_start", "edge_byte", "edge_child", "tok_start", "tok_ids", "subtree_end",
                             "vocab_size", NULL};
    PyObject *a[6];
    Py_ssize_t vocab_size;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOn", kwlist, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5],
                                     &vocab_size))
        return NULL;
    TrieObject *self = (TrieObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vocab_size = vocab_size;
    if (!(self->edge_start = as_bytes(a[0], 4, "edge_start")) || !(self->edge_byte = as_bytes(a[1], 1, "edge_byte")) ||
        !(self->edge_child = as_bytes(a[2], 4, "edge_child")) || !(self->tok_start = as_bytes(a[3], 4, "tok_start")) ||
        !(self->tok_ids = as_bytes(a[4], 4, "tok_ids")) || !(self->subtree_end = as_bytes(a[5], 4, "subtree_end")) ||
        Trie_validate(self) < 0 || Trie_summarize(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Sorting token indexes by their bytes (then id): the sorted order is the trie's preorder. */
typedef struct {
    const uint8_t *blob;
    const int64_t *offsets;
} SortContext;
static SortContext sort_context; /* qsort has no context argument; the build holds the GIL throughout */

static int compare_tokens(const void *pa, const void *pb) {
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    const int64_t *o = sort_context.offsets;
    int64_t la = o[a + 1] - o[a], lb = o[b + 1] - o[b];
    int64_t common = la < lb ? la : lb;
    int c = common ? memcmp(sort_context.blob + o[a], sort_context.blob + o[b], (size_t)common) : 0;
    if (c) return c;
    if (la != lb) return la < lb ? -1 : 1;
    return a < b ? -1 : (a > b);
}

static PyObject *new_bytes(Py_ssize_t size) { return PyBytes_FromStringAndSize(NULL, size); }

/* Trie.from_tokens(blob, offsets, vocab_size): token i's bytes are blob[offsets[i]:offsets[i+1]] (int64
   offsets); empty tokens are left out. */
static PyObject *Trie_from_tokens(PyObject *cls, PyObject *args) {
    Py_buffer blob, offs;
    Py_ssize_t vocab_size;
    if (!PyArg_ParseTuple(args, "y*y*n", &blob, &offs, &vocab_size)) return NULL;
    PyObject *result = NULL;
    int32_t *order = NULL, *parent = NULL, *path = NULL;
    uint8_t *node_byte = NULL;
    int32_t *tok_node = NULL;
    TrieObject *self = NULL;
    const int64_t *o = (const int64_t *)offs.buf;
    Py_ssize_t count = offs.len / 8 - 1;
    if (offs.len % 8 != 0 || count < 0 || ((uintptr_t)offs.buf % 8) != 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: expected aligned int64 entries, one more than the tokens");
        goto done;
    }
    if (count > vocab_size || vocab_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "offsets: more tokens than the vocabulary size (or too large)");
        goto done;
    }
    if (count > 0 && o[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: must start at 0");
        goto done;
    }
    int64_t longest = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (o[i + 1] < o[i] || o[i + 1] > blob.len) {
            PyErr_Format(PyExc_ValueError, "offsets: entry %zd is decreasing or past the blob's end", i + 1);
            goto done;
        }
        if (o[i + 1] - o[i] > longest) longest = o[i + 1] - o[i];
    }
    if (blob.len > INT32_MAX - 2) {
        PyErr_SetString(PyExc_ValueError, "blob: too large");
        goto done;
    }
    Py_ssize_t kept = 0;
    order = malloc(sizeof(int32_t) * (size_t)(count + 1));
    path = malloc(sizeof(int32_t) * (size_t)(longest + 1));
    /* at most one node per byte, plus the root */
    parent = malloc(sizeof(int32_t) * (size_t)(blob.len + 1));
    node_byte = malloc((size_t)(blob.len + 1));
    tok_node = malloc(sizeof(int32_t) * (size_t)(count + 1));
    if (!order || !path || !parent || !node_byte || !tok_node) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++)
        if (o[i + 1] > o[i]) order[kept++] = (int32_t)i;
    sort_context.blob = (const uint8_t *)blob.buf;
    sort_context.offsets = o;
    qsort(order, (size_t)kept, sizeof(int32_t), compare_tokens);

    const uint8_t *data = (const uint8_t *)blob.buf;
    Py_ssize_t nodes = 1;
    parent[0] = -1;
    node_byte[0] = 0;
    path[0] = 0;
    int64_t previous_length = 0;
    const uint8_t *previous = NULL;
    for (Py_ssize_t k = 0; k < kept; k++) {
        int32_t id = order[k];
        const uint8_t *bytes = data + o[id];
        int64_t length = o[id + 1] - o[id], common = 0;
        if (previous != NULL) {
            int64_t limit = length < previous_length ? length : previous_length;
            while (common < limit && bytes[common] == previous[common]) common++;
        }
        for (int64_t d = common + 1; d <= length; d++) { /* the new nodes, in preorder */
            parent[nodes] = path[d - 1];
            node_byte[nodes] = bytes[d - 1];
            path[d] = (int32_t)nodes++;
        }
        tok_node[k] = path[length];
        previous = bytes;
        previous_length = length;
    }
    self = (TrieObject *)TrieType.tp_alloc(&TrieType, 0);
    if (self == NULL) goto done;
    self->vocab_size = vocab_size;
    self->edge_start = new_bytes(4 * (nodes + 1));
    self->edge_byte = new_bytes(nodes - 1);
    self->edge_child = new_bytes(4 * (nodes - 1));
    self->tok_start = new_bytes(4 * (nodes + 1));
    self->tok_ids = new_bytes(4 * kept);
    self->subtree_end = new_bytes(4 * nodes);
    if (!self->edge_start || !self->edge_byte || !self->edge_child || !self->tok_start || !self->tok_ids ||
        !self->subtree_end)
        goto done;
    int32_t *es = (int32_t *)PyBytes_AS_STRING(self->edge_start);
    uint8_t *eb = (uint8_t *)PyBytes_AS_STRING(self->edge_byte);
    int32_t *ec = (int32_t *)PyBytes_AS_STRING(self->edge_child);
    int32_t *ts = (int32_t *)PyBytes_AS_STRING(self->tok_start);
    int32_t *ti = (int32_t *)PyBytes_AS_STRING(self->tok_ids);
    int32_t *se = (int32_t *)PyBytes_AS_STRING(self->subtree_end);
    memset(es, 0, 4 * (size_t)(nodes + 1));
    memset(ts, 0, 4 * (size_t)(nodes + 1));
    for (Py_ssize_t n = 1; n < nodes; n++) es[parent[n] + 1]++;
    for (Py_ssize_t n = 0; n < nodes; n++) es[n + 1] += es[n];
    /* children are made in byte order per parent: fill each parent's edges in creation order */
    int32_t *fill = malloc(sizeof(int32_t) * (size_t)nodes);
    if (fill == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(fill, es, sizeof(int32_t) * (size_t)nodes);
    for (Py_ssize_t n = 1; n < nodes; n++) {
        int32_t e = fill[parent[n]]++;
        eb[e] = node_byte[n];
        ec[e] = (int32_t)n;
    }
    free(fill);
    for (Py_ssize_t k = 0; k < kept; k++) {
        ts[tok_node[k] + 1]++;
        ti[k] = order[k];
    }
    for (Py_ssize_t n = 0; n < nodes; n++) ts[n + 1] += ts[n];
    for (Py_ssize_t n = 0; n < nodes; n++) se[n] = (int32_t)(n + 1);
    for (Py_ssize_t n = nodes - 1; n > 0; n--)
        if (se[n] > se[parent[n]]) se[parent[n]] = se[n];
    /* validated too: cheap next to the build, and it keeps one definition of "valid" */
    if (Trie_validate(self) < 0 || Trie_summarize(self) < 0) goto done;
    result = (PyObject *)self;
    self = NULL;
done:
    Py_XDECREF(self);
    free(order);
    free(path);
    free(parent);
    free(node_byte);
    free(tok_node);
    PyBuffer_Release(&blob);
    PyBuffer_Release(&offs);
    return result;
}

/* One key of a node of the dict trie, ordered by the smallest token id that uses it. */
typedef struct {
    int32_t first; /* the smallest token id below the key (for the ids entry: ending at the node) */
    int32_t key;   /* a byte, or -1 for the node's own ids */
    int32_t child; /* the child node (for a byte) */
} DictKey;

/* Trie.as_dicts(): the same trie as dicts, exactly as inserting every token in id order builds it (trie.py):
   a node is ``{byte: child, -1: ids}``, its keys in the order they were first used; a node with one token
   and no children is that token's bare id; several ids of the same bytes are a tuple in id order. Built
   from the leaves up, so each node's children exist when the node is made; the dicts and tuples are not
   tracked by the cycle collector. */
static PyObject *Trie_as_dicts(TrieObject *self, PyObject *Py_UNUSED(ignored)) {
    const int32_t *es = i32(self->edge_start), *ec = i32(self->edge_child), *ts = i32(self->tok_start),
                  *ti = i32(self->tok_ids);
    const uint8_t *eb = (const uint8_t *)PyBytes_AS_STRING(self->edge_byte);
    Py_ssize_t nodes = self->nodes;
    PyObject **made = calloc((size_t)nodes, sizeof(PyObject *));
    int32_t *first = malloc(sizeof(int32_t) * (size_t)nodes);
    DictKey *keys = malloc(sizeof(DictKey) * 257);
    PyObject *small[256] = {NULL};
    PyObject *ids_key = PyLong_FromLong(-1);
    PyObject *result = NULL;
    if (!made || !first || !keys || !ids_key) {
        PyErr_NoMemory();
        goto done;
    }
    for (int b = 0; b < 256; b++)
        if (!(small[b] = PyLong_FromLong(b))) goto done;
    for (Py_ssize_t n = nodes - 1; n >= 0; n--) {
        int32_t lo = ts[n], hi = ts[n + 1], count = 0;
        int32_t least = INT32_MAX;
        if (hi > lo) { /* ids ascend within a node (the tokens were sorted by bytes, then id) */
            keys[count++] = (DictKey){ti[lo], -1, -1};
            least = ti[lo];
        }
        for (int32_t e = es[n]; e < es[n + 1]; e++) {
            int32_t child = ec[e];
            keys[count++] = (DictKey){first[child], eb[e], child};
            if (first[child] < least) least = first[child];
        }
        first[n] = least;
        if (n > 0 && count == 1 && hi - lo == 1) { /* a leaf: its bare id */
            if (!(made[n] = PyLong_FromLong(ti[lo]))) goto done;
            continue;
        }
        for (int32_t i = 1; i < count; i++) { /* insertion sort: a node has few keys */
            DictKey k = keys[i];
            int32_t j = i - 1;
            while (j >= 0 && keys[j].first > k.first) keys[j + 1] = keys[j], j--;
            keys[j + 1] = k;
        }
        PyObject *node = PyDict_New();
        if (!node) goto done;
        made[n] = node;
        for (int32_t i = 0; i < count; i++) {
            PyObject *value;
            int failed;
            if (keys[i].key >= 0) {
                failed = PyDict_SetItem(node, small[keys[i].key], made[keys[i].child]);
            } else {
                if (hi - lo == 1) {
                    value = PyLong_FromLong(ti[lo]);
                } else {
                    value = PyTuple_New(hi - lo);
                    for (int32_t k = lo; value && k < hi; k++) {
                        PyObject *id = PyLong_FromLong(ti[k]);
                        if (!id) Py_CLEAR(value);
                        else PyTuple_SET_ITEM(value, k - lo, id);
                    }
                    if (value) PyObject_GC_UnTrack(value); /* ints only: no cycle through it */
                }
                if (!value) goto done;
                failed = PyDict_SetItem(node, ids_key, value);
                Py_DECREF(value);
            }
            if (failed) goto done;
        }
        for (int32_t i = 0; i < count; i++) /* the node holds its children now */
            if (keys[i].key >= 0) Py_CLEAR(made[keys[i].child]);
        /* Its values are ints, int tuples and nodes like it, so no cycle runs through it: out of the cycle
           collector's sight (as CPython leaves a dict of atomic values), so that the ~190,000 dicts of a
           128k vocabulary cost no collection anything. A later insert of a container tracks it again. */
        PyObject_GC_UnTrack(node);
    }
    result = made[0];
    made[0] = NULL;
done:
    if (made)
        for (Py_ssize_t n = 0; n < nodes; n++) Py_XDECREF(made[n]);
    for (int b = 0; b < 256; b++) Py_XDECREF(small[b]);
    Py_XDECREF(ids_key);
    free(made);
    free(first);
    free(keys);
    return result;
}

static PyObject *Trie_get_array(TrieObject *self, void *which) {
    PyObject *value = *(PyObject **)((char *)self + (Py_ssize_t)which);
    Py_INCREF(value);
    return value;
}

#define TRIE_ARRAY(name, doc) \
    {#name, (getter)Trie_get_array, NULL, doc, (void *)offsetof(TrieObject, name)}
static PyGetSetDef Trie_getset[] = {
    TRIE_ARRAY(edge_start, "int32[nodes + 1]: node n's edges are edge_start[n]:edge_start[n + 1]"),
    TRIE_ARRAY(edge_byte, "uint8[edges]: each edge's byte, sorted per node"),
    TRIE_ARRAY(edge_child, "int32[edges]: each edge's child node"),
    TRIE_ARRAY(tok_start, "int32[nodes + 1]: node n's tokens are tok_ids[tok_start[n]:tok_start[n + 1]]"),
    TRIE_ARRAY(tok_ids, "int32[tokens]: token ids in preorder of their nodes"),
    TRIE_ARRAY(subtree_end, "int32[nodes]: node n's subtree is the nodes n:subtree_end[n]"),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef Trie_members[] = {
    {"nodes", T_PYSSIZET, offsetof(TrieObject, nodes), READONLY, "number of nodes (the root is 0)"},
    {"vocab_size", T_PYSSIZET, offsetof(TrieObject, vocab_size), READONLY, "token ids are below this"},
    {"max_depth", T_PYSSIZET, offsetof(TrieObject, max_depth), READONLY, "the deepest node's depth"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef Trie_methods[] = {
    {"from_tokens", (PyCFunction)Trie_from_tokens, METH_VARARGS | METH_CLASS,
     "from_tokens(blob, offsets, vocab_size): the trie of the tokens blob[offsets[i]:offsets[i+1]] (int64)"},
    {"as_dicts", (PyCFunction)Trie_as_dicts, METH_NOARGS,
     "as_dicts(): the same trie as the dicts of trie.py, as inserting the tokens in id order builds them"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TrieType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "formatenforcer.core._native.Trie",
    .tp_basicsize = sizeof(TrieObject),
    .tp_dealloc = (destructor)Trie_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A vocabulary byte trie as flat, validated, immutable arrays (see the module notes).",
    .tp_new = Trie_new,
    .tp_getset = Trie_getset,
    .tp_members = Trie_members,
    .tp_methods = Trie_methods,
};

/* ------------------------------------------------------------------------------------------------ */
/* Automaton                                                                                        */

typedef struct {
    PyObject_HEAD
    PyObject *class_lo, *class_hi, *class_id; /* int32[intervals]: sorted, disjoint code-point intervals */
    PyObject *transitions;                    /* int32[states * classes], -1: refused */
    PyObject *accepting;                      /* uint8[states] */
    PyObject *allow_start, *allow_lo, *allow_hi; /* per state, the sorted intervals of its characters */
    Py_ssize_t states, classes, intervals;
    int32_t ascii_class[128];
    /* per state, a uniform run (Automaton_runs): any string of at most run_length characters of the run's
       class is accepted from the state; the class as its ASCII bytes (two 64-bit halves) and whether it
       holds every non-ASCII character. run_length 0: no run. */
    uint64_t *run_ascii;
    uint8_t *run_non_ascii;
    int32_t *run_length;
    uint8_t *run_terminal; /* 1: past run_length characters of the class, none is accepted */
    int32_t *run_last;     /* where run_terminal: the state the run ends in */
    uint64_t *class_ascii; /* per class, its ASCII characters (two 64-bit halves) */
    uint64_t *first_bytes; /* per state, the lead bytes of its allowed characters' UTF-8 (four 64-bit words) */
} AutomatonObject;

#define RUN_CAP 1024 /* runs are followed this far at most: longer than any token */

static void Automaton_dealloc(AutomatonObject *self) {
    Py_XDECREF(self->class_lo);
    Py_XDECREF(self->class_hi);
    Py_XDECREF(self->class_id);
    Py_XDECREF(self->transitions);
    Py_XDECREF(self->accepting);
    Py_XDECREF(self->allow_start);
    Py_XDECREF(self->allow_lo);
    Py_XDECREF(self->allow_hi);
    free(self->run_ascii);
    free(self->run_non_ascii);
    free(self->run_length);
    free(self->run_terminal);
    free(self->run_last);
    free(self->class_ascii);
    free(self->first_bytes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int32_t class_of(const AutomatonObject *a, int32_t cp) {
    if (cp < 128) return a->ascii_class[cp];
    const int32_t *lo = i32(a->class_lo), *hi = i32(a->class_hi);
    Py_ssize_t left = 0, right = a->intervals; /* the last interval with lo <= cp */
    while (left < right) {
        Py_ssize_t mid = left + (right - left) / 2;
        if (lo[mid] <= cp) left = mid + 1;
        else right = mid;
    }
    if (left == 0 || hi[left - 1] < cp) return -1;
    return i32(a->class_id)[left - 1];
}

static int check_intervals(const int32_t *lo, const int32_t *hi, Py_ssize_t from, Py_ssize_t to, const char *name) {
    for (Py_ssize_t i = from; i < to; i++) {
        if (lo[i] < 0 || hi[i] > MAX_CODE_POINT || lo[i] > hi[i] || (i > from && lo[i] <= hi[i - 1])) {
            PyErr_Format(PyExc_ValueError, "%s: interval %zd is empty, out of range or not after the one before",
                         name, i);
            return -1;
        }
    }
    return 0;
}

/* Per state, the largest group of classes that all lead to one state (by ASCII characters, a class with
   non-ASCII characters counting more), and how many characters of that group in a row are accepted for sure:
   one, then one more for each state along the way from which every class of the group leads on to one same
   state (unbounded, capped at RUN_CAP, when that comes back to a state seen), plus one where they lead on
   but to different states. Exact by construction; used to take whole subtrees of the trie at once. */
static int Automaton_runs(AutomatonObject *a) {
    Py_ssize_t S = a->states, C = a->classes;
    const int32_t *tr = i32(a->transitions), *lo = i32(a->class_lo), *hi = i32(a->class_hi), *id = i32(a->class_id);
    a->run_ascii = calloc(2 * (size_t)S, sizeof(uint64_t));
    a->run_non_ascii = calloc((size_t)S, 1);
    a->run_length = calloc((size_t)S, sizeof(int32_t));
    a->run_terminal = calloc((size_t)S, 1);
    a->run_last = calloc((size_t)S, sizeof(int32_t));
    uint64_t *class_ascii = a->class_ascii = calloc(2 * (size_t)C, sizeof(uint64_t));
    int64_t *weight = calloc((size_t)C, sizeof(int64_t)), *group = calloc((size_t)S, sizeof(int64_t));
    uint8_t *in_group = calloc((size_t)C, 1);
    int32_t *seen = malloc(sizeof(int32_t) * (size_t)S);
    if (!a->run_ascii || !a->run_non_ascii || !a->run_length || !a->run_terminal || !a->run_last || !class_ascii ||
        !weight || !group || !in_group || !seen) {
        free(weight), free(group), free(in_group), free(seen);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < a->intervals; i++) {
        if (id[i] < 0) continue;
        for (int32_t cp = lo[i]; cp <= hi[i] && cp < 128; cp++) {
            class_ascii[2 * id[i] + (cp >> 6)] |= (uint64_t)1 << (cp & 63);
            weight[id[i]]++;
        }
        if (hi[i] >= 128) weight[id[i]] += 256;
    }
    for (Py_ssize_t s = 0; s < S; s++) seen[s] = -1;
    for (Py_ssize_t t = 0; t < S; t++) {
        const int32_t *row = tr + t * C;
        int32_t best = -1;
        for (Py_ssize_t c = 0; c < C; c++)
            if (row[c] >= 0) group[row[c]] = 0;
        for (Py_ssize_t c = 0; c < C; c++) {
            if (row[c] < 0) continue;
            group[row[c]] += weight[c];
            if (best < 0 || group[row[c]] > group[best] || (group[row[c]] == group[best] && row[c] == t)) best = row[c];
        }
        if (best < 0) continue;
        for (Py_ssize_t c = 0; c < C; c++) {
            in_group[c] = row[c] == best;
            if (in_group[c]) {
                a->run_ascii[2 * t] |= class_ascii[2 * c];
                a->run_ascii[2 * t + 1] |= class_ascii[2 * c + 1];
            }
        }
        /* every non-ASCII character (surrogates aside) in the group's classes? */
        int64_t covered = 0x80;
        for (Py_ssize_t i = 0; i < a->intervals && covered <= MAX_CODE_POINT; i++) {
            if (covered >= 0xD800 && covered <= 0xDFFF) covered = 0xE000;
            if (hi[i] < covered || id[i] < 0 || !in_group[id[i]]) continue;
            if (lo[i] > covered) break;
            covered = (int64_t)hi[i] + 1;
        }
        if (covered >= 0xD800 && covered <= 0xDFFF) covered = 0xE000;
        a->run_non_ascii[t] = covered > MAX_CODE_POINT;
        int32_t length = 1, current = best;
        seen[t] = (int32_t)t;
        seen[best] = (int32_t)t;
        while (length < RUN_CAP) {
            int32_t next = -2; /* -2: none yet; -3: several */
            int refused = 0;
            for (Py_ssize_t c = 0; c < C; c++) {
                if (!in_group[c]) continue;
                int32_t to = tr[current * C + c];
                if (to < 0) refused = 1;
                else if (next == -2) next = to;
                else if (next != to) next = -3;
            }
            if (next == -2) { /* every class of the group refused: the run ends exactly here */
                a->run_terminal[t] = 1;
                a->run_last[t] = current;
                break;
            }
            if (refused) break;
            length++;
            if (next == -3) break;
            if (seen[next] == t) { /* a cycle: as long as wanted */
                length = RUN_CAP;
                break;
            }
            seen[next] = (int32_t)t;
            current = next;
        }
        a->run_length[t] = length;
    }
    free(weight), free(group), free(in_group), free(seen);
    return 0;
}

/* Sets allow_start/allow_lo/allow_hi from the checked class intervals and transitions: per state, the
   class intervals whose class it does not refuse, adjacent ones merged (the sorted, disjoint intervals a
   CharSet of those characters holds). Returns -1 with an exception set when memory runs out. */
typedef struct {
    int32_t *lo, *hi;
    Py_ssize_t used, cap;
} Pieces;

/* Appends [a, b] to the intervals of the state that starts at ``first``, merged with the last one where
   they touch. Returns -1 when memory runs out. */
static int add_piece(Pieces *p, Py_ssize_t first, int32_t a, int32_t b) {
    if (p->used > first && p->hi[p->used - 1] + 1 == a) {
        p->hi[p->used - 1] = b;
        return 0;
    }
    if (p->used == p->cap) {
        p->cap *= 2;
        int32_t *lo = realloc(p->lo, sizeof(int32_t) * (size_t)p->cap);
        if (lo == NULL) return -1;
        p->lo = lo;
        int32_t *hi = realloc(p->hi, sizeof(int32_t) * (size_t)p->cap);
        if (hi == NULL) return -1;
        p->hi = hi;
    }
    p->lo[p->used] = a, p->hi[p->used] = b;
    p->used++;
    return 0;
}

/* Sets allow_start/allow_lo/allow_hi from the checked class intervals and transitions: per state, the
   class intervals whose class it does not refuse, without the surrogates (no character is one), adjacent
   ones merged: the sorted, disjoint intervals ``CompiledRegex.charset`` holds. Returns -1 with an exception
   set when memory runs out. */
static int allowed_from_transitions(AutomatonObject *self) {
    Py_ssize_t states = self->states, classes = self->classes, n = self->intervals;
    const int32_t *lo = i32(self->class_lo), *hi = i32(self->class_hi), *id = i32(self->class_id);
    const int32_t *tr = i32(self->transitions);
    Pieces p = {malloc(sizeof(int32_t) * (size_t)(n + 1)), malloc(sizeof(int32_t) * (size_t)(n + 1)), 0, n + 1};
    int32_t *start = malloc(sizeof(int32_t) * (size_t)(states + 1));
    if (start == NULL || p.lo == NULL || p.hi == NULL) goto oom;
    for (Py_ssize_t st = 0; st < states; st++) {
        start[st] = (int32_t)p.used;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (id[i] < 0 || tr[st * classes + id[i]] < 0) continue;
            if (lo[i] <= 0xD7FF && add_piece(&p, start[st], lo[i], hi[i] < 0xD7FF ? hi[i] : 0xD7FF) < 0) goto oom;
            if (hi[i] >= 0xE000 && add_piece(&p, start[st], lo[i] > 0xE000 ? lo[i] : 0xE000, hi[i]) < 0) goto oom;
        }
    }
    start[states] = (int32_t)p.used;
    self->allow_start = PyBytes_FromStringAndSize((const char *)start, sizeof(int32_t) * (states + 1));
    self->allow_lo = PyBytes_FromStringAndSize((const char *)p.lo, sizeof(int32_t) * p.used);
    self->allow_hi = PyBytes_FromStringAndSize((const char *)p.hi, sizeof(int32_t) * p.used);
    free(start), free(p.lo), free(p.hi);
    return self->allow_start && self->allow_lo && self->allow_hi ? 0 : -1;
oom:
    free(start), free(p.lo), free(p.hi);
    PyErr_NoMemory();
    return -1;
}

/* The lead byte of the UTF-8 encoding of ``cp`` (increasing with ``cp``). */
static inline int utf8_lead(int64_t cp) {
    return cp < 0x80 ? (int)cp : cp < 0x800 ? 0xC0 | (int)(cp >> 6) : cp < 0x10000 ? 0xE0 | (int)(cp >> 12) : 0xF0 | (int)(cp >> 18);
}

/* Per state, the lead bytes of the UTF-8 encodings of its allowed characters (first_bytes; a superset where
   an interval spans several lengths): a trie walk passes over the edges of other bytes without stepping. */
static int Automaton_first_bytes(AutomatonObject *a) {
    a->first_bytes = calloc(4 * (size_t)a->states, sizeof(uint64_t));
    if (a->first_bytes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    const int32_t *as = i32(a->allow_start), *lo = i32(a->allow_lo), *hi = i32(a->allow_hi);
    for (Py_ssize_t state = 0; state < a->states; state++) {
        uint64_t *set = a->first_bytes + 4 * state;
        for (int32_t k = as[state]; k < as[state + 1]; k++) {
            int first = utf8_lead(lo[k]), last = utf8_lead(hi[k]);
            for (int word = first >> 6; word <= last >> 6; word++) {
                int x = word == first >> 6 ? first & 63 : 0, y = word == last >> 6 ? last & 63 : 63;
                set[word] |= (y == 63 ? ~(uint64_t)0 : ((uint64_t)1 << (y + 1)) - 1) & ~(((uint64_t)1 << x) - 1);
            }
        }
    }
    return 0;
}

static PyObject *Automaton_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"class_lo", "class_hi", "class_id", "transitions", "accepting", "allow_start",
                             "allow_lo", "allow_hi", "classes", NULL};
    PyObject *a[8];
    Py_ssize_t classes;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOOOn", kwlist, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5],
                                     &a[6], &a[7], &classes))
        return NULL;
    AutomatonObject *self = (AutomatonObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    if (!(self->class_lo = as_bytes(a[0], 4, "class_lo")) || !(self->class_hi = as_bytes(a[1], 4, "class_hi")) ||
        !(self->class_id = as_bytes(a[2], 4, "class_id")) ||
        !(self->transitions = as_bytes(a[3], 4, "transitions")) ||
        !(self->accepting = as_bytes(a[4], 1, "accepting")))
        goto fail;
    if (a[5] == Py_None && a[6] == Py_None && a[7] == Py_None) {
        /* each state's allowed characters from its transitions: the classes it does not refuse (below, once
           the arrays are checked) */
        self->allow_start = NULL;
    } else if (!(self->allow_start = as_bytes(a[5], 4, "allow_start")) ||
               !(self->allow_lo = as_bytes(a[6], 4, "allow_lo")) || !(self->allow_hi = as_bytes(a[7], 4, "allow_hi"))) {
        goto fail;
    }
    self->states = PyBytes_GET_SIZE(self->accepting);
    self->classes = classes;
    self->intervals = n32(self->class_lo);
    if (self->states < 1 || classes < 1 || classes > INT32_MAX || self->states > INT32_MAX ||
        self->states > PY_SSIZE_T_MAX / classes) {
        PyErr_SetString(PyExc_ValueError, "automaton: needs at least one state and one class");
        goto fail;
    }
    if (n32(self->class_hi) != self->intervals || n32(self->class_id) != self->intervals) {
        PyErr_SetString(PyExc_ValueError, "automaton: class_lo, class_hi and class_id differ in length");
        goto fail;
    }
    if (n32(self->transitions) != self->states * classes) {
        PyErr_Format(PyExc_ValueError, "automaton: %zd transitions, expected states x classes = %zd",
                     n32(self->transitions), self->states * classes);
        goto fail;
    }
    if (check_intervals(i32(self->class_lo), i32(self->class_hi), 0, self->intervals, "class intervals") < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < self->intervals; i++) {
        int32_t c = i32(self->class_id)[i];
        if (c < -1 || c >= classes) {
            PyErr_Format(PyExc_ValueError, "automaton: class id %d of interval %zd is outside [-1, %zd)", c, i,
                         classes);
            goto fail;
        }
    }
    const int32_t *tr = i32(self->transitions);
    for (Py_ssize_t i = 0; i < self->states * classes; i++) {
        if (tr[i] < -1 || tr[i] >= self->states) {
            PyErr_Format(PyExc_ValueError, "automaton: transition %zd leads to %d, outside [-1, %zd)", i, tr[i],
                         self->states);
            goto fail;
        }
    }
    if (self->allow_start == NULL && allowed_from_transitions(self) < 0) goto fail;
    Py_ssize_t allowed = n32(self->allow_lo);
    if (n32(self->allow_hi) != allowed) {
        PyErr_SetString(PyExc_ValueError, "automaton: allow_lo and allow_hi differ in length");
        goto fail;
    }
    const int32_t *as = i32(self->allow_start);
    if (check_offsets(as, n32(self->allow_start), self->states, allowed, "automaton allow_start") < 0) goto fail;
    for (Py_ssize_t s = 0; s < self->states; s++)
        if (check_intervals(i32(self->allow_lo), i32(self->allow_hi), as[s], as[s + 1], "allowed intervals") < 0)
            goto fail;
    const int32_t *lo = i32(self->class_lo), *hi = i32(self->class_hi);
    for (int32_t cp = 0; cp < 128; cp++) { /* class_of reads this table below 128 */
        self->ascii_class[cp] = -1;
        for (Py_ssize_t i = 0; i < self->intervals && lo[i] <= cp; i++)
            if (cp <= hi[i]) self->ascii_class[cp] = i32(self->class_id)[i];
    }
    if (Automaton_runs(self) < 0 || Automaton_first_bytes(self) < 0) goto fail;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyMemberDef Automaton_members[] = {
    {"states", T_PYSSIZET, offsetof(AutomatonObject, states), READONLY, "number of states"},
    {"classes", T_PYSSIZET, offsetof(AutomatonObject, classes), READONLY, "number of character classes"},
    {"allow_start", T_OBJECT_EX, offsetof(AutomatonObject, allow_start), READONLY,
     "int32 offsets: state s allows the intervals allow_start[s]:allow_start[s + 1]"},
    {"allow_lo", T_OBJECT_EX, offsetof(AutomatonObject, allow_lo), READONLY, "int32 interval starts"},
    {"allow_hi", T_OBJECT_EX, offsetof(AutomatonObject, allow_hi), READONLY, "int32 interval ends"},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *Automaton_step(AutomatonObject *self, PyObject *args) {
    Py_ssize_t state, cp;
    if (!PyArg_ParseTuple(args, "nn", &state, &cp)) return NULL;
    if (state < 0 || state >= self->states || cp < 0 || cp > MAX_CODE_POINT) {
        PyErr_SetString(PyExc_ValueError, "step: state or code point out of range");
        return NULL;
    }
    int32_t c = class_of(self, (int32_t)cp);
    return PyLong_FromLong(c < 0 ? -1 : i32(self->transitions)[state * self->classes + c]);
}

static PyObject *Automaton_wide_run(AutomatonObject *self, PyObject *arg) {
    Py_ssize_t state = PyLong_AsSsize_t(arg);
    if (state == -1 && PyErr_Occurred()) return NULL;
    if (state < 0 || state >= self->states) {
        PyErr_SetString(PyExc_ValueError, "wide_run: state out of range");
        return NULL;
    }
    return PyBool_FromLong(self->run_length[state] > 0 && self->run_non_ascii[state]);
}

static PyMethodDef Automaton_methods[] = {
    {"step", (PyCFunction)Automaton_step, METH_VARARGS, "step(state, code_point): the next state, or -1"},
    {"wide_run", (PyCFunction)Automaton_wide_run, METH_O,
     "wide_run(state): whether the state's uniform run holds every non-ASCII character (worth a run's row)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject AutomatonType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "formatenforcer.core._native.Automaton",
    .tp_basicsize = sizeof(AutomatonObject),
    .tp_dealloc = (destructor)Automaton_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A deterministic automaton over characters as validated, immutable arrays (see the module notes).",
    .tp_new = Automaton_new,
    .tp_members = Automaton_members,
    .tp_methods = Automaton_methods,
};

/* ------------------------------------------------------------------------------------------------ */
/* the walk                                                                                         */

#define STOP_CHECKED 2 /* walk_lexeme: a lexeme end whose tokens the caller decides */
#define STOP_GOES_ON 3 /* walk_lexeme_below: the lexeme may end here and may also read on */

typedef struct {
    int32_t edge, end, state, pending_count;
    uint8_t pending[4];
    uint8_t in_run; /* the node's path from the root is characters of the run's class only (see RunArgs) */
} Frame;

/* A free run from the walk's start state, handed in by Python (walk_mask / walk_lexeme's ``run``): ``mask``
   is the vocabulary's precomputed row of the tokens made of at most ``limit`` characters of the class (any
   count when limit < 0; core/run_tables.py), which the start state accepts, and longer runs it refuses (the
   FreeRun promise). The row is copied into the output, and below a node reached on class characters alone a
   subtree is skipped when its every token the automaton accepts is in the row: its paths hold class
   characters and characters that every state reachable on the class refuses (run_dead), and no token below
   is longer than the limit. */
typedef struct {
    Py_buffer mask;
    uint64_t ascii[2]; /* the class's ASCII characters */
    int non_ascii;     /* 0: no non-ASCII character in the class; 1: some; 2: every one (surrogates aside) */
    int64_t limit;
} RunArgs;

typedef struct {
    const TrieObject *trie;
    const int32_t *es, *ec, *ts, *ti, *se, *tr, *as, *alo, *ahi;
    const uint8_t *eb;
    const AutomatonObject *automaton;
    Py_ssize_t classes;
    uint32_t *out;
    Frame *stack;
    /* lexeme walks (walk_lexeme): states where the lexeme ends, and the end points found (node, state,
       depth in bytes) where tokens go on past such a state */
    const uint8_t *stop;
    const uint8_t *root_only; /* lexeme walks: when set, only the root's edges whose byte is flagged */
    int32_t *ends;
    Py_ssize_t ends_len, ends_cap;
    int32_t base_depth; /* the depth in bytes of the node the walk starts from (for the end points) */
    int failed; /* out of memory while recording ends */
    /* a free run (RunArgs), when ``run``: the bytes a skipped subtree may hold, whether it may hold non-ASCII
       characters, whether a complete non-ASCII character stays in the class, and the longest token taken */
    int run;
    uint64_t run_skip_ascii[2], run_ascii[2];
    int run_skip_non_ascii, run_non_ascii_in;
    int64_t run_limit;
} Walk;

/* Whether some character the state accepts starts with these bytes of an incomplete character: the
   characters sharing a UTF-8 prefix are one code-point interval, tested against the state's sorted
   intervals (CharSet.allows_utf8_prefix). */
static int prefix_allowed(const Walk *w, int32_t state, const uint8_t *prefix, int count) {
    int64_t lo, hi;
    if (!utf8_prefix_interval(prefix, count, &lo, &hi)) return 0;
    int32_t left = w->as[state], right = w->as[state + 1], first = left; /* last interval starting <= hi */
    while (left < right) {
        int32_t mid = left + (right - left) / 2;
        if (w->alo[mid] <= hi) left = mid + 1;
        else right = mid;
    }
    return left > first && w->ahi[left - 1] >= lo;
}

/* Whether the characters of every path below ``node`` (reached on a whole character in ``state``) are in
   the state's run class, from the summaries alone (and no path below is invalid UTF-8). */
static int class_covers(const Walk *w, int32_t node, int32_t state) {
    const TrieObject *t = w->trie;
    const AutomatonObject *a = w->automaton;
    uint8_t flags = t->below_flags[node];
    return a->run_length[state] > 0 && (flags & (NODE_BOUNDARY | BELOW_INVALID)) == NODE_BOUNDARY &&
           !(t->below_ascii[2 * node] & ~a->run_ascii[2 * state]) &&
           !(t->below_ascii[2 * node + 1] & ~a->run_ascii[2 * state + 1]) &&
           (!(flags & BELOW_NON_ASCII) || a->run_non_ascii[state]);
}

/* Below a node whose paths are all in the run class: every token when none is longer than the run, else
   (when nothing of the class goes on past the run) the tokens of at most run_length characters below the
   node, by their lengths. Returns 0 when the subtree must be walked. */
static int take_run(const Walk *w, int32_t node, int32_t state) {
    const TrieObject *t = w->trie;
    int32_t limit = w->automaton->run_length[state];
    /* a run that ends in a stop state: the tokens reaching it are the stop's to decide (a stop state reads
       nothing more, so a run reaches one only as its last state) */
    if (w->stop != NULL && w->automaton->run_terminal[state] && w->stop[w->automaton->run_last[state]]) return 0;
    if (t->below_chars[node] <= limit) {
        for (int32_t k = w->ts[node], end = w->ts[w->se[node]]; k < end; k++) {
            uint32_t id = (uint32_t)w->ti[k];
            w->out[id >> 5] |= (uint32_t)1 << (id & 31);
        }
        return 1;
    }
    if (!w->automaton->run_terminal[state]) return 0;
    limit += t->node_chars[node];
    for (int32_t k = w->ts[node], end = w->ts[w->se[node]]; k < end; k++) {
        if (t->tok_chars[k] > limit) continue;
        uint32_t id = (uint32_t)w->ti[k];
        w->out[id >> 5] |= (uint32_t)1 << (id & 31);
    }
    return 1;
}

/* Sets the bits of the tokens at ``node``. */
static void emit_tokens(const Walk *w, int32_t node) {
    for (int32_t k = w->ts[node]; k < w->ts[node + 1]; k++) {
        uint32_t id = (uint32_t)w->ti[k];
        w->out[id >> 5] |= (uint32_t)1 << (id & 31);
    }
}

/* Appends an end point (node, state, depth) to a lexeme walk's list. */
static void record_end(Walk *w, int32_t node, int32_t state, int32_t depth) {
    if (w->failed) return;
    if (w->ends_len + 3 > w->ends_cap) {
        Py_ssize_t cap = w->ends_cap ? 2 * w->ends_cap : 768;
        int32_t *grown = realloc(w->ends, sizeof(int32_t) * (size_t)cap);
        if (grown == NULL) {
            w->failed = 1;
            return;
        }
        w->ends = grown;
        w->ends_cap = cap;
    }
    w->ends[w->ends_len++] = node;
    w->ends[w->ends_len++] = state;
    w->ends[w->ends_len++] = depth + w->base_depth;
}

/* Whether ``state`` accepts every character whose UTF-8 encoding starts with the byte ``lead`` (true when
   no character does: a continuation byte, a bad lead). */
static int reads_every(const Walk *w, int32_t state, uint8_t lead) {
    int64_t lo, hi;
    if (!utf8_prefix_interval(&lead, 1, &lo, &hi)) return 1;
    if (lo < 0xD800 && hi >= 0xD800 && hi <= 0xDFFF) hi = 0xD7FF; /* (0xED: the surrogates are no characters) */
    int32_t left = w->as[state], right = w->as[state + 1];
    while (left < right) { /* the first interval ending at or after lo */
        int32_t mid = left + (right - left) / 2;
        if (w->ahi[mid] < lo) left = mid + 1;
        else right = mid;
    }
    int64_t need = lo;
    for (int32_t k = left; k < w->as[state + 1] && w->alo[k] <= need; k++) {
        if (w->ahi[k] >= need) need = (int64_t)w->ahi[k] + 1;
        if (need > hi) return 1;
    }
    return 0;
}

/* Whether some edge below ``node`` leaves the automaton in ``state``: an ASCII byte it refuses, or a lead
   byte of characters it does not all accept. Only such edges can go on in a full state other than by this
   lexeme reading on, so only there is a point where the lexeme may end returned (the characters it reads
   can never start the next lexeme where its parser hands it to the walk alone: grammar/parser.py). */
static int leaves(const Walk *w, int32_t node, int32_t state) {
    for (int32_t e = w->es[node]; e < w->es[node + 1]; e++) {
        uint8_t byte = w->eb[e];
        if (byte >= 0x80) {
            if (!reads_every(w, state, byte)) return 1;
            continue;
        }
        int32_t c = w->automaton->ascii_class[byte];
        if (c < 0 || w->tr[(Py_ssize_t)state * w->classes + c] < 0) return 1;
    }
    return 0;
}

/* Below a node reached on run characters alone (the path valid UTF-8 so far, every complete character in the
   class; at a node inside a character only when the class holds every non-ASCII character, so the character
   completes into the class or not at all): whether every token of its subtree that the automaton accepts is
   in the run's row (see RunArgs), so the subtree needs no walk. Tokens with invalid UTF-8 below are in
   neither (the walk refuses them, and the row's texts leave them out). */
static int run_skips(const Walk *w, int32_t node) {
    const TrieObject *t = w->trie;
    uint8_t flags = t->below_flags[node];
    return !(t->below_ascii[2 * node] & ~w->run_skip_ascii[0]) &&
           !(t->below_ascii[2 * node + 1] & ~w->run_skip_ascii[1]) &&
           (!(flags & BELOW_NON_ASCII) || w->run_skip_non_ascii) &&
           (w->run_limit < 0 || (int64_t)t->node_chars[node] + t->below_chars[node] <= w->run_limit);
}

/* Sets up a walk's free run from ``state``: the ASCII bytes refused by every state reachable from it on
   characters of classes that meet the run's class (a superset of the states a run reaches, so the set is
   safe), and whether they all refuse non-ASCII characters (no allowed interval above 0x7F: every lead byte
   is refused). No run (w->run stays 0) when one of those states
   is a stop state (its tokens are decided apart) or memory runs out. */
static void run_dead(Walk *w, const RunArgs *r, int32_t state) {
    const AutomatonObject *a = w->automaton;
    Py_ssize_t S = a->states, C = a->classes;
    const int32_t *lo = i32(a->class_lo), *hi = i32(a->class_hi), *id = i32(a->class_id);
    uint8_t *meets = calloc((size_t)C, 1);
    uint8_t *seen = calloc((size_t)S, 1);
    int32_t *queue = malloc(sizeof(int32_t) * (size_t)S);
    if (!meets || !seen || !queue) goto done;
    for (Py_ssize_t i = 0; i < a->intervals; i++) {
        if (id[i] < 0) continue;
        if (hi[i] >= 0x80 && r->non_ascii) meets[id[i]] = 1;
        for (int32_t cp = lo[i]; cp <= hi[i] && cp < 128 && !meets[id[i]]; cp++)
            if (r->ascii[cp >> 6] >> (cp & 63) & 1) meets[id[i]] = 1;
    }
    uint64_t dead[2] = {~(uint64_t)0, ~(uint64_t)0};
    int dead_non_ascii = 1;
    Py_ssize_t head = 0, tail = 0;
    queue[tail++] = state;
    seen[state] = 1;
    while (head < tail) {
        int32_t s = queue[head++];
        if (w->stop != NULL && w->stop[s]) goto done;
        uint64_t taken[2] = {0, 0};
        for (Py_ssize_t c = 0; c < C; c++) {
            int32_t to = w->tr[(Py_ssize_t)s * C + c];
            if (to < 0) continue;
            taken[0] |= a->class_ascii[2 * c];
            taken[1] |= a->class_ascii[2 * c + 1];
            if (meets[c] && !seen[to]) seen[to] = 1, queue[tail++] = to;
        }
        dead[0] &= ~taken[0];
        dead[1] &= ~taken[1];
        dead_non_ascii &= w->as[s + 1] == w->as[s] || w->ahi[w->as[s + 1] - 1] < 0x80;
    }
    w->run = 1;
    w->run_ascii[0] = r->ascii[0];
    w->run_ascii[1] = r->ascii[1];
    w->run_skip_ascii[0] = r->ascii[0] | dead[0];
    w->run_skip_ascii[1] = r->ascii[1] | dead[1];
    w->run_non_ascii_in = r->non_ascii == 2;
    w->run_skip_non_ascii = r->non_ascii == 2 || dead_non_ascii;
    w->run_limit = r->limit;
done:
    free(meets);
    free(seen);
    free(queue);
}

/* Adds every token below ``node`` that the automaton, in ``state`` with ``pending`` bytes of an incomplete
   character read, accepts as a prefix (the tokens at ``node`` itself are the caller's). */
static void walk_from(const Walk *w, int32_t node, int32_t state, const uint8_t *pending, int pending_count) {
    Frame *stack = w->stack;
    int top = 0;
    stack[0].edge = w->es[node];
    stack[0].end = w->es[node + 1];
    stack[0].state = state;
    stack[0].pending_count = pending_count;
    stack[0].in_run = (uint8_t)(w->run && pending_count == 0);
    memcpy(stack[0].pending, pending, (size_t)pending_count);
    while (top >= 0) {
        Frame *f = &stack[top];
        if (f->edge == f->end) {
            top--;
            continue;
        }
        int32_t e = f->edge++;
        uint8_t byte = w->eb[e];
        if (top == 0 && w->root_only != NULL && !w->root_only[byte]) continue;
        int32_t child = w->ec[e], s = f->state, next;
        uint8_t data[4];
        int count = 0, in_run = f->in_run;
        if (f->pending_count) {
            count = f->pending_count + 1;
            memcpy(data, f->pending, (size_t)f->pending_count);
            data[f->pending_count] = byte;
            if (count == utf8_length(data[0])) {
                int32_t cp = decode(data, count), c;
                if (cp < 0 || (c = class_of(w->automaton, cp)) < 0) continue;
                next = w->tr[(Py_ssize_t)s * w->classes + c];
                if (next < 0) continue;
                count = 0;
                in_run = in_run && w->run_non_ascii_in;
            } else {
                if (byte < 0x80 || byte > 0xBF || !prefix_allowed(w, s, data, count)) continue;
                next = s;
            }
        } else if (byte < 0x80) {
            int32_t c = w->automaton->ascii_class[byte];
            if (c < 0) continue;
            next = w->tr[(Py_ssize_t)s * w->classes + c];
            if (next < 0) continue;
            in_run = in_run && (w->run_ascii[byte >> 6] >> (byte & 63) & 1);
        } else {
            data[0] = byte;
            count = 1;
            if (utf8_length(byte) < 2 || !prefix_allowed(w, s, data, 1)) continue;
            next = s;
        }
        if (w->stop != NULL && w->stop[next] == STOP_GOES_ON) {
            /* the lexeme may end here (after a whole character) and may read on: the point is returned
               where some token goes on with a character it does not read, and the walk goes on below */
            if (count == 0 && w->es[child] < w->es[child + 1] && leaves(w, child, next))
                record_end((Walk *)w, child, next, top + 1);
        } else if (w->stop != NULL && w->stop[next]) { /* the lexeme ends here: what goes on is the caller's */
            if (w->stop[next] == STOP_CHECKED) { /* the caller decides the tokens ending here too */
                record_end((Walk *)w, child, next, top + 1);
                continue;
            }
            emit_tokens(w, child);
            if (w->es[child] < w->es[child + 1]) record_end((Walk *)w, child, next, top + 1);
            continue;
        }
        if (in_run && (count == 0 || w->run_non_ascii_in) && run_skips(w, child)) continue; /* in the row */
        if (count == 0 && class_covers(w, child, next) && take_run(w, child, next)) continue;
        emit_tokens(w, child);
        if (w->es[child] < w->es[child + 1]) {
            Frame *g = &stack[++top];
            g->edge = w->es[child];
            g->end = w->es[child + 1];
            g->state = next;
            g->pending_count = count;
            g->in_run = (uint8_t)in_run;
            memcpy(g->pending, data, (size_t)count);
        }
    }
}

/* Checks a walk's state and output buffer and sets up ``w`` (its stack allocated: free(w->stack) after);
   returns 0 with an exception set when an argument is wrong. ``name`` names the caller in the message. */
static int start_walk(Walk *w, const char *name, TrieObject *trie, AutomatonObject *automaton, Py_ssize_t state,
                      Py_buffer *out) {
    Py_ssize_t words = (trie->vocab_size + 31) / 32;
    if (state < 0 || state >= automaton->states) {
        PyErr_Format(PyExc_ValueError, "%s: state %zd is outside the automaton's %zd states", name, state,
                     automaton->states);
        return 0;
    }
    if (out->len < words * 4 || ((uintptr_t)out->buf % 4) != 0) {
        PyErr_Format(PyExc_ValueError, "%s: the output needs %zd aligned int32 words, it has %zd bytes", name,
                     words, out->len);
        return 0;
    }
    Frame *stack = malloc(sizeof(Frame) * (size_t)(trie->max_depth + 2));
    if (stack == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    *w = (Walk){
        .trie = trie, .se = i32(trie->subtree_end),
        .es = i32(trie->edge_start), .ec = i32(trie->edge_child), .ts = i32(trie->tok_start),
        .ti = i32(trie->tok_ids), .eb = (const uint8_t *)PyBytes_AS_STRING(trie->edge_byte),
        .tr = i32(automaton->transitions), .as = i32(automaton->allow_start), .alo = i32(automaton->allow_lo),
        .ahi = i32(automaton->allow_hi), .automaton = automaton, .classes = automaton->classes,
        .out = (uint32_t *)out->buf, .stack = stack,
    };
    return 1;
}

/* Reads a walk's ``run`` argument, (mask, class_ascii, non_ascii, limit): a read-only int32 row of the
   vocabulary's width, the class's ASCII characters as 16 bytes (two little-endian 64-bit halves), 0/1/2
   (see RunArgs) and the longest run taken (-1: any). Returns 0 with an exception set when it is wrong; on
   success the caller releases r->mask. None: no run (r->mask.buf stays NULL). */
static int parse_run(PyObject *run, const char *name, Py_ssize_t words, RunArgs *r) {
    r->mask.buf = NULL;
    if (run == NULL || run == Py_None) return 1;
    PyObject *mask, *ascii;
    int non_ascii;
    long long limit;
    if (!PyTuple_Check(run) || !PyArg_ParseTuple(run, "OSiL", &mask, &ascii, &non_ascii, &limit)) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: run must be a tuple", name);
        return 0;
    }
    if (PyBytes_GET_SIZE(ascii) != 16 || non_ascii < 0 || non_ascii > 2 || limit < -1) {
        PyErr_Format(PyExc_ValueError, "%s: run needs 16 class bytes, non_ascii 0, 1 or 2 and a limit >= -1", name);
        return 0;
    }
    if (PyObject_GetBuffer(mask, &r->mask, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (r->mask.len != words * 4 || ((uintptr_t)r->mask.buf % 4) != 0) {
        PyErr_Format(PyExc_ValueError, "%s: the run's row needs %zd aligned int32 words, it has %zd bytes", name,
                     words, r->mask.len);
        PyBuffer_Release(&r->mask);
        r->mask.buf = NULL;
        return 0;
    }
    memcpy(r->ascii, PyBytes_AS_STRING(ascii), 16);
    r->non_ascii = non_ascii;
    r->limit = (int64_t)limit;
    return 1;
}

static PyObject *walk_mask(PyObject *module, PyObject *args) {
    TrieObject *trie;
    AutomatonObject *automaton;
    Py_ssize_t state;
    Py_buffer pending, out;
    int at_start;
    PyObject *run = NULL;
    RunArgs r = {0};
    if (!PyArg_ParseTuple(args, "O!O!ny*pw*|O", &TrieType, &trie, &AutomatonType, &automaton, &state, &pending,
                          &at_start, &out, &run))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t words = (trie->vocab_size + 31) / 32;
    Walk w = {0};
    const uint8_t *p = (const uint8_t *)pending.buf;
    if (pending.len > 3 || (pending.len > 0 && utf8_length(p[0]) <= pending.len)) {
        PyErr_SetString(PyExc_ValueError, "walk_mask: pending must be the first bytes of one UTF-8 character");
        goto done;
    }
    if (!parse_run(run, "walk_mask", words, &r)) goto done;
    if (r.mask.buf != NULL && (pending.len > 0 || at_start)) {
        PyErr_SetString(PyExc_ValueError, "walk_mask: a run is taken only from a whole character, not at the start");
        goto done;
    }
    if (!start_walk(&w, "walk_mask", trie, automaton, state, &out)) goto done;
    uint8_t pending_bytes[4];
    int pending_count = (int)pending.len;
    memcpy(pending_bytes, p, (size_t)pending_count);
    Py_BEGIN_ALLOW_THREADS
    if (r.mask.buf != NULL) {
        memcpy(w.out, r.mask.buf, (size_t)words * 4);
        run_dead(&w, &r, (int32_t)state);
        if (!w.run) memset(w.out, 0, (size_t)words * 4);
    } else {
        memset(w.out, 0, (size_t)words * 4);
    }
    walk_from(&w, 0, (int32_t)state, pending_bytes, pending_count);
    if (at_start) {
        /* SentencePiece drops the space of the first token: the tokens below the space, as if it were not
           there (the lone space token included) */
        const uint8_t *eb = w.eb;
        for (int32_t e = w.es[0]; e < w.es[1]; e++) {
            if (eb[e] == 0x20) {
                emit_tokens(&w, w.ec[e]);
                walk_from(&w, w.ec[e], (int32_t)state, pending_bytes, 0);
            }
        }
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    free(w.stack);
    PyBuffer_Release(&pending);
    PyBuffer_Release(&out);
    if (r.mask.buf != NULL) PyBuffer_Release(&r.mask);
    return result;
}

/* walk_lexeme(trie, automaton, state, stop, out, first=None, run=None): the walk of a lexeme from the root. ``stop``
   holds one byte per state: 0 where the walk goes on; 1 where it stops (the lexeme ended, or a state the
   automaton does not follow): the tokens reaching such a state are in the mask and, where tokens go on
   past it, the point is returned; STOP_CHECKED (2) where the lexeme ended and the caller decides the
   tokens ending there as well: every point is returned, none of its tokens is in the mask. A stop state
   reads nothing more (its row refuses every class: the callers' ended and frontier states), so no run
   passes through one. Points are
   int32 triples (node, state, depth in bytes) in a bytes object. ``first``, when given, holds the bytes the
   tokens may start with. */
static PyObject *walk_lexeme(PyObject *module, PyObject *args) {
    TrieObject *trie;
    AutomatonObject *automaton;
    Py_ssize_t state;
    Py_buffer stop, out, first = {0};
    PyObject *first_obj = NULL, *run = NULL;
    RunArgs r = {0};
    if (!PyArg_ParseTuple(args, "O!O!ny*w*|OO", &TrieType, &trie, &AutomatonType, &automaton, &state, &stop, &out,
                          &first_obj, &run))
        return NULL;
    if (first_obj != NULL && first_obj != Py_None && PyObject_GetBuffer(first_obj, &first, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&stop);
        PyBuffer_Release(&out);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t words = (trie->vocab_size + 31) / 32;
    Walk w = {0};
    uint8_t root_only[256] = {0};
    if (stop.len != automaton->states) {
        PyErr_Format(PyExc_ValueError, "walk_lexeme: stop needs one byte per state (%zd), it has %zd",
                     automaton->states, stop.len);
        goto done;
    }
    for (Py_ssize_t i = 0; i < stop.len; i++) {
        if (((const uint8_t *)stop.buf)[i] > STOP_CHECKED) {
            PyErr_Format(PyExc_ValueError, "walk_lexeme: stop byte %zd is not 0, 1 or 2", i);
            goto done;
        }
    }
    if (!parse_run(run, "walk_lexeme", words, &r)) goto done;
    if (r.mask.buf != NULL && first.buf != NULL) {
        PyErr_SetString(PyExc_ValueError, "walk_lexeme: a run is taken over every first byte, not with first");
        goto done;
    }
    if (!start_walk(&w, "walk_lexeme", trie, automaton, state, &out)) goto done;
    w.stop = (const uint8_t *)stop.buf;
    if (first.buf != NULL) {
        for (Py_ssize_t i = 0; i < first.len; i++) root_only[((const uint8_t *)first.buf)[i]] = 1;
        w.root_only = root_only;
    }
    Py_BEGIN_ALLOW_THREADS
    memset(w.out, 0, (size_t)words * 4);
    if (r.mask.buf != NULL && !w.stop[state]) {
        run_dead(&w, &r, (int32_t)state);
        if (w.run) memcpy(w.out, r.mask.buf, (size_t)words * 4);
    }
    uint8_t none[4] = {0};
    if (!w.stop[state]) walk_from(&w, 0, (int32_t)state, none, 0);
    Py_END_ALLOW_THREADS
    if (w.failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize((const char *)w.ends, (Py_ssize_t)sizeof(int32_t) * w.ends_len);
done:
    free(w.stack);
    free(w.ends);
    PyBuffer_Release(&stop);
    PyBuffer_Release(&out);
    if (first.buf != NULL) PyBuffer_Release(&first);
    if (r.mask.buf != NULL) PyBuffer_Release(&r.mask);
    return result;
}

/* walk_lexeme_below(trie, automaton, state, stop, out, points, firsts, first_starts): the walk of a lexeme
   below trie nodes, into one mask. ``points`` holds int32 pairs (node, depth in bytes from the root);
   ``first_starts`` is empty (every edge of each node is walked) or holds one int32 per point and one more:
   the bytes of point i's edges to walk are firsts[first_starts[i]:first_starts[i + 1]]. The tokens at the nodes themselves are left out. ``stop`` as for walk_lexeme, plus STOP_GOES_ON
   (3) where the lexeme may end and read on: the walk goes on below such a state, and returns the point
   (node, state, depth from the root) where some token below goes on with a character the state does not
   read. A run is taken whole only where it cannot end in a stop state. */
static PyObject *walk_lexeme_below(PyObject *module, PyObject *args) {
    TrieObject *trie;
    AutomatonObject *automaton;
    Py_ssize_t state;
    Py_buffer stop, out, points, firsts, first_starts;
    if (!PyArg_ParseTuple(args, "O!O!ny*w*y*y*y*", &TrieType, &trie, &AutomatonType, &automaton, &state, &stop,
                          &out, &points, &firsts, &first_starts))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t words = (trie->vocab_size + 31) / 32;
    Walk w = {0};
    uint8_t root_only[256];
    Py_ssize_t count = points.len / 8;
    const int32_t *pairs = (const int32_t *)points.buf;
    const uint8_t *bytes_of = (const uint8_t *)firsts.buf;
    const int32_t *starts_of = (const int32_t *)first_starts.buf;
    int filtered = first_starts.len != 0;
    if (stop.len != automaton->states) {
        PyErr_Format(PyExc_ValueError, "walk_lexeme_below: stop needs one byte per state (%zd), it has %zd",
                     automaton->states, stop.len);
        goto done;
    }
    for (Py_ssize_t i = 0; i < stop.len; i++) {
        if (((const uint8_t *)stop.buf)[i] > STOP_GOES_ON) {
            PyErr_Format(PyExc_ValueError, "walk_lexeme_below: stop byte %zd is not 0, 1, 2 or 3", i);
            goto done;
        }
    }
    if (points.len % 8 != 0 || ((uintptr_t)points.buf % 4) != 0) {
        PyErr_SetString(PyExc_ValueError, "walk_lexeme_below: points must be aligned int32 pairs (node, depth)");
        goto done;
    }
    if (filtered) {
        if (first_starts.len != 4 * (count + 1) || ((uintptr_t)first_starts.buf % 4) != 0) {
            PyErr_Format(PyExc_ValueError, "walk_lexeme_below: first_starts needs %zd aligned int32, it has %zd bytes",
                         count + 1, first_starts.len);
            goto done;
        }
        for (Py_ssize_t i = 0; i <= count; i++) {
            if (starts_of[i] < 0 || starts_of[i] > firsts.len || (i > 0 && starts_of[i] < starts_of[i - 1])) {
                PyErr_Format(PyExc_ValueError, "walk_lexeme_below: first_starts[%zd] is out of order or range", i);
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (pairs[2 * i] < 0 || pairs[2 * i] >= trie->nodes || pairs[2 * i + 1] < 0 ||
            pairs[2 * i + 1] > trie->max_depth) {
            PyErr_Format(PyExc_ValueError, "walk_lexeme_below: point %zd is outside the trie's %zd nodes or its "
                         "depth outside 0..%zd", i, trie->nodes, trie->max_depth);
            goto done;
        }
    }
    if (!start_walk(&w, "walk_lexeme_below", trie, automaton, state, &out)) goto done;
    w.stop = (const uint8_t *)stop.buf;
    Py_BEGIN_ALLOW_THREADS
    memset(w.out, 0, (size_t)words * 4);
    uint8_t none[4] = {0};
    if (w.stop[state] == 0 || w.stop[state] == STOP_GOES_ON) {
        for (Py_ssize_t i = 0; i < count; i++) {
            if (filtered) {
                memset(root_only, 0, sizeof root_only);
                for (int32_t k = starts_of[i]; k < starts_of[i + 1]; k++) root_only[bytes_of[k]] = 1;
                w.root_only = root_only;
            }
            w.base_depth = pairs[2 * i + 1];
            walk_from(&w, pairs[2 * i], (int32_t)state, none, 0);
        }
    }
    Py_END_ALLOW_THREADS
    if (w.failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize((const char *)w.ends, (Py_ssize_t)sizeof(int32_t) * w.ends_len);
done:
    free(w.stack);
    free(w.ends);
    PyBuffer_Release(&stop);
    PyBuffer_Release(&out);
    PyBuffer_Release(&points);
    PyBuffer_Release(&firsts);
    PyBuffer_Release(&first_starts);
    return result;
}

/* ------------------------------------------------------------------------------------------------ */
/* Token texts: every token decoded once, for the vectorized free-run tables (core/run_tables.py)   */

/* The length of the strict UTF-8 sequence (as Python's codec reads it: no overlong forms, no surrogates,
   nothing past U+10FFFF) at p[0:n], writing its code point; 0 when it is not one. */
static int strict_utf8(const uint8_t *p, Py_ssize_t n, int32_t *cp) {
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    int len = utf8_length(p[0]);
    if (len == 0 || n < len) return 0;
    int32_t value = decode(p, len);
    if (value < 0) return 0;
    *cp = value;
    return len;
}

/* Decodes p[0:n] strictly into out (code points); returns the count, or -1 when it is not valid UTF-8. */
static Py_ssize_t decode_strict(const uint8_t *p, Py_ssize_t n, int32_t *out) {
    Py_ssize_t i = 0, count = 0;
    while (i < n) {
        int len = strict_utf8(p + i, n - i, &out[count]);
        if (len == 0) return -1;
        i += len;
        count++;
    }
    return count;
}

/* decode_tokens(blob, offsets): the arrays of TokenTexts (run_tables.py) for the tokens
   blob[offsets[i]:offsets[i+1]], by the same rules as its Python constructor: a token that decodes whole is
   its characters; otherwise its complete characters plus a trailing incomplete one (the first cut of 1-3
   bytes whose head decodes and whose tail is shorter than its lead byte announces); a token that is empty,
   starts inside a character, or is one complete but invalid character is left out, and one with invalid
   bytes inside is kept as a tail alone (only the byte walk reads it). Returns
   (ids int64, code points int32, lengths int64, tail lengths uint8) as bytes. */
static PyObject *decode_tokens(PyObject *module, PyObject *args) {
    Py_buffer blob, offs;
    if (!PyArg_ParseTuple(args, "y*y*", &blob, &offs)) return NULL;
    PyObject *result = NULL, *ids = NULL, *cps = NULL, *lengths = NULL, *tails = NULL;
    const int64_t *o = (const int64_t *)offs.buf;
    Py_ssize_t count = offs.len / 8 - 1;
    if (offs.len % 8 != 0 || count < 0 || ((uintptr_t)offs.buf % 8) != 0 || (count > 0 && o[0] != 0)) {
        PyErr_SetString(PyExc_ValueError, "decode_tokens: offsets must be aligned int64, from 0, one more than the tokens");
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (o[i + 1] < o[i] || o[i + 1] > blob.len) {
            PyErr_Format(PyExc_ValueError, "decode_tokens: offsets entry %zd is decreasing or past the blob's end",
                         i + 1);
            goto done;
        }
    }
    ids = new_bytes(count * 8);
    cps = new_bytes(blob.len * 4);
    lengths = new_bytes(count * 8);
    tails = new_bytes(count);
    if (!ids || !cps || !lengths || !tails) goto done;
    int64_t *id_out = (int64_t *)PyBytes_AS_STRING(ids), *len_out = (int64_t *)PyBytes_AS_STRING(lengths);
    int32_t *cp_out = (int32_t *)PyBytes_AS_STRING(cps);
    uint8_t *tail_out = (uint8_t *)PyBytes_AS_STRING(tails);
    const uint8_t *data = (const uint8_t *)blob.buf;
    Py_ssize_t kept = 0, total = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        const uint8_t *p = data + o[i];
        Py_ssize_t n = (Py_ssize_t)(o[i + 1] - o[i]);
        if (n == 0) continue;
        Py_ssize_t chars = decode_strict(p, n, cp_out + total);
        int tail = 0;
        if (chars < 0) {
            if (utf8_length(p[0]) == 0) continue;
            chars = -1;
            for (int cut = 1; cut <= 3; cut++) {
                Py_ssize_t head = n > cut ? n - cut : 0;
                Py_ssize_t got = decode_strict(p, head, cp_out + total);
                if (got >= 0 && utf8_length(p[head]) > n - head) {
                    chars = got;
                    tail = (int)(n - head);
                    break;
                }
            }
            if (chars < 0) { /* invalid inside: no characters, the whole token as its tail */
                if (n >= utf8_length(p[0])) continue;
                chars = 0;
                tail = (int)n;
            } else if (chars == 0 && tail == n && n >= utf8_length(p[0])) {
                continue;
            }
        }
        id_out[kept] = i;
        len_out[kept] = chars;
        tail_out[kept] = (uint8_t)tail;
        total += chars;
        kept++;
    }
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&ids, kept * 8) < 0 || _PyBytes_Resize(&cps, total * 4) < 0 ||
        _PyBytes_Resize(&lengths, kept * 8) < 0 || _PyBytes_Resize(&tails, kept) < 0)
        goto done;
    result = PyTuple_Pack(4, ids, cps, lengths, tails);
done:
    Py_XDECREF(ids);
    Py_XDECREF(cps);
    Py_XDECREF(lengths);
    Py_XDECREF(tails);
    PyBuffer_Release(&blob);
    PyBuffer_Release(&offs);
    return result;
}

/* Whether code point cp is in the sorted, disjoint intervals lo[i]..hi[i]. */
static int in_class(const int32_t *lo, const int32_t *hi, Py_ssize_t count, int64_t cp) {
    Py_ssize_t a = 0, b = count;
    while (a < b) { /* the first interval whose hi is >= cp */
        Py_ssize_t mid = (a + b) / 2;
        if (hi[mid] < cp) a = mid + 1;
        else b = mid;
    }
    return a < count && lo[a] <= cp;
}

/* Whether some code point in [a, b] is in the intervals. */
static int class_meets(const int32_t *lo, const int32_t *hi, Py_ssize_t count, int64_t a, int64_t b) {
    Py_ssize_t x = 0, y = count;
    while (x < y) {
        Py_ssize_t mid = (x + y) / 2;
        if (hi[mid] < a) x = mid + 1;
        else y = mid;
    }
    return x < count && lo[x] <= b;
}

/* class_runs(code_points, starts, lengths, tail_lengths, tail_codes, class_lo, class_hi, run_out, whole_out):
   per token row, how many of its leading characters are in the class (int64 run_out), and whether the whole
   token stays in it (uint8 whole_out: every character, and the trailing partial character, if any, can
   still become one of the class: TokenTexts.runs and CharSet.allows_utf8_prefix in run_tables.py). The
   partial character's bytes are packed little-endian in tail_codes (uint32). */
static PyObject *class_runs(PyObject *module, PyObject *args) {
    Py_buffer cps, starts, lengths, tail_len, tail_code, lo, hi, run_out, whole_out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*w*w*", &cps, &starts, &lengths, &tail_len, &tail_code, &lo, &hi,
                          &run_out, &whole_out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = starts.len / 8, cp_count = cps.len / 4, classes = lo.len / 4;
    if (starts.len % 8 || lengths.len != starts.len || tail_len.len != n || tail_code.len != n * 4 ||
        run_out.len != n * 8 || whole_out.len != n || cps.len % 4 || lo.len % 4 || hi.len != lo.len ||
        ((uintptr_t)starts.buf % 8) || ((uintptr_t)lengths.buf % 8) || ((uintptr_t)run_out.buf % 8) ||
        ((uintptr_t)cps.buf % 4) || ((uintptr_t)tail_code.buf % 4) || ((uintptr_t)lo.buf % 4) ||
        ((uintptr_t)hi.buf % 4)) {
        PyErr_SetString(PyExc_ValueError, "class_runs: arrays of mismatched sizes, types or alignment");
        goto done;
    }
    const int64_t *st = starts.buf, *ln = lengths.buf;
    const int32_t *cp = cps.buf, *clo = lo.buf, *chi = hi.buf;
    const uint8_t *tl = tail_len.buf;
    const uint32_t *tc = tail_code.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (st[i] < 0 || ln[i] < 0 || st[i] > cp_count || ln[i] > cp_count - st[i] || tl[i] > 3) {
            PyErr_Format(PyExc_ValueError, "class_runs: row %zd reaches outside the code points", i);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < classes; k++) {
        if (clo[k] > chi[k] || (k > 0 && clo[k] <= chi[k - 1])) {
            PyErr_SetString(PyExc_ValueError, "class_runs: class intervals must be sorted and disjoint");
            goto done;
        }
    }
    int64_t *run = run_out.buf;
    uint8_t *whole = whole_out.buf;
    Py_BEGIN_ALLOW_THREADS
    uint8_t ascii[128];
    for (int c = 0; c < 128; c++) ascii[c] = (uint8_t)in_class(clo, chi, classes, c);
    for (Py_ssize_t i = 0; i < n; i++) {
        const int32_t *text = cp + st[i];
        int64_t count = 0, length = ln[i];
        while (count < length) {
            int32_t c = text[count];
            if (c < 128 ? !ascii[c] : !in_class(clo, chi, classes, c)) break;
            count++;
        }
        run[i] = count;
        int ok = count == length;
        if (ok && tl[i]) {
            uint8_t tail[4];
            for (int k = 0; k < tl[i]; k++) tail[k] = (uint8_t)(tc[i] >> (8 * k));
            int64_t a, b;
            ok = utf8_prefix_interval(tail, tl[i], &a, &b) && class_meets(clo, chi, classes, a, b);
        }
        whole[i] = (uint8_t)ok;
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&cps);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&tail_len);
    PyBuffer_Release(&tail_code);
    PyBuffer_Release(&lo);
    PyBuffer_Release(&hi);
    PyBuffer_Release(&run_out);
    PyBuffer_Release(&whole_out);
    return result;
}

/* Checks that every item of the list ``ids`` is an int inside a row of ``limit`` bits; on failure sets the
   exception (naming ``who`` and the first bad item) and returns -1. */
static int check_ids(PyObject *ids, Py_ssize_t limit, const char *who) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids); i++) {
        PyObject *item = PyList_GET_ITEM(ids, i);
        if (!PyLong_CheckExact(item)) {
            PyErr_Format(PyExc_TypeError, "%s: ids[%zd] is not an int", who, i);
            return -1;
        }
        long long id = PyLong_AsLongLong(item);
        if (id == -1 && PyErr_Occurred()) return -1;
        if (id < 0 || id >= limit) {
            PyErr_Format(PyExc_ValueError, "%s: ids[%zd] = %lld is outside a row of %zd bits", who, i, id, limit);
            return -1;
        }
    }
    return 0;
}

/* Sets the bit of each id of the list ``ids`` (checked by check_ids) in the row ``w``. */
static void set_bits(uint32_t *w, PyObject *ids) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids); i++) {
        long long id = PyLong_AsLongLong(PyList_GET_ITEM(ids, i));
        w[id >> 5] |= (uint32_t)1 << (id & 31);
    }
}

/* spelled_bytes(pieces, table): the bytes each piece spells, for vocabularies that spell every byte as one
   character (byte-level BPE). ``table``: int16, one entry per code point below its length, the byte that
   code point spells or -1. A piece (a str) whose every character is in the table gives those bytes; None,
   or a piece with any other character, gives None (the caller reads those its own way). */
static PyObject *spelled_bytes(PyObject *module, PyObject *args) {
    PyObject *pieces;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &pieces, &table)) return NULL;
    PyObject *out = NULL;
    uint8_t *buffer = NULL;
    if (table.len % 2 != 0 || ((uintptr_t)table.buf % 2) != 0) {
        PyErr_SetString(PyExc_ValueError, "spelled_bytes: the table must be aligned int16");
        goto done;
    }
    const int16_t *map = (const int16_t *)table.buf;
    Py_ssize_t known = table.len / 2, count = PyList_GET_SIZE(pieces), room = 0;
    if (!(out = PyList_New(count))) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *piece = PyList_GET_ITEM(pieces, i), *value = Py_None;
        if (piece != Py_None) {
            if (!PyUnicode_Check(piece)) {
                PyErr_Format(PyExc_TypeError, "spelled_bytes: piece %zd is %.100s, not str or None", i,
                             Py_TYPE(piece)->tp_name);
                goto fail;
            }
            Py_ssize_t length = PyUnicode_GET_LENGTH(piece);
            int kind = PyUnicode_KIND(piece);
            const void *data = PyUnicode_DATA(piece);
            if (length > room) {
                uint8_t *grown = realloc(buffer, (size_t)length);
                if (!grown) {
                    PyErr_NoMemory();
                    goto fail;
                }
                buffer = grown, room = length;
            }
            Py_ssize_t k = 0;
            for (; k < length; k++) {
                Py_UCS4 ch = PyUnicode_READ(kind, data, k);
                if (ch >= (Py_UCS4)known || map[ch] < 0 || map[ch] > 255) break;
                buffer[k] = (uint8_t)map[ch];
            }
            if (k == length && !(value = PyBytes_FromStringAndSize((const char *)buffer, length))) goto fail;
            if (k < length) value = Py_None;
        }
        if (value == Py_None) Py_INCREF(Py_None);
        PyList_SET_ITEM(out, i, value);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    free(buffer);
    PyBuffer_Release(&table);
    return out;
}

/* set_ids(words, ids): sets bit i % 32 of words[i // 32] for each id i of ``ids`` (a list of ints, the ids a
   walk collected). ``words``: a writable, C-contiguous int32 buffer. Every id is checked against the row's
   width before anything is written: ValueError names the first one outside it. */
static PyObject *set_ids(PyObject *module, PyObject *args) {
    PyObject *words_obj, *ids;
    if (!PyArg_ParseTuple(args, "OO!", &words_obj, &PyList_Type, &ids)) return NULL;
    Py_buffer words;
    if (PyObject_GetBuffer(words_obj, &words, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    PyObject *result = NULL;
    if (words.itemsize != 4 || words.len % 4 != 0) {
        PyErr_SetString(PyExc_ValueError, "set_ids: words must be a contiguous int32 buffer");
        goto done;
    }
    if (check_ids(ids, (words.len / 4) * 32, "set_ids") < 0) goto done;
    set_bits((uint32_t *)words.buf, ids);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&words);
    return result;
}

/* or_rows(out, ids, rows): writes into ``out`` the OR of the packed rows ``rows`` (a list of C-contiguous
   int32 buffers, each exactly as wide as ``out``) with the bits of the ids of the list ``ids`` set, and
   returns whether any bit of ``out`` is set. ``out`` is overwritten (it may be uninitialised) and must not
   be one of ``rows``. One call replaces a zeroed row, a pass per OR-ed row and a reduction for the
   emptiness test: the cost of every mask a walk assembles from cached parts. Every id and every row's
   width is checked before anything is written. */
static PyObject *or_rows(PyObject *module, PyObject *args) {
    PyObject *out_obj, *ids, *rows;
    if (!PyArg_ParseTuple(args, "OO!O!", &out_obj, &PyList_Type, &ids, &PyList_Type, &rows)) return NULL;
    Py_buffer out;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n_rows = PyList_GET_SIZE(rows), filled = 0;
    Py_buffer *views = NULL;
    if (out.itemsize != 4 || out.len % 4 != 0) {
        PyErr_SetString(PyExc_ValueError, "or_rows: out must be a contiguous int32 buffer");
        goto done;
    }
    Py_ssize_t words = out.len / 4;
    if (check_ids(ids, words * 32, "or_rows") < 0) goto done;
    views = PyMem_Calloc(n_rows > 0 ? (size_t)n_rows : 1, sizeof(Py_buffer));
    if (views == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; filled < n_rows; filled++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(rows, filled), &views[filled], PyBUF_C_CONTIGUOUS) < 0) goto done;
        Py_buffer *row = &views[filled];
        if (row->itemsize != 4 || row->len != out.len) {
            PyErr_Format(PyExc_ValueError, "or_rows: rows[%zd] is not an int32 row of %zd words", filled, words);
            filled++;
            goto done;
        }
        if (row->buf == out.buf) {
            PyErr_Format(PyExc_ValueError, "or_rows: rows[%zd] is out itself", filled);
            filled++;
            goto done;
        }
    }
    uint32_t *w = (uint32_t *)out.buf;
    if (n_rows == 0) {
        memset(w, 0, (size_t)out.len);
    }
    /* four rows per pass over out (the first pass writes it, the next ones OR into it): a group of fewer
       repeats its first row, which ORs nothing more */
    for (Py_ssize_t r = 0; r < n_rows; r += 4) {
        const uint32_t *a = (const uint32_t *)views[r].buf;
        const uint32_t *b = r + 1 < n_rows ? (const uint32_t *)views[r + 1].buf : a;
        const uint32_t *c = r + 2 < n_rows ? (const uint32_t *)views[r + 2].buf : a;
        const uint32_t *d = r + 3 < n_rows ? (const uint32_t *)views[r + 3].buf : a;
        if (r == 0) {
            for (Py_ssize_t k = 0; k < words; k++) w[k] = a[k] | b[k] | c[k] | d[k];
        } else {
            for (Py_ssize_t k = 0; k < words; k++) w[k] |= a[k] | b[k] | c[k] | d[k];
        }
    }
    set_bits(w, ids);
    uint32_t any = 0;
    for (Py_ssize_t k = 0; k < words && !any; k++) any |= w[k];
    result = PyBool_FromLong(any != 0);
done:
    for (Py_ssize_t r = 0; r < filled; r++) PyBuffer_Release(&views[r]);
    PyMem_Free(views);
    PyBuffer_Release(&out);
    return result;
}

#include "_machine.c" /* the JSON machine (uses the Trie type and the UTF-8 helpers above) */

static PyMethodDef module_methods[] = {
    {"or_rows", or_rows, METH_VARARGS,
     "or_rows(out, ids, rows): writes into the int32 row out the OR of the rows with the ids' bits set; "
     "returns whether any bit is set"},
    {"spelled_bytes", spelled_bytes, METH_VARARGS,
     "spelled_bytes(pieces, table): each piece's bytes through an int16 table (code point -> byte), or None"},
    {"set_ids", set_ids, METH_VARARGS,
     "set_ids(words, ids): sets the bit of each id of the list ids in the packed int32 row words"},
    {"walk_mask", walk_mask, METH_VARARGS,
     "walk_mask(trie, automaton, state, pending, at_start, out, run=None): writes into ``out`` (int32 words) the "
     "packed mask of the tokens the automaton accepts from ``state`` after the ``pending`` bytes of an incomplete "
     "character; with ``at_start``, also the tokens below a leading space, read without it; ``run``: a free "
     "run's precomputed row and class (see RunArgs in the source)."},
    {"walk_lexeme", walk_lexeme, METH_VARARGS,
     "walk_lexeme(trie, automaton, state, stop, out, first=None, run=None): the mask of a lexeme's tokens into ``out`` "
     "and, as int32 triples (node, state, depth), the points where the walk stopped (see the source)."},
    {"walk_lexeme_below", walk_lexeme_below, METH_VARARGS,
     "walk_lexeme_below(trie, automaton, state, stop, out, points, firsts, first_starts): walk_lexeme below trie nodes, with "
     "stop byte 3 for states where the lexeme may end and read on (see the source)."},
    {"decode_tokens", decode_tokens, METH_VARARGS,
     "decode_tokens(blob, offsets): (ids, code points, lengths, tail lengths) of the tokens "
     "blob[offsets[i]:offsets[i+1]] as TokenTexts reads them (see core/run_tables.py)."},
    {"class_runs", class_runs, METH_VARARGS,
     "class_runs(code_points, starts, lengths, tail_lengths, tail_codes, class_lo, class_hi, run_out, whole_out): "
     "per token, its leading characters in the class and whether it stays in the class (see core/run_tables.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native", "The compiled token walk of formatenforcer (see formatenforcer/core).", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&TrieType) < 0 || PyType_Ready(&AutomatonType) < 0 || PyType_Ready(&MachineType) < 0) return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    Py_INCREF(&TrieType);
    Py_INCREF(&AutomatonType);
    Py_INCREF(&MachineType);
    if (PyModule_AddObject(module, "Trie", (PyObject *)&TrieType) < 0 ||
        PyModule_AddObject(module, "Automaton", (PyObject *)&AutomatonType) < 0 ||
        PyModule_AddObject(module, "Machine", (PyObject *)&MachineType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
