/* The JSON machine: a JSON document's syntax as a pushdown automaton in C, over a per-schema program of value
   nodes (jsonschema/machine_program.py builds it from the schema's intermediate form, for the schemas it
   covers). It steps whole characters (``machine_step``), answers whether the document may end and which
   characters may come next, and computes a state's token mask by walking the flat trie with the machine
   (``machine_mask``), so a covered schema needs no Python parser step per token or per mask. The Python
   parsers stay the reference: tests/test_machine.py compares masks and steps with them.

   Included by _native.c (it uses the Trie type and the UTF-8 helpers defined there).

   Program: one int32 array (``code``), validated once by ``Machine(code)``:
     code[0..MH_SIZE)   header (MH_* below)
     code[MH_SIZE + n]  the offset of node n's record, for n < nodes
     code[code[MH_MIN_DEPTHS] + n]  the fewest arrays and objects open at once in a value of node n (finite.py),
                        below ROOM_GUARD: near max_depth, a key, item or value that needs more levels than are
                        left is not offered (as depth_room.py narrows the Python parsers)
     records:
       K_ANY            [K_ANY]
       K_OBJECT         [K_OBJECT, additional (-1: closed), required bits lo, hi, key trie node, names,
                         value node per name...]
       K_ARRAY          [K_ARRAY, items, min items, max items (-1: none), prefix count, prefix nodes...,
                         unique, words]: ``unique`` 0 for any items, else the items are strings (no prefix)
                         and no two may be equal: U_ANY for strings of any text (at least a minimum length),
                         U_WORDS for an enum's words, an automaton (C_AUTOMATON) whose state s has
                         code[words + s] words to accept (capped at 2^30): a character is taken only while a
                         word not seen is left
       K_STRING         [K_STRING, C_ANY or C_LENGTH, min length, max length (-1: none)], or
                        [K_STRING, C_AUTOMATON, automaton index, start state]: the decoded characters
                        follow one of the program's automata (``Machine(code, automata)``), or
                        [K_STRING, C_CAPPED, automaton index, max length, distances, farthest]: an automaton
                        (start state 0) under a maximum length; code[distances + s] the fewest characters
                        from state s to an accepting one, ``farthest`` the largest of them
       K_NUMBER         [K_NUMBER, kind (NUM_*), bounds (1: a minimum, 2: a maximum, 4: the minimum is
                        exclusive, 8: the maximum is), minimum, maximum, minimum's scale, maximum's scale, step,
                        places]:
                        each bound the decimal M·10^scale (|M| < 2^30, |scale| <= SCALE_CAP); an integer's
                        bounds are inclusive 64-bit integers (no 4 or 8), each split in two words: the low 32
                        bits in the bound's word, the high ones in its scale's (``integer_bound``), and its
                        values the multiples of ``step`` (1 <= step < STEP_CAP; other numbers' step is 1);
                        a number under a ``multipleOf`` of step / 10^places (NUM_MULTIPLE) is read as an
                        integer's in units of 10^-places (its bounds too), in plain notation: its text's
                        first ``places`` fraction digits count, later ones must be zeros (places <=
                        PLACES_CAP, the same for every such option of a set; 0 for other kinds); a set of
                        values (NUM_SET, a large number enum: plain notation) is [K_NUMBER, NUM_SET, 0, table,
                        states, 0, 0, 1, 0]: its texts' automaton at the record's offset + ``table``, per
                        state SET_CLASSES next states (-1: none) then per state whether it accepts; a number
                        node has one such option at most, its state in the state's ``n`` (-1: dead)
       K_BOOL           [K_BOOL, 1: true allowed | 2: false allowed]
       K_NULL           [K_NULL]
       K_UNION          [K_UNION, options, option nodes...] (options of different kinds start with distinct
                        characters; several objects, arrays or strings are read all their ways at once,
                        fork_options)
       K_NUMSET         [K_NUMSET, options, a K_NUMBER record per option...]: a number of any of them (the
                        least common multiple of their steps below 2^30)
     key trie nodes     [name index or -1, names at or below: bits lo, hi, edges, (code point, node)...]
                        (edges sorted by code point; a node is an offset into code)

   State: bytes, the header MState then ``frames`` MFrame, the root's frame first, then, when the top frame
   is a uniqueItems array (it is then always on top: its items are strings), its seen items and the item
   being read as decoded code points (the "item words"): each seen item's code points then its length, in
   the order read, ``seen_lo`` words in all (the frame's), then the item being read (``n`` code points).
   Stepping and walking append to one buffer (Ctx.u) above the state's own words: a walk's levels share
   it as they share the trie path, each writing only past the words of the state it came from. That is one
   way. After a character that opens a union of several objects, arrays or strings, a state holds one way
   per option still possible (state_ways): the ways' bytes one after another, each a whole state, equal ways
   kept once, sorted. (A program has uniqueItems arrays or such unions, not both: a state of several ways
   has no item words.) */

#define MH_SIZE 16
enum { MH_MAGIC, MH_NODES, MH_ROOT, MH_ANY, MH_ANY_OBJECT, MH_ANY_ARRAY, MH_ANY_STRING, MH_ANY_NUMBER, MH_WS,
       MH_LEAD, MH_TRAIL, MH_DEPTH, MH_ASCII_ESCAPES, MH_MIN_DEPTHS };
#define ROOM_GUARD 128 /* a program's nodes need fewer levels than this (see fits) */
#define NO_EXTRAS ((uint32_t)1 << 31) /* an object frame's seen_hi bit: its extra keys' values do not fit */
#define M_MAGIC 0x4a534d31 /* "JSM1" */

enum { K_ANY, K_OBJECT, K_ARRAY, K_STRING, K_NUMBER, K_BOOL, K_NULL, K_UNION, K_NUMSET, K_KINDS };
enum { C_ANY, C_LENGTH, C_AUTOMATON, C_CAPPED };
enum { U_NONE, U_ANY, U_WORDS };

/* the lexeme being read above the top frame */
enum { L_NONE, L_STRING, L_NUMBER, L_LITERAL };
/* string phases (strings.py's) */
enum { S_BODY, S_ESCAPE, S_HEX, S_LOW_BACKSLASH, S_LOW_U, S_LOW_HEX };
/* number states */
enum { N_START, N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };
/* frame phases: objects, arrays and the root share AFTER and VALUE */
enum { P_OPEN, P_KEY_DONE, P_COLON, P_VALUE, P_AFTER, P_COMMA, P_KEY, P_BEFORE };

typedef struct {
    int32_t lex, node, phase, cstate, a, b, frames;
    int32_t n; /* a capped automaton string: the characters read (up to its maximum); an item of a
                  uniqueItems array: its code points read (its item words) */
    /* a decimal number under bounds (DecimalFields): its digits as far as the bounds can tell them apart */
    int32_t p_lo, p_hi, digits, fraction, tails, exp_sign, exp_value;
} MState;

typedef struct {
    int32_t node, phase, ws, count;
    uint32_t seen_lo, seen_hi; /* an object's names seen; a uniqueItems array's item words (seen_lo) and
                                  where they start in Ctx.u (seen_hi, 0 in a state's bytes) */
} MFrame;

typedef struct {
    PyObject_HEAD
    PyObject *code; /* bytes, int32 */
    PyObject *automata; /* tuple of Automaton */
    const int32_t *c;
    Py_ssize_t size, nodes;
    int32_t *trie_owner; /* per offset of code: the object node whose key trie has a node there, else -1 */
    int has_unique;      /* some array is a uniqueItems one (then no union is read several ways) */
} MachineObject;

static const char *LITERALS[3] = {"true", "false", "null"};

/* ---- the working state: frames from the original state (read-only, ``base`` of them) plus local ones ---- */

typedef struct {
    MState h;
    int32_t base, local;
    /* a union read as several ways at once (see fork_options): the way this step takes, and the number of
       ways its character opened (1 where it opened no such union) */
    int32_t pick, forks;
} WHead;

typedef struct {
    const int32_t *c;
    PyObject *const *automata; /* the program's Automaton objects */
    const MFrame *orig; /* the frames of the state the walk or step started from */
    int32_t ws_cap, lead_cap, trail_cap, max_depth, ascii_escapes;
    int32_t *u; /* the item words: the state's own, then room for what a step or walk appends */
    Py_ssize_t u_own, u_cap; /* the state's own item words; the buffer's size */
} Ctx;

static inline const int32_t *rec(const Ctx *x, int32_t node) { return x->c + x->c[MH_SIZE + node]; }
static inline int32_t min_depth(const Ctx *x, int32_t node) { return x->c[x->c[MH_MIN_DEPTHS] + node]; }

static inline MFrame *top_frame(const Ctx *x, WHead *w, MFrame *local) {
    (void)x;
    return w->local > 0 ? &local[w->local - 1] : (MFrame *)&x->orig[w->base - 1];
}

/* The top frame, made local so it may change. */
static inline MFrame *own_top(const Ctx *x, WHead *w, MFrame *local) {
    if (w->local == 0) {
        local[0] = x->orig[w->base - 1];
        w->base--;
        w->local = 1;
    }
    return &local[w->local - 1];
}

static inline int32_t depth_of(const WHead *w) { return w->base + w->local; }

static inline void pop_frame(WHead *w) {
    if (w->local > 0) w->local--;
    else w->base--;
}

/* ---- uniqueItems arrays of strings: the item words ---- */

static inline int32_t array_unique(const int32_t *r) { return r[5 + r[4]]; }

/* The uniqueItems kind of the array frame ``f`` (U_NONE for any other frame): a string read with it on top
   is one of its items. */
static inline int32_t frame_unique(const Ctx *x, const MFrame *f) {
    if (f->node < 0) return U_NONE;
    const int32_t *r = rec(x, f->node);
    return r[0] == K_ARRAY ? array_unique(r) : U_NONE;
}

/* Whether the item being read (``n`` code points past the frame's seen items) equals a seen item. */
static int item_seen(const Ctx *x, const MState *s, const MFrame *f) {
    const int32_t *u = x->u + f->seen_hi, *item = u + f->seen_lo;
    for (int64_t p = f->seen_lo; p > 0;) {
        int32_t len = u[p - 1];
        p -= (int64_t)len + 1;
        if (len == s->n && memcmp(u + p, item, sizeof(int32_t) * (size_t)len) == 0) return 1;
    }
    return 0;
}

/* How many seen items start with the item being read followed by ``cp``. */
static int32_t seen_after(const Ctx *x, const MState *s, const MFrame *f, int32_t cp) {
    const int32_t *u = x->u + f->seen_hi, *item = u + f->seen_lo;
    int32_t count = 0;
    for (int64_t p = f->seen_lo; p > 0;) {
        int32_t len = u[p - 1];
        p -= (int64_t)len + 1;
        if (len > s->n && u[p + s->n] == cp && memcmp(u + p, item, sizeof(int32_t) * (size_t)s->n) == 0) count++;
    }
    return count;
}

/* U_WORDS: whether ``cp``, which the item's automaton takes to state ``to``, leaves a word not seen (the
   words below ``to`` outnumber the seen items among them). */
static inline int word_left(const Ctx *x, const MState *s, const MFrame *f, int32_t cp, int32_t to) {
    const int32_t *r = rec(x, f->node);
    return x->c[r[6 + r[4]] + to] > seen_after(x, s, f, cp);
}

/* The character a seen item (``len`` code points at ``p``) goes on with past the item being read, or -1
   where it does not start with it. */
static inline int32_t next_of(const int32_t *u, int64_t p, int32_t len, const int32_t *item, int32_t n) {
    return len > n && memcmp(u + p, item, sizeof(int32_t) * (size_t)n) == 0 ? u[p + n] : -1;
}

/* U_WORDS: whether some character in [lo, hi], all taken by the item's automaton, leaves a word not seen. A
   character with which no seen item goes on leaves every word below it (each state has one), so only the
   characters seen items go on with are counted one by one. */
static int words_left_in(const Ctx *x, const MState *s, const MFrame *f, int64_t lo, int64_t hi) {
    const AutomatonObject *a = (const AutomatonObject *)x->automata[rec(x, s->node)[2]];
    const int32_t *tr = i32(a->transitions), *u = x->u + f->seen_hi, *item = u + f->seen_lo;
    int64_t width = hi - lo + 1, distinct = 0;
    int64_t s_lo = lo > 0xD800 ? lo : 0xD800, s_hi = hi < 0xDFFF ? hi : 0xDFFF;
    if (s_lo <= s_hi) width -= s_hi - s_lo + 1; /* (surrogates are no characters) */
    for (int64_t p = f->seen_lo; p > 0;) {
        int32_t len = u[p - 1];
        p -= (int64_t)len + 1;
        int32_t cp = next_of(u, p, len, item, s->n);
        if (cp < lo || cp > hi) continue;
        int repeat = 0; /* already counted with a later item (the loop goes backwards) */
        for (int64_t q = f->seen_lo; q > p + len + 1 && !repeat;) {
            int32_t other = u[q - 1];
            q -= (int64_t)other + 1;
            repeat = next_of(u, q, other, item, s->n) == cp;
        }
        if (repeat) continue;
        distinct++;
        int32_t k = class_of(a, cp);
        int32_t to = k < 0 ? -1 : tr[(Py_ssize_t)s->cstate * a->classes + k];
        if (to >= 0 && word_left(x, s, f, cp, to)) return 1;
    }
    return width > distinct;
}

/* U_WORDS: the least character in [from, hi] with which some seen item goes on and which leaves no word
   not seen (-1: none); the characters in [from, hi] are all taken by the item's automaton. */
static int64_t next_blocked(const Ctx *x, const MState *s, const MFrame *f, int64_t from, int64_t hi) {
    const AutomatonObject *a = (const AutomatonObject *)x->automata[rec(x, s->node)[2]];
    const int32_t *tr = i32(a->transitions), *u = x->u + f->seen_hi, *item = u + f->seen_lo;
    int64_t best = -1;
    for (int64_t p = f->seen_lo; p > 0;) {
        int32_t len = u[p - 1];
        p -= (int64_t)len + 1;
        int32_t cp = next_of(u, p, len, item, s->n);
        if (cp < from || cp > hi || (best >= 0 && cp >= best)) continue;
        int32_t k = class_of(a, cp);
        int32_t to = k < 0 ? -1 : tr[(Py_ssize_t)s->cstate * a->classes + k];
        if (to >= 0 && word_left(x, s, f, cp, to)) continue;
        best = cp;
    }
    return best;
}

/* ---- string contents ---- */

/* Whether the object frame takes extra keys: its schema allows them and their values fit in its room. */
static inline int takes_extras(const int32_t *r, const MFrame *f) { return r[1] >= 0 && !(f->seen_hi & NO_EXTRAS); }

/* Whether the key trie node's names below intersect the names still available in the object frame. */
static inline int key_viable(const int32_t *t, const MFrame *f) {
    return ((uint32_t)t[1] & ~f->seen_lo) || ((uint32_t)t[2] & ~f->seen_hi);
}

/* The child of key trie node ``at`` on ``cp`` (-1: none). */
static int32_t key_child(const int32_t *c, int32_t at, int32_t cp) {
    const int32_t *t = c + at;
    int32_t left = 0, right = t[3];
    while (left < right) {
        int32_t mid = left + (right - left) / 2;
        int32_t e = t[4 + 2 * mid];
        if (e == cp) return t[5 + 2 * mid];
        if (e < cp) left = mid + 1;
        else right = mid;
    }
    return -1;
}

/* A capped automaton string (C_CAPPED): whether some code point in [lo, hi] leads from the content state to
   one that still reaches an accepting state within the length left; with ``escaped``, the printable ASCII
   characters are left out unless the program lets escapes spell them. */
static int capped_meets(const Ctx *x, const int32_t *r, const MState *s, int64_t lo, int64_t hi, int escaped) {
    const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
    const int32_t *clo = i32(a->class_lo), *chi = i32(a->class_hi), *cid = i32(a->class_id);
    const int32_t *tr = i32(a->transitions), *dist = x->c + r[4];
    int32_t budget = r[3] - s->n - 1;
    Py_ssize_t left = 0, right = a->intervals; /* the first interval ending at or after lo */
    while (left < right) {
        Py_ssize_t mid = left + (right - left) / 2;
        if (chi[mid] < lo) left = mid + 1;
        else right = mid;
    }
    for (Py_ssize_t i = left; i < a->intervals && clo[i] <= hi; i++) {
        if (cid[i] < 0) continue;
        int32_t to = tr[(Py_ssize_t)s->cstate * a->classes + cid[i]];
        if (to < 0 || dist[to] > budget) continue;
        int64_t a_lo = clo[i] > lo ? clo[i] : lo, a_hi = chi[i] < hi ? chi[i] : hi;
        if (escaped && !x->ascii_escapes && a_lo >= 0x20 && a_hi <= 0x7E) continue;
        return 1;
    }
    return 0;
}

/* The object frame a key is read for: the top frame (keys are read with the object frame on top). */

/* Whether the content (of the string or key being read) allows the decoded character ``cp`` next. */
static int content_allows(const Ctx *x, const MState *s, const MFrame *f, int32_t cp) {
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_STRING) {
        if (r[1] == C_ANY) return 1;
        if (r[1] == C_AUTOMATON || r[1] == C_CAPPED) {
            const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
            int32_t k = class_of(a, cp);
            int32_t to = k < 0 ? -1 : i32(a->transitions)[(Py_ssize_t)s->cstate * a->classes + k];
            if (to < 0) return 0;
            if (r[1] == C_CAPPED) return x->c[r[4] + to] <= r[3] - s->n - 1;
            return frame_unique(x, f) != U_WORDS || word_left(x, s, f, cp, to);
        }
        return r[3] < 0 || s->cstate < r[3];
    }
    /* a key */
    if (takes_extras(r, f)) return 1; /* an open object: any text may become an extra key */
    if (s->cstate < 0) return 0;
    int32_t child = key_child(x->c, s->cstate, cp);
    return child >= 0 && key_viable(x->c + child, f);
}

/* Whether some decoded character in [lo, hi] that an escape may spell is allowed (the escapable set: every
   character, or every one but printable ASCII). */
static int content_meets(const Ctx *x, const MState *s, const MFrame *f, int64_t lo, int64_t hi) {
    if (lo >= 0xD800 && lo <= 0xDFFF) lo = 0xE000; /* (surrogates are no characters) */
    if (hi >= 0xD800 && hi <= 0xDFFF) hi = 0xD7FF;
    if (lo > hi) return 0;
    if (!x->ascii_escapes && lo >= 0x20 && hi <= 0x7E) return 0;
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_STRING) {
        if (r[1] == C_ANY) return 1;
        if (r[1] == C_CAPPED) return capped_meets(x, r, s, lo, hi, 1);
        if (r[1] == C_AUTOMATON) {
            const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
            const int32_t *as = i32(a->allow_start), *alo = i32(a->allow_lo), *ahi = i32(a->allow_hi);
            for (int32_t k = as[s->cstate]; k < as[s->cstate + 1]; k++) {
                int64_t a_lo = alo[k] > lo ? alo[k] : lo, a_hi = ahi[k] < hi ? ahi[k] : hi;
                if (a_lo > a_hi) continue;
                if (frame_unique(x, f) == U_WORDS) { /* the escapable characters there, one side at a time */
                    if (x->ascii_escapes ? words_left_in(x, s, f, a_lo, a_hi)
                                         : (a_lo < 0x20 && words_left_in(x, s, f, a_lo, a_hi < 0x1F ? a_hi : 0x1F)) ||
                                               (a_hi > 0x7E && words_left_in(x, s, f, a_lo > 0x7F ? a_lo : 0x7F, a_hi)))
                        return 1;
                    continue;
                }
                if (x->ascii_escapes || a_lo < 0x20 || a_hi > 0x7E) return 1;
            }
            return 0;
        }
        return r[3] < 0 || s->cstate < r[3];
    }
    if (takes_extras(r, f)) return 1;
    if (s->cstate < 0) return 0;
    const int32_t *t = x->c + s->cstate;
    for (int32_t k = 0; k < t[3]; k++) {
        int32_t cp = t[4 + 2 * k];
        if (cp < lo || cp > hi) continue;
        if (!x->ascii_escapes && cp >= 0x20 && cp <= 0x7E) continue;
        if (key_viable(x->c + t[5 + 2 * k], f)) return 1;
    }
    return 0;
}

static int content_accepting(const Ctx *x, const MState *s, const MFrame *f) {
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_STRING) {
        int ok = r[1] == C_AUTOMATON || r[1] == C_CAPPED
                     ? ((const uint8_t *)PyBytes_AS_STRING(((const AutomatonObject *)x->automata[r[2]])->accepting))[s->cstate]
                     : r[1] == C_ANY || s->cstate >= r[2];
        return ok && !(frame_unique(x, f) != U_NONE && item_seen(x, s, f)); /* (no item twice) */
    }
    if (s->cstate >= 0) {
        const int32_t *t = x->c + s->cstate;
        if (t[0] >= 0) { /* a name: acceptable only while available */
            uint32_t bit_lo = t[0] < 32 ? (uint32_t)1 << t[0] : 0, bit_hi = t[0] >= 32 ? (uint32_t)1 << (t[0] - 32) : 0;
            return !((f->seen_lo & bit_lo) || (f->seen_hi & bit_hi));
        }
    }
    return takes_extras(r, f); /* not a name: an extra key */
}

/* The content's step on ``cp`` (allowed); an item of a uniqueItems array also appends it to its words. */
static int content_step(const Ctx *x, MState *s, const MFrame *f, int32_t cp) {
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_STRING) {
        if (frame_unique(x, f) != U_NONE) {
            int64_t at = (int64_t)f->seen_hi + f->seen_lo + s->n;
            if (at >= x->u_cap || s->n >= INT32_MAX - 1) return 0; /* (never: the buffer has room for every byte) */
            x->u[at] = cp;
            s->n++;
        }
        if (r[1] == C_LENGTH) {
            if (r[3] >= 0 || s->cstate < r[2]) s->cstate++; /* (without a maximum, counted up to the minimum) */
        } else if (r[1] == C_AUTOMATON || r[1] == C_CAPPED) {
            const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
            int32_t k = class_of(a, cp);
            int32_t to = k < 0 ? -1 : i32(a->transitions)[(Py_ssize_t)s->cstate * a->classes + k];
            if (to < 0) return 0;
            s->cstate = to;
            if (r[1] == C_CAPPED && s->n < r[3]) s->n++;
        }
        return 1;
    }
    s->cstate = s->cstate < 0 ? -1 : key_child(x->c, s->cstate, cp);
    return 1;
}

/* Whether a first UTF-16 unit in [lo, hi] can still decode to an allowed character (strings.py). */
static int unit_allowed(const Ctx *x, const MState *s, const MFrame *f, int64_t lo, int64_t hi) {
    if (content_meets(x, s, f, lo, hi)) return 1;
    int64_t a = lo > 0xD800 ? lo : 0xD800, b = hi < 0xDBFF ? hi : 0xDBFF;
    if (a > b) return 0;
    return content_meets(x, s, f, 0x10000 + (a - 0xD800) * 0x400, 0x10000 + (b - 0xD800) * 0x400 + 0x3FF);
}

static int low_allowed(const Ctx *x, const MState *s, const MFrame *f, int64_t high, int64_t lo, int64_t hi) {
    lo = lo > 0xDC00 ? lo : 0xDC00;
    hi = hi < 0xDFFF ? hi : 0xDFFF;
    if (lo > hi) return 0;
    int64_t base = 0x10000 + (high - 0xD800) * 0x400 - 0xDC00;
    return content_meets(x, s, f, base + lo, base + hi);
}

static int hex_value(int32_t cp) {
    if (cp >= '0' && cp <= '9') return cp - '0';
    if (cp >= 'a' && cp <= 'f') return cp - 'a' + 10;
    if (cp >= 'A' && cp <= 'F') return cp - 'A' + 10;
    return -1;
}

static int32_t simple_escape(int32_t cp) {
    switch (cp) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
    }
}

static int backslash_allowed(const Ctx *x, const MState *s, const MFrame *f) {
    if (content_meets(x, s, f, 0, 0x10FFFF)) return 1;
    static const int32_t decoded[8] = {'"', '\\', '/', '\b', '\f', '\n', '\r', '\t'};
    for (int k = 0; k < 8; k++)
        if (content_allows(x, s, f, decoded[k])) return 1;
    return 0;
}

/* ---- numbers ---- */

/* The number state after ``cp``, or -1. */
static int32_t number_next(int32_t state, int integer, int32_t cp) {
    int digit = cp >= '0' && cp <= '9';
    switch (state) {
    case N_START: return cp == '-' ? N_MINUS : cp == '0' ? N_ZERO : digit ? N_INT : -1;
    case N_MINUS: return cp == '0' ? N_ZERO : digit ? N_INT : -1;
    case N_ZERO:
    case N_INT:
        if (digit) return state == N_INT ? N_INT : -1;
        if (integer) return -1;
        return cp == '.' ? N_DOT : (cp == 'e' || cp == 'E') ? N_E : -1;
    case N_DOT: return digit ? N_FRAC : -1;
    case N_FRAC: return digit ? N_FRAC : (cp == 'e' || cp == 'E') ? N_E : -1;
    case N_E: return (cp == '+' || cp == '-') ? N_ESIGN : digit ? N_EXP : -1;
    case N_ESIGN:
    case N_EXP: return digit ? N_EXP : -1;
    }
    return -1;
}

static int number_can_end(int32_t state) { return state == N_ZERO || state == N_INT || state == N_FRAC || state == N_EXP; }

#define MAG_EXACT 10000000000000000000ULL
/* An integer's magnitude (64 bits: ``cstate`` the low half, ``b`` the high one, number_magnitude) is kept
   exactly below MAG_EXACT, 10^19 (every bound is at most 2^63 in magnitude); a larger one as MAG_EXACT + its
   remainder modulo the least common multiple of the number's steps (``number_modulus``), all that a
   multipleOf asks of it. */
#define STEP_CAP (1 << 30) /* an integer's step, and the least common multiple of a number set's, stay below */
#define COUNT_CAP (1 << 30) /* an array's items are counted up to this (its limits are below it) */
#define SCALE_CAP 1000 /* a number bound's decimal exponent is at most this in magnitude */
#define NUM_WORDS 9 /* a K_NUMBER record's words */
#define PLACES_CAP 18 /* a NUM_MULTIPLE's step is step / 10^places, places at most this */

static inline uint64_t number_magnitude(const MState *s) {
    return (uint64_t)(uint32_t)s->b << 32 | (uint32_t)s->cstate;
}

static inline void set_magnitude(MState *s, uint64_t mag) {
    s->cstate = (int32_t)(uint32_t)mag;
    s->b = (int32_t)(uint32_t)(mag >> 32);
}

/* An integer number node's minimum (``side`` 0) or maximum (1). */
static inline int64_t integer_bound(const int32_t *r, int side) {
    return (int64_t)((uint64_t)(uint32_t)r[5 + side] << 32 | (uint32_t)r[3 + side]);
}

/* The least multiple of ``step`` at or above ``a`` (a >= 0). */
static inline __int128 first_multiple(__int128 a, int64_t step) { return (a + step - 1) / step * step; }

/* Whether some magnitude an integer prefix can still become lies in [lo, hi] (no maximum unless ``has_hi``)
   and is a multiple of ``step`` (``_integer_feasible``): none read yet (``digits`` 0) any; a leading zero
   only 0; else ``mag`` followed by any number of digits. */
static int magnitude_feasible(int digits, int zero, uint64_t mag, __int128 lo, __int128 hi, int has_hi,
                              int64_t step) {
    if (lo < 0) lo = 0;
    if (has_hi && first_multiple(lo, step) > hi) return 0;
    if (digits == 0) return 1; /* [0, inf) meets [lo, hi] */
    if (zero) return lo == 0;
    if (!has_hi) return 1; /* (a run of 10^k values, 10^k >= step, holds a multiple) */
    if (mag >= MAG_EXACT) return 0;
    for (__int128 a = mag, width = 1; a <= hi; a *= 10, width *= 10) { /* (hi <= 2^63: no overflow) */
        __int128 from = a > lo ? a : lo, to = a + width - 1 < hi ? a + width - 1 : hi;
        if (first_multiple(from, step) <= to) return 1;
    }
    return 0;
}

/* The integer number node's bounds on the magnitude of a value of sign ``neg``: [lo, hi], has_hi. */
static int integer_feasible(const int32_t *r, int neg, int digits, int zero, uint64_t mag) {
    int flags = r[2];
    __int128 lo = 0, hi = 0;
    int has_hi = 0;
    if (!neg) { /* value in [min, max] */
        if (flags & 1) lo = integer_bound(r, 0);
        if (flags & 2) hi = integer_bound(r, 1), has_hi = 1;
    } else { /* -mag in [min, max]: mag in [-max, -min] */
        if (flags & 2) lo = -(__int128)integer_bound(r, 1);
        if (flags & 1) hi = -(__int128)integer_bound(r, 0), has_hi = 1;
    }
    return magnitude_feasible(digits, zero, mag, lo, hi, has_hi, r[7]);
}

/* ``integer_complete``: the integer read (magnitude or remainder ``mag``, sign ``neg``) is a value. */
static int integer_in_bounds(const int32_t *r, int neg, uint64_t mag) {
    if (mag >= MAG_EXACT) /* past every bound: above a maximum, or below a minimum when negative */
        return !(r[2] & (neg ? 1 : 2)) && (mag - MAG_EXACT) % (uint64_t)r[7] == 0;
    __int128 value = neg ? -(__int128)mag : (__int128)mag;
    return (!(r[2] & 1) || value >= integer_bound(r, 0)) && (!(r[2] & 2) || value <= integer_bound(r, 1)) &&
           mag % (uint64_t)r[7] == 0;
}

/* ---- decimal numbers under bounds, with fractions and exponents (number_bounds.py's rules) ----

   The significant digits N (the mantissa's digits without leading zeros; N = 0 while there are none) are
   kept as their first DEC_KEPT digits (p), their count, and whether the digits past those are all zeros and
   all nines (tails bits 1 and 2): a bound is M·10^scale with M of at most ten digits, so every comparison
   the rules make (N or N + 1, scaled by a power of ten, against a bound: N's digit string against M's) is
   decided from those. ``fraction`` counts the digits
   after the point (the mantissa is N / 10^fraction), the exponent its sign and value. Counts are kept up to
   DEC_CAP. */

#define DEC_KEPT 11
#define DEC_CAP (1 << 30)

typedef struct {
    int64_t p;   /* the first min(digits, DEC_KEPT) significant digits */
    int64_t digits;
    int tail_zero, tail_nines;
} Digits;

static int64_t pow10i(int k) {
    int64_t v = 1;
    while (k-- > 0) v *= 10;
    return v;
}

static int decimal_digits(int64_t x) {
    int d = 0;
    while (x > 0) x /= 10, d++;
    return d;
}

/* The sign of N·10^j - X, for an integer 0 < X < 2^30. */
static int cmp_scaled(const Digits *n, int64_t j, int64_t x) {
    if (n->digits == 0) return -1;
    int64_t dx = decimal_digits(x);
    if (n->digits + j > dx) return 1;
    if (n->digits + j < dx) return -1;
    if (n->digits <= DEC_KEPT) { /* N exact, |j| <= 11 here: N·10^j against X in 128-bit integers */
        __int128 left = n->p, right = x;
        if (j >= 0) left *= pow10i((int)j);
        else right *= pow10i((int)-j);
        return left > right ? 1 : left < right ? -1 : 0;
    }
    int64_t first = n->p / pow10i((int)(DEC_KEPT - dx)); /* N's first dx digits (dx <= 10 < DEC_KEPT) */
    if (first != x) return first > x ? 1 : -1;
    return (n->p % pow10i((int)(DEC_KEPT - dx)) != 0 || !n->tail_zero) ? 1 : 0;
}

/* N + 1. */
static Digits plus_one(const Digits *n) {
    Digits m = *n;
    if (n->digits <= DEC_KEPT) {
        m.p = n->p + 1;
        m.digits = decimal_digits(m.p);
        if (m.digits > DEC_KEPT) { /* 99..9 + 1: a one and zeros */
            m.p /= 10;
            m.tail_zero = 1;
        }
        return m;
    }
    m.tail_zero = n->tail_nines; /* the digits past the kept ones: +1, carried when all were nines */
    m.tail_nines = 0;
    if (n->tail_nines) {
        m.p = n->p + 1;
        if (decimal_digits(m.p) > DEC_KEPT) m.p /= 10, m.digits = n->digits + 1;
    }
    return m;
}

/* A bound: the decimal m·10^s, |m| < 2^30. */
typedef struct {
    int64_t m, s;
} Dec;

/* The sign of N·10^j - X, for a decimal X > 0. */
static inline int cmp_dec(const Digits *n, int64_t j, Dec x) { return cmp_scaled(n, j - x.s, x.m); }

/* The sign of a - b. */
static int dec_cmp(Dec a, Dec b) {
    int sa = (a.m > 0) - (a.m < 0), sb = (b.m > 0) - (b.m < 0);
    if (sa != sb) return sa > sb ? 1 : -1;
    if (sa == 0) return 0;
    int64_t ma = a.m < 0 ? -a.m : a.m, mb = b.m < 0 ? -b.m : b.m;
    int64_t la = decimal_digits(ma) + a.s, lb = decimal_digits(mb) + b.s;
    int c;
    if (la != lb) c = la > lb ? 1 : -1;
    else { /* as many digits before the point: the scales differ by less than ten */
        __int128 left = ma, right = mb;
        if (a.s > b.s) left *= pow10i((int)(a.s - b.s));
        else right *= pow10i((int)(b.s - a.s));
        c = left > right ? 1 : left < right ? -1 : 0;
    }
    return sa > 0 ? c : -c;
}

/* floor(log10(X / N)) for integers X, N > 0, and whether X / N is a power of ten. */
static int64_t floor_log10_ratio(int64_t x, const Digits *n, int *exact) {
    int64_t shift = decimal_digits(x) - n->digits;
    int c = cmp_scaled(n, shift, x); /* N·10^shift against X: the digit strings compared */
    *exact = c == 0;
    return c > 0 ? shift - 1 : shift;
}

/* The bounds a value's magnitude must meet, mirrored for a negative value: [lo, hi], each present or not,
   each open or not (number_bounds.py's ``positive`` and ``negative``). */
typedef struct {
    int has_lo, lo_open, has_hi, hi_open;
    Dec lo, hi;
} Bounds;

static Bounds bounds_of(const int32_t *r, int neg) {
    int flags = r[2];
    Bounds b = {0, 0, 0, 0, {0, 0}, {0, 0}};
    if (!neg) {
        b.has_lo = flags & 1, b.lo = (Dec){r[3], r[5]}, b.lo_open = (flags & 4) != 0;
        b.has_hi = (flags & 2) != 0, b.hi = (Dec){r[4], r[6]}, b.hi_open = (flags & 8) != 0;
    } else {
        b.has_lo = (flags & 2) != 0, b.lo = (Dec){-(int64_t)r[4], r[6]}, b.lo_open = (flags & 8) != 0;
        b.has_hi = flags & 1, b.hi = (Dec){-(int64_t)r[3], r[5]}, b.hi_open = (flags & 4) != 0;
    }
    return b;
}

/* Whether some value >= 0 meets the bounds (``_hits(0, None, bounds)``). */
static int bounds_reach_from_zero(const Bounds *b) {
    if (!b->has_hi) return 1;
    Dec lo = {0, 0};
    int lo_open = 0;
    if (b->has_lo && (b->lo.m > 0 || (b->lo.m == 0 && b->lo_open))) lo = b->lo, lo_open = b->lo_open;
    int c = dec_cmp(lo, b->hi);
    return !(c > 0 || (c == 0 && (lo_open || b->hi_open)));
}

static int zero_in_bounds(const Bounds *b) {
    if (b->has_lo && (0 < b->lo.m || (b->lo_open && b->lo.m == 0))) return 0;
    return !b->has_hi || !(0 > b->hi.m || (b->hi_open && b->hi.m == 0));
}

/* ``_mantissa_feasible``: a mantissa prefix with an exponent still possible. */
static int mantissa_feasible(const Digits *n, const Bounds *b) {
    if (n->digits == 0) return bounds_reach_from_zero(b);
    if (!b->has_hi) return 1;
    if (b->hi.m <= 0) return 0;
    if (!b->has_lo || b->lo.m <= 0) return 1;
    Digits up = plus_one(n);
    int exact;
    /* the least power with (N+1)·10^e > lo */
    int64_t e = floor_log10_ratio(b->lo.m, &up, &exact) + b->lo.s + 1;
    /* [N·10^e, (N+1)·10^e) against [lo, hi]: (N+1)·10^e > lo by the choice of e */
    int c_lo = cmp_dec(n, e, b->lo); /* N·10^e against lo */
    int lo_is_bound = c_lo < 0 || (c_lo == 0 && b->lo_open);
    int c_up_hi = cmp_dec(&up, e, b->hi); /* (N+1)·10^e against hi */
    int hi_is_bound = c_up_hi > 0;
    if (!lo_is_bound && !hi_is_bound) return 1; /* N·10^e < (N+1)·10^e */
    if (lo_is_bound && !hi_is_bound) return 1;  /* lo < (N+1)·10^e */
    if (!lo_is_bound) {                         /* [N·10^e, hi] */
        int c = cmp_dec(n, e, b->hi);
        return c < 0 || (c == 0 && !b->hi_open);
    }
    int c = dec_cmp(b->lo, b->hi);
    return c < 0 || (c == 0 && !b->lo_open && !b->hi_open);
}

/* ``_exponent_range`` of the mantissa N / 10^fraction (N > 0): 0 when no exponent fits. */
static int exponent_range(const Digits *n, int64_t fraction, const Bounds *b, int *has_low, int64_t *lowest,
                          int *has_high, int64_t *highest) {
    *has_low = *has_high = 0;
    if (b->has_lo && b->lo.m > 0) {
        int exact;
        int64_t e = fraction + floor_log10_ratio(b->lo.m, n, &exact) + b->lo.s;
        *lowest = (exact && !b->lo_open) ? e : e + 1;
        *has_low = 1;
    }
    if (b->has_hi) {
        if (b->hi.m <= 0) return 0;
        int exact;
        int64_t e = fraction + floor_log10_ratio(b->hi.m, n, &exact) + b->hi.s;
        *highest = (exact && b->hi_open) ? e - 1 : e;
        *has_high = 1;
    }
    return !(*has_low && *has_high && *lowest > *highest);
}

/* ``exponent_feasible``: the exponent read so far (sign 0 none, 1 '+', 2 '-'; ``has_digits``) can still put
   the value inside the bounds; ``complete``: the value as written is inside. */
static int exponent_feasible(const Digits *n, int64_t fraction, int sign, int has_digits, int64_t value,
                             const Bounds *b, int complete) {
    if (n->digits == 0) return zero_in_bounds(b);
    int has_low, has_high;
    int64_t lowest = 0, highest = 0;
    if (!exponent_range(n, fraction, b, &has_low, &lowest, &has_high, &highest)) return 0;
    if (complete) {
        int64_t x = sign == 2 ? -value : value;
        return (!has_low || x >= lowest) && (!has_high || x <= highest);
    }
    if (sign == 0 && !has_digits) return 1;
    int64_t a, bb;
    int has_bb;
    if (sign == 2) {
        a = has_high ? (-highest > 0 ? -highest : 0) : 0;
        has_bb = has_low, bb = -lowest;
    } else {
        a = has_low ? (lowest > 0 ? lowest : 0) : 0;
        has_bb = has_high, bb = highest;
    }
    if (has_bb && bb < a) return 0;
    if (value == 0 || !has_bb) return 1;
    for (int64_t k = 1; value * k <= bb; k *= 10) /* (bb is below 2^32: no product overflows) */
        if ((value + 1) * k - 1 >= a) return 1;
    return 0;
}

static Digits digits_of(const MState *s) {
    Digits n = {(int64_t)(uint32_t)s->p_lo | (int64_t)s->p_hi << 32, s->digits, (s->tails & 1) != 0, (s->tails & 2) != 0};
    return n;
}

/* The magnitude with the digit ``d`` appended (see MAG_EXACT; ``modulus`` the number's). */
static void append_digit(MState *t, uint64_t d, int64_t modulus) {
    uint64_t mag = number_magnitude(t), m = (uint64_t)modulus;
    if (mag >= MAG_EXACT) mag = MAG_EXACT + ((mag - MAG_EXACT) * 10 + d) % m;
    else if (mag >= MAG_EXACT / 10) mag = MAG_EXACT + (mag % m * 10 + d) % m; /* (10·mag + d >= MAG_EXACT) */
    else mag = mag * 10 + d;
    set_magnitude(t, mag);
}

/* The fields after ``next`` (a phase number_next allowed) read ``cp``: the sign, an integer's magnitude (in
   ``cstate`` and ``b``, see MAG_EXACT; ``modulus`` the number's) and a decimal's digits (DecimalFields). */
static void number_advance(MState *t, int32_t next, int32_t cp, int64_t modulus) {
    if (next == N_MINUS) t->a = 1;
    int digit = cp >= '0' && cp <= '9';
    if (digit && (next == N_ZERO || next == N_INT)) append_digit(t, (uint64_t)(cp - '0'), modulus);
    if (digit && next != N_EXP) {
        if (t->digits > 0 || cp != '0') { /* a significant digit */
            if (t->digits < DEC_KEPT) {
                int64_t p = ((int64_t)(uint32_t)t->p_lo | (int64_t)t->p_hi << 32) * 10 + (cp - '0');
                t->p_lo = (int32_t)(uint32_t)(p & 0xFFFFFFFF);
                t->p_hi = (int32_t)(p >> 32);
            } else {
                if (cp != '0') t->tails &= ~1;
                if (cp != '9') t->tails &= ~2;
            }
            if (t->digits < DEC_CAP) t->digits++;
        }
        if (next == N_FRAC && t->fraction < DEC_CAP) t->fraction++;
    }
    if (next == N_ESIGN) t->exp_sign = cp == '-' ? 2 : 1;
    if (digit && next == N_EXP) t->exp_value = t->exp_value >= DEC_CAP / 10 ? DEC_CAP : t->exp_value * 10 + (cp - '0');
    t->phase = next;
}

static int fraction_or_exponent(int32_t phase) { return phase >= N_DOT; }

/* a K_NUMBER record's word 1: a number under decimal bounds, an integer, a number under a multipleOf, a set
   of values */
enum { NUM_DECIMAL, NUM_INTEGER, NUM_MULTIPLE, NUM_SET };
#define SET_CLASSES 12 /* a NUM_SET automaton's characters: '-', '.', the digits */

static inline int set_class(int32_t cp) { return cp == '-' ? 0 : cp == '.' ? 1 : cp >= '0' && cp <= '9' ? 2 + cp - '0' : -1; }

/* A NUM_SET option's automaton state after ``cp`` from ``state`` (-1: none). */
static inline int32_t set_next(const int32_t *o, int32_t state, int32_t cp) {
    int k = set_class(cp);
    return state < 0 || k < 0 ? -1 : o[o[3] + (Py_ssize_t)state * SET_CLASSES + k];
}

static inline int set_accepts(const int32_t *o, int32_t state) {
    return state >= 0 && o[o[3] + (Py_ssize_t)o[4] * SET_CLASSES + state];
}
/* tails bit of a state of a number with NUM_MULTIPLE options: a fraction digit past their places is not 0 */
#define NONZERO_FRACTION 4

static __int128 pow10w(int k) {
    __int128 v = 1;
    while (k-- > 0) v *= 10;
    return v;
}

/* The integer number node's set on the magnitude of a value of sign ``neg``: [lo, hi] (hi only if has_hi). */
static void magnitude_bounds(const int32_t *r, int neg, __int128 *lo, __int128 *hi, int *has_hi) {
    int flags = r[2];
    *lo = 0, *hi = 0, *has_hi = 0;
    if (!neg) {
        if (flags & 1) *lo = integer_bound(r, 0);
        if (flags & 2) *hi = integer_bound(r, 1), *has_hi = 1;
    } else {
        if (flags & 2) *lo = -(__int128)integer_bound(r, 1);
        if (flags & 1) *hi = -(__int128)integer_bound(r, 0), *has_hi = 1;
    }
    if (*lo < 0) *lo = 0;
}

/* A NUM_MULTIPLE's magnitude read ``mag`` (units of 10^-places) followed by ``e`` more digits: whether some
   such value (any ``e`` digits; with ``grow``, ``e`` or more) lies in the option's set, as number_bounds.py's
   ``_hits`` decides each interval [mag·10^e, (mag+1)·10^e). */
static int scaled_feasible(const int32_t *o, int neg, uint64_t mag, int e, int grow) {
    __int128 lo, hi, step = o[7];
    int has_hi;
    magnitude_bounds(o, neg, &lo, &hi, &has_hi);
    if (has_hi && first_multiple(lo, o[7]) > hi) return 0;
    if (mag >= MAG_EXACT) { /* past every maximum and minimum: the remainder decides */
        if (has_hi) return 0;
        if (grow) return 1;
        __int128 r = (__int128)(mag - MAG_EXACT) * pow10w(e) % step;
        return (step - r) % step <= pow10w(e) - 1;
    }
    if (!has_hi && grow) return 1; /* (a run of 10^k values, 10^k >= step, above lo holds a multiple) */
    for (__int128 a = (__int128)mag * pow10w(e), width = pow10w(e);; a *= 10, width *= 10) {
        if (has_hi && a > hi) return 0;
        __int128 from = a > lo ? a : lo, to = a + width - 1;
        if (has_hi && to > hi) to = hi;
        if (first_multiple(from, o[7]) <= to) return 1;
        if (!grow) return 0;
    }
}

/* Whether the magnitude ``mag``·10^e (units of 10^-places) of sign ``neg`` is in the option's set. */
static int scaled_point(const int32_t *o, int neg, uint64_t mag, int e) {
    if (mag >= MAG_EXACT)
        return !(o[2] & (neg ? 1 : 2)) && (__int128)(mag - MAG_EXACT) * pow10w(e) % o[7] == 0;
    __int128 u = (__int128)mag * pow10w(e), value = neg ? -u : u;
    return (!(o[2] & 1) || value >= integer_bound(o, 0)) && (!(o[2] & 2) || value <= integer_bound(o, 1)) &&
           u % o[7] == 0;
}

/* A NUM_MULTIPLE option (places ``o[8]``) for the number ``t``: feasible (``end`` 0) or complete (1). */
static int multiple_option(const int32_t *o, const MState *t, int end) {
    int places = o[8];
    uint64_t mag = number_magnitude(t);
    switch (t->phase) {
    case N_START:
    case N_MINUS: return !end && integer_feasible(o, t->a, 0, 0, 0);
    case N_ZERO:
    case N_INT:
        if (end) return scaled_point(o, t->a, mag, places);
        return scaled_feasible(o, t->a, mag, places, t->phase == N_INT);
    case N_DOT:
    case N_FRAC:
        if (t->phase == N_DOT && end) return 0;
        if (t->fraction > places) return !(t->tails & NONZERO_FRACTION) && scaled_point(o, t->a, mag, 0);
        return end ? scaled_point(o, t->a, mag, places - t->fraction)
                   : scaled_feasible(o, t->a, mag, places - t->fraction, 0);
    }
    return 0; /* (no exponent) */
}

/* Whether the number node ``o`` (a K_NUMBER record) constrains its values beyond the JSON grammar. */
static inline int option_bounded(const int32_t *o) { return o[1] >= NUM_MULTIPLE || o[2] != 0 || o[7] != 1; }

/* Whether the number ``t`` (its phase and fields just advanced) can still end as a value of the number node
   ``o`` (a K_NUMBER record). */
static int option_feasible(const int32_t *o, const MState *t) {
    if (o[1] == NUM_INTEGER && fraction_or_exponent(t->phase)) return 0;
    if (o[1] == NUM_MULTIPLE) return multiple_option(o, t, 0);
    if (o[1] == NUM_SET) return t->n >= 0;
    if (!option_bounded(o)) return 1;
    if (o[1])
        return integer_feasible(o, t->a, t->phase == N_ZERO || t->phase == N_INT, t->phase == N_ZERO,
                                number_magnitude(t));
    Digits n = digits_of(t);
    Bounds b = bounds_of(o, t->a);
    if (t->phase == N_MINUS) return bounds_reach_from_zero(&b);
    if (t->phase == N_E || t->phase == N_ESIGN || t->phase == N_EXP)
        return exponent_feasible(&n, t->fraction, t->exp_sign, t->phase == N_EXP, t->exp_value, &b, 0);
    return mantissa_feasible(&n, &b);
}

static int decimal_ends(const int32_t *r, const MState *s) {
    Digits n = digits_of(s);
    if (s->phase == N_EXP) {
        Bounds b = bounds_of(r, s->a);
        return exponent_feasible(&n, s->fraction, s->exp_sign, 1, s->exp_value, &b, 1);
    }
    /* ``number_ok``: the signed value N / 10^fraction against the bounds as written */
    int sign = n.digits == 0 ? 0 : s->a ? -1 : 1;
    for (int side = 0; side < 2; side++) {
        int present = side == 0 ? (r[2] & 1) : (r[2] & 2) != 0;
        if (!present) continue;
        Dec bound = side == 0 ? (Dec){r[3], r[5]} : (Dec){r[4], r[6]};
        int open = side == 0 ? (r[2] & 4) != 0 : (r[2] & 8) != 0;
        int c; /* value against bound */
        if (bound.m == 0) c = sign;
        else if (sign == 0) c = bound.m > 0 ? -1 : 1;
        else if ((sign > 0) != (bound.m > 0)) c = sign;
        else {
            Dec magnitude = {bound.m > 0 ? bound.m : -bound.m, bound.s};
            int m = cmp_dec(&n, -(int64_t)s->fraction, magnitude); /* |value| against |bound| */
            c = sign > 0 ? m : -m;
        }
        if (side == 0 && (c < 0 || (c == 0 && open))) return 0;
        if (side == 1 && (c > 0 || (c == 0 && open))) return 0;
    }
    return 1;
}

static int option_ends(const int32_t *o, const MState *s) {
    if (!number_can_end(s->phase) || (o[1] == NUM_INTEGER && fraction_or_exponent(s->phase))) return 0;
    if (o[1] == NUM_MULTIPLE) return multiple_option(o, s, 1);
    if (o[1] == NUM_SET) return set_accepts(o, s->n);
    if (!option_bounded(o)) return 1;
    return o[1] ? integer_in_bounds(o, s->a, number_magnitude(s)) : decimal_ends(o, s);
}

/* The number options of a number node: itself, or a K_NUMSET's (each a K_NUMBER record of NUM_WORDS). */
static inline int number_options(const int32_t *r) { return r[0] == K_NUMSET ? r[1] : 1; }
static inline const int32_t *number_option(const int32_t *r, int i) {
    return r[0] == K_NUMSET ? r + 2 + NUM_WORDS * i : r;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* The places of a number node's NUM_MULTIPLE options (validated the same), or -1 when it has none. */
static int number_places(const int32_t *r) {
    for (int i = 0; i < number_options(r); i++)
        if (number_option(r, i)[1] == NUM_MULTIPLE) return number_option(r, i)[8];
    return -1;
}

/* The least common multiple of a number node's steps (its options'), or -1 when it is STEP_CAP or more. */
static int64_t number_modulus(const int32_t *r) {
    int64_t l = 1;
    for (int i = 0; i < number_options(r); i++) {
        int64_t step = number_option(r, i)[7];
        l = l / gcd64(l, step) * step;
        if (l >= STEP_CAP) return -1;
    }
    return l;
}

/* A number's step: the state after ``cp``, or 0. A number with no bounds keeps only its phase (its states
   are few, and so are their masks); one with bounds keeps the fields its bounds read. */
static int number_step(const int32_t *r, MState *s, int32_t cp) {
    int options = number_options(r), integer = 1, bounded = 0, places = -1;
    const int32_t *set = NULL;
    for (int i = 0; i < options; i++) {
        const int32_t *o = number_option(r, i);
        integer &= o[1] == NUM_INTEGER;
        bounded |= option_bounded(o);
        if (o[1] == NUM_MULTIPLE) places = o[8];
        if (o[1] == NUM_SET) set = o;
    }
    int32_t next = number_next(s->phase, integer, cp);
    if (next < 0) return 0;
    if (!bounded) {
        s->phase = next;
        return 1;
    }
    MState t = *s;
    int64_t modulus = number_modulus(r);
    number_advance(&t, next, cp, modulus);
    if (places >= 0 && next == N_FRAC) { /* (t.fraction counts this digit) */
        if (t.fraction <= places) append_digit(&t, (uint64_t)(cp - '0'), modulus);
        else if (cp != '0') t.tails |= NONZERO_FRACTION;
    }
    if (set) t.n = set_next(set, t.n, cp);
    for (int i = 0; i < options; i++) {
        if (option_feasible(number_option(r, i), &t)) {
            *s = t;
            return 1;
        }
    }
    return 0;
}

static int number_ends(const int32_t *r, const MState *s) {
    for (int i = 0; i < number_options(r); i++)
        if (option_ends(number_option(r, i), s)) return 1;
    return 0;
}

/* ---- the machine's step ---- */

static int is_ws(int32_t cp) { return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r'; }

/* A value of ``node`` has been read whole: the frame below goes on after it. */
static void value_done(const Ctx *x, WHead *w, MFrame *local) {
    MFrame *f = own_top(x, w, local);
    f->phase = P_AFTER;
    f->ws = 0;
}

/* Whether an object frame may take another key (named and available, or an extra one). */
static int key_possible(const Ctx *x, const MFrame *f) {
    const int32_t *r = rec(x, f->node);
    if (takes_extras(r, f)) return 1;
    return key_viable(x->c + r[4], f);
}

static int closable(const Ctx *x, const MFrame *f) {
    const int32_t *r = rec(x, f->node);
    if (r[0] == K_OBJECT) return !((uint32_t)r[2] & ~f->seen_lo) && !((uint32_t)r[3] & ~f->seen_hi);
    return f->count >= r[2]; /* an array */
}

/* Whether a value of ``node`` fits in ``room`` levels (counting a container value itself): near the limit
   only (depth_room.py narrows within ROOM_GUARD levels, and no node of a program needs that many). */
static inline int fits(const Ctx *x, int32_t node, int64_t room) { return room >= ROOM_GUARD || min_depth(x, node) <= room; }

/* Opens a container of ``node`` as the value of the top frame: it must fit in the levels left. An object's
   names whose values do not fit in its own room are marked as seen (never offered), and its extra keys too
   (NO_EXTRAS) when their values do not fit. */
static int push_frame(const Ctx *x, WHead *w, MFrame *local, int32_t node) {
    int64_t open = depth_of(w) - 1; /* containers open (the root's frame is none) */
    if (!fits(x, node, (int64_t)x->max_depth - open)) return 0;
    MFrame *g = &local[w->local++];
    *g = (MFrame){node, P_OPEN, 0, 0, 0, 0};
    int64_t room = (int64_t)x->max_depth - open - 1; /* for its values */
    const int32_t *r = rec(x, node);
    if (r[0] == K_ARRAY && array_unique(r) != U_NONE) g->seen_hi = (uint32_t)x->u_own; /* its words: past the state's */
    if (r[0] == K_OBJECT && room < ROOM_GUARD) {
        for (int32_t i = 0; i < r[5]; i++) {
            if (fits(x, r[6 + i], room)) continue;
            if (i < 32) g->seen_lo |= (uint32_t)1 << i;
            else g->seen_hi |= (uint32_t)1 << (i - 32);
        }
        if (r[1] >= 0 && !fits(x, r[1], room)) g->seen_hi |= NO_EXTRAS;
    }
    return 1;
}

static int start_value(const Ctx *x, WHead *w, MFrame *local, int32_t node, int32_t cp);

/* The options of a union record of one kind. */
static int32_t union_count(const Ctx *x, const int32_t *r, int32_t kind) {
    int32_t count = 0;
    for (int32_t k = 0; k < r[1]; k++) count += rec(x, r[2 + k])[0] == kind;
    return count;
}

/* A union with several options of one kind (objects, arrays or strings) opened by their first character:
   each such option (a container only where it fits in the levels left) is a way of reading the value (the
   Python parsers' UnionParser keeps one branch per option, and its language is the union of theirs). The
   step takes way ``w->pick`` and records in ``w->forks`` how many there are; the caller steps the state
   again for each other way (Machine.step keeps every way, the mask walk walks each). 0 when no option fits
   or the pick is past the last way. */
static int fork_options(const Ctx *x, WHead *w, MFrame *local, const int32_t *r, int32_t kind, int32_t cp) {
    int64_t room = (int64_t)x->max_depth - (depth_of(w) - 1);
    int32_t ways = 0, chosen = -1;
    for (int32_t k = 0; k < r[1]; k++) {
        if (rec(x, r[2 + k])[0] != kind || (kind != K_STRING && !fits(x, r[2 + k], room))) continue;
        if (ways == w->pick) chosen = r[2 + k];
        ways++;
    }
    w->forks = ways;
    return chosen >= 0 && start_value(x, w, local, chosen, cp);
}

/* Starts a value of ``node`` with its first character; 0 if refused. The frame on top is the container (or
   the root) whose value this is, already in phase P_VALUE. */
static int start_value(const Ctx *x, WHead *w, MFrame *local, int32_t node, int32_t cp) {
    const int32_t *r = rec(x, node);
    MState *s = &w->h;
    switch (r[0]) {
    case K_ANY:
        if (cp == '{') return push_frame(x, w, local, x->c[MH_ANY_OBJECT]);
        if (cp == '[') return push_frame(x, w, local, x->c[MH_ANY_ARRAY]);
        if (cp == '"') return start_value(x, w, local, x->c[MH_ANY_STRING], cp);
        if (cp == '-' || (cp >= '0' && cp <= '9')) return start_value(x, w, local, x->c[MH_ANY_NUMBER], cp);
        if (cp == 't' || cp == 'f' || cp == 'n') {
            *s = (MState){L_LITERAL, cp == 't' ? 0 : cp == 'f' ? 1 : 2, 1, 0, 0, 0, 0};
            return 1;
        }
        return 0;
    case K_OBJECT: return cp == '{' && push_frame(x, w, local, node);
    case K_ARRAY: return cp == '[' && push_frame(x, w, local, node);
    case K_STRING:
        if (cp != '"') return 0;
        *s = (MState){L_STRING, node, S_BODY, r[1] == C_AUTOMATON ? r[3] : 0, 0, 0, 0, 0};
        return 1;
    case K_NUMBER:
    case K_NUMSET: {
        MState n = {L_NUMBER, node, N_START, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0};
        if (!number_step(r, &n, cp)) return 0;
        *s = n;
        return 1;
    }
    case K_BOOL:
        if ((cp == 't' && (r[1] & 1)) || (cp == 'f' && (r[1] & 2))) {
            *s = (MState){L_LITERAL, cp == 't' ? 0 : 1, 1, 0, 0, 0, 0};
            return 1;
        }
        return 0;
    case K_NULL:
        if (cp != 'n') return 0;
        *s = (MState){L_LITERAL, 2, 1, 0, 0, 0, 0};
        return 1;
    case K_UNION: {
        int32_t kind = cp == '{' ? K_OBJECT : cp == '[' ? K_ARRAY : cp == '"' ? K_STRING : -1;
        if (kind >= 0 && union_count(x, r, kind) > 1) return fork_options(x, w, local, r, kind, cp);
        for (int32_t k = 0; k < r[1]; k++)
            if (start_value(x, w, local, r[2 + k], cp)) return 1;
        return 0;
    }
    }
    return 0;
}

/* The node of the value that follows the top frame's current key or item. */
static int32_t value_node(const Ctx *x, const MFrame *f) {
    if (f->node < 0) return x->c[MH_ROOT];
    const int32_t *r = rec(x, f->node);
    if (r[0] == K_OBJECT) return f->count >= 0 ? r[6 + f->count] : r[1];
    return f->count - 1 < r[4] ? r[5 + f->count - 1] : r[1]; /* an array: item count-1 */
}

/* Whether the array frame ``f`` may take another item as far as uniqueItems go: an enum's words must not all
   have been seen. */
static inline int item_left(const Ctx *x, const MFrame *f, const int32_t *r) {
    if (array_unique(r) != U_WORDS) return 1;
    return f->count < x->c[r[6 + r[4]] + rec(x, r[1])[3]];
}

/* Whether the array frame ``f`` (on top) may take its next item: the item's value fits in its room. */
static int item_fits(const Ctx *x, const WHead *w, const MFrame *f, const int32_t *r) {
    int64_t room = (int64_t)x->max_depth - (depth_of(w) - 1);
    if (room >= ROOM_GUARD) return 1;
    return fits(x, f->count < r[4] ? r[5 + f->count] : r[1], room);
}

/* Structural step: no lexeme is being read. */
static int step_structure(const Ctx *x, WHead *w, MFrame *local, int32_t cp) {
    MFrame *f = top_frame(x, w, local);
    int32_t phase = f->phase;
    if (is_ws(cp)) {
        int32_t cap = f->node < 0 ? (phase == P_BEFORE ? x->lead_cap : x->trail_cap) : x->ws_cap;
        if (phase == P_VALUE || f->ws >= cap) return 0;
        own_top(x, w, local)->ws++;
        return 1;
    }
    if (f->node < 0) { /* the root */
        if (phase != P_BEFORE) return 0;
        f = own_top(x, w, local);
        f->phase = P_VALUE;
        f->ws = 0;
        return start_value(x, w, local, x->c[MH_ROOT], cp);
    }
    const int32_t *r = rec(x, f->node);
    if (r[0] == K_OBJECT) {
        switch (phase) {
        case P_OPEN:
        case P_COMMA:
            if (cp == '"' && key_possible(x, f)) {
                f = own_top(x, w, local);
                f->phase = P_KEY;
                f->ws = 0;
                w->h = (MState){L_STRING, f->node, S_BODY, r[4], 0, 0, 0};
                return 1;
            }
            if (cp == '}' && phase == P_OPEN && closable(x, f)) {
                pop_frame(w);
                value_done(x, w, local);
                return 1;
            }
            return 0;
        case P_KEY_DONE:
            if (cp != ':') return 0;
            f = own_top(x, w, local);
            f->phase = P_COLON;
            f->ws = 0;
            return 1;
        case P_COLON: {
            int32_t node = value_node(x, f);
            f = own_top(x, w, local);
            f->phase = P_VALUE;
            f->ws = 0;
            return start_value(x, w, local, node, cp);
        }
        case P_AFTER:
            if (cp == ',' && key_possible(x, f)) {
                f = own_top(x, w, local);
                f->phase = P_COMMA;
                f->ws = 0;
                return 1;
            }
            if (cp == '}' && closable(x, f)) {
                pop_frame(w);
                value_done(x, w, local);
                return 1;
            }
            return 0;
        }
        return 0;
    }
    /* an array */
    switch (phase) {
    case P_OPEN:
        if (cp == ']') {
            if (r[2] > 0) return 0;
            pop_frame(w);
            value_done(x, w, local);
            return 1;
        }
        /* fall through */
    case P_COMMA: {
        if (r[3] >= 0 && f->count >= r[3]) return 0;
        if (!item_fits(x, w, f, r) || !item_left(x, f, r)) return 0;
        f = own_top(x, w, local);
        if (f->count < COUNT_CAP) f->count++; /* (past every limit, the count no longer matters) */
        f->phase = P_VALUE;
        f->ws = 0;
        return start_value(x, w, local, value_node(x, f), cp);
    }
    case P_AFTER:
        if (cp == ',' && (r[3] < 0 || f->count < r[3]) && item_fits(x, w, f, r) && item_left(x, f, r)) {
            f = own_top(x, w, local);
            f->phase = P_COMMA;
            f->ws = 0;
            return 1;
        }
        if (cp == ']' && closable(x, f)) {
            pop_frame(w);
            value_done(x, w, local);
            return 1;
        }
        return 0;
    }
    return 0;
}

/* A key's closing quote: the object frame records the name (or an extra key) and waits for the colon. */
static void key_done(const Ctx *x, WHead *w, MFrame *local) {
    MFrame *f = own_top(x, w, local);
    int32_t name = -1;
    if (w->h.cstate >= 0) name = x->c[w->h.cstate];
    if (name >= 0) {
        if (name < 32) f->seen_lo |= (uint32_t)1 << name;
        else f->seen_hi |= (uint32_t)1 << (name - 32);
    }
    f->count = name;
    f->phase = P_KEY_DONE;
    f->ws = 0;
    w->h = (MState){L_NONE, 0, 0, 0, 0, 0, 0};
}

static int step_string(const Ctx *x, WHead *w, MFrame *local, int32_t cp) {
    MState *s = &w->h;
    const MFrame *f = top_frame(x, w, local);
    switch (s->phase) {
    case S_BODY:
        if (cp == '"') {
            if (!content_accepting(x, s, f)) return 0;
            if (rec(x, s->node)[0] == K_OBJECT) key_done(x, w, local);
            else {
                int32_t n = s->n;
                int unique = frame_unique(x, f) != U_NONE;
                *s = (MState){L_NONE, 0, 0, 0, 0, 0, 0};
                value_done(x, w, local);
                if (unique) { /* the item joins the seen ones: its length after its code points */
                    MFrame *g = own_top(x, w, local);
                    int64_t at = (int64_t)g->seen_hi + g->seen_lo + n;
                    if (at >= x->u_cap) return 0; /* (never: the buffer has room for every byte) */
                    x->u[at] = n;
                    g->seen_lo += (uint32_t)n + 1;
                }
            }
            return 1;
        }
        if (cp == '\\') {
            if (!backslash_allowed(x, s, f)) return 0;
            s->phase = S_ESCAPE;
            return 1;
        }
        if (cp < 0x20 || !content_allows(x, s, f, cp)) return 0;
        return content_step(x, s, f, cp);
    case S_ESCAPE: {
        if (cp == 'u') {
            if (!content_meets(x, s, f, 0, 0x10FFFF)) return 0;
            s->phase = S_HEX;
            s->a = s->b = 0;
            return 1;
        }
        int32_t decoded = simple_escape(cp);
        if (decoded < 0 || !content_allows(x, s, f, decoded)) return 0;
        s->phase = S_BODY;
        return content_step(x, s, f, decoded);
    }
    case S_HEX: {
        int d = hex_value(cp);
        if (d < 0) return 0;
        int64_t width = (int64_t)1 << (4 * (3 - s->b)), lo = ((int64_t)s->a * 16 + d) * width;
        if (!unit_allowed(x, s, f, lo, lo + width - 1)) return 0;
        s->a = s->a * 16 + d;
        if (s->b < 3) {
            s->b++;
            return 1;
        }
        if (s->a >= 0xD800 && s->a <= 0xDBFF) {
            s->phase = S_LOW_BACKSLASH;
            s->b = 0;
            return 1;
        }
        int32_t value = s->a;
        s->phase = S_BODY;
        s->a = s->b = 0;
        return content_step(x, s, f, value);
    }
    case S_LOW_BACKSLASH:
        if (cp != '\\') return 0;
        s->phase = S_LOW_U;
        return 1;
    case S_LOW_U:
        if (cp != 'u') return 0;
        s->phase = S_LOW_HEX;
        s->b = 0; /* a: the high surrogate; b: the low unit's value << 2 | digits read */
        return 1;
    case S_LOW_HEX: {
        int d = hex_value(cp);
        if (d < 0) return 0;
        int32_t count = s->b & 3, value = s->b >> 2;
        int64_t width = (int64_t)1 << (4 * (3 - count)), lo = ((int64_t)value * 16 + d) * width;
        if (!low_allowed(x, s, f, s->a, lo, lo + width - 1)) return 0;
        value = value * 16 + d;
        if (count < 3) {
            s->b = value << 2 | (count + 1);
            return 1;
        }
        int32_t decoded = 0x10000 + (s->a - 0xD800) * 0x400 + (value - 0xDC00);
        s->phase = S_BODY;
        s->a = s->b = 0;
        return content_step(x, s, f, decoded);
    }
    }
    return 0;
}

/* The machine's step on one decoded character. */
static int mstep(const Ctx *x, WHead *w, MFrame *local, int32_t cp) {
    MState *s = &w->h;
    switch (s->lex) {
    case L_NONE: return step_structure(x, w, local, cp);
    case L_STRING: return step_string(x, w, local, cp);
    case L_LITERAL: {
        const char *word = LITERALS[s->node];
        if (cp != (unsigned char)word[s->phase]) return 0;
        if (word[++s->phase] == '\0') {
            *s = (MState){L_NONE, 0, 0, 0, 0, 0, 0};
            value_done(x, w, local);
        }
        return 1;
    }
    case L_NUMBER: {
        const int32_t *r = rec(x, s->node);
        if (number_step(r, s, cp)) return 1;
        if (!number_ends(r, s)) return 0;
        *s = (MState){L_NONE, 0, 0, 0, 0, 0, 0};
        value_done(x, w, local);
        return step_structure(x, w, local, cp);
    }
    }
    return 0;
}

static int mcan_end(const Ctx *x, const WHead *w, const MFrame *local) {
    if (depth_of(w) != 1) return 0;
    const MFrame *f = w->local > 0 ? &local[0] : &x->orig[0];
    if (w->h.lex == L_NUMBER) return number_ends(rec(x, w->h.node), &w->h);
    return w->h.lex == L_NONE && f->phase == P_AFTER;
}

/* Whether a string's body may read as itself some character in [lo, hi], all beyond ASCII. */
static int raw_meets(const Ctx *x, const MState *s, const MFrame *f, int64_t lo, int64_t hi) {
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_STRING) {
        if (r[1] == C_CAPPED) return capped_meets(x, r, s, lo, hi, 0);
        if (r[1] != C_AUTOMATON) return content_allows(x, s, f, (int32_t)lo); /* every character alike */
        const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
        const int32_t *as = i32(a->allow_start), *alo = i32(a->allow_lo), *ahi = i32(a->allow_hi);
        int words = frame_unique(x, f) == U_WORDS;
        for (int32_t k = as[s->cstate]; k < as[s->cstate + 1]; k++) {
            if (alo[k] > hi || ahi[k] < lo) continue;
            if (!words || words_left_in(x, s, f, alo[k] > lo ? alo[k] : lo, ahi[k] < hi ? ahi[k] : hi)) return 1;
        }
        return 0;
    }
    if (takes_extras(r, f)) return 1; /* an open object's key */
    if (s->cstate < 0) return 0;
    const int32_t *t = x->c + s->cstate;
    for (int32_t k = 0; k < t[3]; k++) {
        int32_t cp = t[4 + 2 * k];
        if (cp >= lo && cp <= hi && key_viable(x->c + t[5 + 2 * k], f)) return 1;
    }
    return 0;
}

/* Whether some character whose UTF-8 encoding starts with these bytes may come next (only a string's body
   takes characters beyond ASCII). */
static int mprefix_allowed(const Ctx *x, const WHead *w, const MFrame *local, const uint8_t *prefix, int count) {
    int64_t lo, hi;
    if (w->h.lex != L_STRING || w->h.phase != S_BODY) return 0;
    if (!utf8_prefix_interval(prefix, count, &lo, &hi)) return 0;
    const MFrame *f = w->local > 0 ? &local[w->local - 1] : &x->orig[w->base - 1];
    return raw_meets(x, &w->h, f, lo, hi);
}

/* ---- the Python type: validation, state checks, step, mask ---- */

static void Machine_dealloc(MachineObject *self) {
    Py_XDECREF(self->code);
    Py_XDECREF(self->automata);
    free(self->trie_owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int bad_program(const char *what, Py_ssize_t where) {
    PyErr_Format(PyExc_ValueError, "Machine: %s (at code[%zd])", what, where);
    return 0;
}

/* Checks every record and key trie node of the program, once: node ids, offsets, counts, sorted edges. */
/* Whether a NUM_SET option's fields and automaton table are whole inside the program. */
static int set_table_ok(const int32_t *c, Py_ssize_t size, const int32_t *o) {
    Py_ssize_t at = o - c, states = o[4];
    if (o[2] || o[5] || o[6] || o[7] != 1 || o[8] || states < 1 || states > (1 << 20) || o[3] < NUM_WORDS ||
        at + o[3] + states * (SET_CLASSES + 1) > size)
        return 0;
    for (Py_ssize_t k = 0; k < states * SET_CLASSES; k++)
        if (o[o[3] + k] < -1 || o[o[3] + k] >= states) return 0;
    for (Py_ssize_t k = 0; k < states; k++)
        if (o[o[3] + states * SET_CLASSES + k] < 0 || o[o[3] + states * SET_CLASSES + k] > 1) return 0;
    return 1;
}

static int Machine_validate(MachineObject *m) {
    const int32_t *c = m->c;
    Py_ssize_t size = m->size;
    if (size < MH_SIZE || c[MH_MAGIC] != M_MAGIC) return bad_program("not a machine program", 0);
    Py_ssize_t nodes = c[MH_NODES];
    if (nodes < 1 || MH_SIZE + nodes > size) return bad_program("bad node count", MH_NODES);
    m->nodes = nodes;
    for (int k = MH_ROOT; k <= MH_ANY_NUMBER; k++)
        if (c[k] < 0 || c[k] >= nodes) return bad_program("bad node id in the header", k);
    if (c[MH_WS] < 0 || c[MH_LEAD] < 0 || c[MH_TRAIL] < 0 || c[MH_DEPTH] < 0)
        return bad_program("negative limit in the header", MH_WS);
    m->trie_owner = malloc(sizeof(int32_t) * (size_t)size);
    if (m->trie_owner == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t k = 0; k < size; k++) m->trie_owner[k] = -1;
    /* key tries first: every node reachable from an object's root, checked as it is met */
    for (Py_ssize_t n = 0; n < nodes; n++) {
        Py_ssize_t at = c[MH_SIZE + n];
        if (at < MH_SIZE + nodes || at >= size) return bad_program("node offset out of range", MH_SIZE + n);
        int32_t kind = c[at];
        Py_ssize_t need = kind == K_ANY || kind == K_NULL ? 1 : kind == K_BOOL || kind == K_NUMSET ? 2 : kind == K_NUMBER ? NUM_WORDS
                        : kind == K_STRING ? 4 : kind == K_ARRAY ? 5 : kind == K_OBJECT ? 6 : kind == K_UNION ? 2 : -1;
        if (need < 0 || at + need > size) return bad_program("bad node record", at);
        const int32_t *r = c + at;
        if (kind == K_STRING) {
            if (r[1] == C_AUTOMATON) {
                if (r[2] < 0 || r[2] >= PyTuple_GET_SIZE(m->automata) || r[3] < 0 ||
                    r[3] >= ((AutomatonObject *)PyTuple_GET_ITEM(m->automata, r[2]))->states)
                    return bad_program("bad string automaton", at);
            } else if (r[1] == C_CAPPED) {
                if (at + 6 > size || r[2] < 0 || r[2] >= PyTuple_GET_SIZE(m->automata) || r[3] < 0 || r[5] < 0)
                    return bad_program("bad capped string", at);
                Py_ssize_t states = ((AutomatonObject *)PyTuple_GET_ITEM(m->automata, r[2]))->states;
                if (r[4] < MH_SIZE + nodes || r[4] + states > size) return bad_program("bad string distances", at);
                for (Py_ssize_t q = 0; q < states; q++)
                    if (c[r[4] + q] < 0 || c[r[4] + q] > r[5]) return bad_program("bad string distance", r[4] + q);
            } else if (r[1] < C_ANY || r[1] > C_LENGTH || r[2] < 0 || r[3] < -1 || (r[3] >= 0 && r[3] < r[2])) {
                return bad_program("bad string record", at);
            }
        }
        if (kind == K_NUMSET && (r[1] < 1 || at + 2 + NUM_WORDS * (Py_ssize_t)r[1] > size))
            return bad_program("bad number set", at);
        int sets = 0;
        for (int32_t i = 0; i < (kind == K_NUMBER ? 1 : kind == K_NUMSET ? r[1] : 0); i++) {
            const int32_t *o = kind == K_NUMBER ? r : r + 2 + NUM_WORDS * i;
            if (o[1] == NUM_SET) {
                if (o[0] != K_NUMBER || !set_table_ok(c, size, o) || ++sets > 1) return bad_program("bad number set record", o - c);
                continue;
            }
            if (o[0] != K_NUMBER || o[1] < NUM_DECIMAL || o[1] > NUM_MULTIPLE || o[2] < 0 || o[2] > 15 ||
                (o[1] && o[2] > 3) || o[8] < 0 || o[8] > PLACES_CAP || (o[1] != NUM_MULTIPLE && o[8]) ||
                (o[1] == NUM_MULTIPLE && o[8] != number_places(r)) || o[7] < 1 || o[7] >= STEP_CAP ||
                (!o[1] && (o[3] <= -(1 << 30) || o[3] >= (1 << 30) || o[4] <= -(1 << 30) || o[4] >= (1 << 30) ||
                           o[5] < -SCALE_CAP || o[5] > SCALE_CAP || o[6] < -SCALE_CAP || o[6] > SCALE_CAP ||
                           o[7] != 1)))
                return bad_program("bad number record", o - c);
        }
        if ((kind == K_NUMBER || kind == K_NUMSET) && number_modulus(r) < 0)
            return bad_program("number steps with too large a common multiple", at);
        if (kind == K_ARRAY) {
            if (r[1] < 0 || r[1] >= nodes || r[2] < 0 || r[2] >= COUNT_CAP || r[3] < -1 || r[3] >= COUNT_CAP ||
                r[4] < 0 || at + 7 + (Py_ssize_t)r[4] > size)
                return bad_program("bad array record", at);
            for (int32_t k = 0; k < r[4]; k++)
                if (r[5 + k] < 0 || r[5 + k] >= nodes) return bad_program("bad prefix node", at + 5 + k);
        }
        if (kind == K_UNION) {
            if (r[1] < 1 || at + 2 + r[1] > size) return bad_program("bad union record", at);
            for (int32_t k = 0; k < r[1]; k++) /* (an option's offset checked before it is read: nodes are
                                                   checked in order, and an option may come later) */
                if (r[2 + k] < 0 || r[2 + k] >= nodes || c[MH_SIZE + r[2 + k]] < MH_SIZE + nodes ||
                    c[MH_SIZE + r[2 + k]] >= size || c[c[MH_SIZE + r[2 + k]]] == K_UNION ||
                    c[c[MH_SIZE + r[2 + k]]] == K_ANY)
                    return bad_program("bad union option", at + 2 + k);
        }
        if (kind == K_OBJECT) {
            if (r[1] < -1 || r[1] >= nodes || r[5] < 0 || r[5] > 63 || at + 6 + r[5] > size)
                return bad_program("bad object record", at);
            for (int32_t k = 0; k < r[5]; k++)
                if (r[6 + k] < 0 || r[6 + k] >= nodes) return bad_program("bad property node", at + 6 + k);
            /* its key trie, depth first with an explicit list of offsets to check */
            Py_ssize_t cap = 64, len = 0;
            int32_t *todo = malloc(sizeof(int32_t) * (size_t)cap);
            if (todo == NULL) {
                PyErr_NoMemory();
                return 0;
            }
            todo[len++] = r[4];
            while (len > 0) {
                int32_t t = todo[--len];
                if (t < MH_SIZE + nodes || t + 4 > size || t + 4 + 2 * (Py_ssize_t)c[t + 3] > size || c[t + 3] < 0 ||
                    c[t] < -1 || c[t] >= r[5]) {
                    free(todo);
                    return bad_program("bad key trie node", t);
                }
                if (m->trie_owner[t] == n) continue;
                if (m->trie_owner[t] >= 0) {
                    free(todo);
                    return bad_program("a key trie node shared by two objects", t);
                }
                m->trie_owner[t] = (int32_t)n;
                for (int32_t k = 0; k < c[t + 3]; k++) {
                    int32_t cp = c[t + 4 + 2 * k], child = c[t + 5 + 2 * k];
                    if (cp < 0 || cp > 0x10FFFF || (k > 0 && cp <= c[t + 2 + 2 * k]) || child <= t) {
                        free(todo);
                        return bad_program("bad key trie edge", t + 4 + 2 * k);
                    }
                    if (len == cap) {
                        int32_t *grown = realloc(todo, sizeof(int32_t) * (size_t)(cap *= 2));
                        if (grown == NULL) {
                            free(todo);
                            PyErr_NoMemory();
                            return 0;
                        }
                        todo = grown;
                    }
                    todo[len++] = child;
                }
            }
            free(todo);
        }
    }
    if (c[MH_MIN_DEPTHS] < MH_SIZE + nodes || c[MH_MIN_DEPTHS] + nodes > size)
        return bad_program("bad min-depth table", MH_MIN_DEPTHS);
    for (Py_ssize_t n = 0; n < nodes; n++)
        if (c[c[MH_MIN_DEPTHS] + n] < 0 || c[c[MH_MIN_DEPTHS] + n] >= ROOM_GUARD)
            return bad_program("bad min depth", c[MH_MIN_DEPTHS] + n);
    for (Py_ssize_t n = 0; n < nodes; n++) { /* uniqueItems arrays: strings as items, and their words */
        Py_ssize_t at = c[MH_SIZE + n];
        const int32_t *r = c + at;
        if (r[0] != K_ARRAY) continue;
        int32_t unique = r[5 + r[4]], words = r[6 + r[4]];
        const int32_t *item = c + c[MH_SIZE + r[1]];
        if (unique == U_NONE) {
            if (words != 0) return bad_program("bad uniqueItems words", at + 6 + r[4]);
            continue;
        }
        m->has_unique = 1;
        if ((unique != U_ANY && unique != U_WORDS) || r[4] != 0 || item[0] != K_STRING)
            return bad_program("bad uniqueItems array", at + 5 + r[4]);
        if (unique == U_ANY) {
            if (words != 0 || !(item[1] == C_ANY || (item[1] == C_LENGTH && item[3] == -1)))
                return bad_program("bad uniqueItems array", at + 5 + r[4]);
            continue;
        }
        if (item[1] != C_AUTOMATON) return bad_program("bad uniqueItems array", at + 5 + r[4]);
        Py_ssize_t states = ((AutomatonObject *)PyTuple_GET_ITEM(m->automata, item[2]))->states;
        if (words < MH_SIZE + nodes || words + states > size) return bad_program("bad uniqueItems words", at + 6 + r[4]);
        for (Py_ssize_t q = 0; q < states; q++)
            if (c[words + q] < 1 || c[words + q] > (1 << 30)) return bad_program("bad uniqueItems word count", words + q);
    }
    for (Py_ssize_t n = 0; n < nodes && m->has_unique; n++) { /* item words and ways do not mix */
        const int32_t *r = c + c[MH_SIZE + n];
        if (r[0] != K_UNION) continue;
        int kinds[K_KINDS] = {0};
        for (int32_t k = 0; k < r[1]; k++) {
            int32_t kind = c[c[MH_SIZE + r[2 + k]]];
            if ((kind == K_OBJECT || kind == K_ARRAY || kind == K_STRING) && ++kinds[kind] > 1)
                return bad_program("a union read several ways beside a uniqueItems array", c[MH_SIZE + n]);
        }
    }
    int32_t header_kinds[5][2] = {{MH_ANY, K_ANY}, {MH_ANY_OBJECT, K_OBJECT}, {MH_ANY_ARRAY, K_ARRAY},
                                  {MH_ANY_STRING, K_STRING}, {MH_ANY_NUMBER, K_NUMBER}};
    for (int k = 0; k < 5; k++)
        if (c[c[MH_SIZE + c[header_kinds[k][0]]]] != header_kinds[k][1])
            return bad_program("a header node of the wrong kind", header_kinds[k][0]);
    return 1;
}

/* The key tries of the objects named in ``names`` (int32 words: per object its node id, its name count, then
   per name its length and code points, in the object's name order), appended to a copy of ``code`` with each
   object's record pointing at its trie's root (r[4]). Returns the new bytes, or NULL with ValueError set. */
static PyObject *with_key_tries(PyObject *code, const int32_t *w, Py_ssize_t words) {
    const int32_t *c = i32(code);
    Py_ssize_t size = n32(code), nodes = size > MH_NODES ? c[MH_NODES] : 0;
    if (nodes < 1 || MH_SIZE + nodes > size) {
        PyErr_SetString(PyExc_ValueError, "Machine: bad node count");
        return NULL;
    }
    /* the tree of one object's names at a time: first child, next sibling, code point, name ending there,
       bits of the names at or below; then written out in preorder */
    Py_ssize_t cap = words + 1, out_len = size, out_cap = size + 4 * words + 64;
    int32_t *first = malloc(sizeof(int32_t) * (size_t)cap), *next = malloc(sizeof(int32_t) * (size_t)cap);
    int32_t *cp = malloc(sizeof(int32_t) * (size_t)cap), *term = malloc(sizeof(int32_t) * (size_t)cap);
    uint32_t *lo = malloc(sizeof(uint32_t) * (size_t)cap), *hi = malloc(sizeof(uint32_t) * (size_t)cap);
    int32_t *at = malloc(sizeof(int32_t) * (size_t)cap), *stack = malloc(sizeof(int32_t) * (size_t)cap);
    int32_t *out = malloc(sizeof(int32_t) * (size_t)out_cap);
    PyObject *result = NULL;
    if (!first || !next || !cp || !term || !lo || !hi || !at || !stack || !out) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(out, c, sizeof(int32_t) * (size_t)size);
    Py_ssize_t i = 0;
    while (i < words) {
        if (i + 2 > words) goto bad;
        int32_t node = w[i], count = w[i + 1];
        i += 2;
        if (node < 0 || node >= nodes || c[MH_SIZE + node] < MH_SIZE + nodes || c[MH_SIZE + node] + 6 > size) goto bad;
        Py_ssize_t record = c[MH_SIZE + node];
        if (c[record] != K_OBJECT || count != c[record + 5] || count < 0 || count > 63) goto bad;
        Py_ssize_t made = 1;
        first[0] = next[0] = -1, cp[0] = 0, term[0] = -1, lo[0] = hi[0] = 0;
        for (int32_t name = 0; name < count; name++) {
            if (i >= words || w[i] < 0 || i + 1 + w[i] > words || made + w[i] > cap) goto bad;
            int32_t length = w[i++], here = 0;
            uint32_t bit_lo = name < 32 ? (uint32_t)1 << name : 0, bit_hi = name >= 32 ? (uint32_t)1 << (name - 32) : 0;
            lo[0] |= bit_lo, hi[0] |= bit_hi;
            for (int32_t k = 0; k < length; k++) {
                int32_t point = w[i++], child = first[here];
                if (point < 0 || point > 0x10FFFF) goto bad;
                while (child >= 0 && cp[child] != point) child = next[child];
                if (child < 0) {
                    child = (int32_t)made++;
                    cp[child] = point, term[child] = -1, first[child] = -1, lo[child] = hi[child] = 0;
                    /* kept sorted by code point among its siblings */
                    int32_t *link = &first[here];
                    while (*link >= 0 && cp[*link] < point) link = &next[*link];
                    next[child] = *link;
                    *link = child;
                }
                here = child;
                lo[here] |= bit_lo, hi[here] |= bit_hi;
            }
            if (term[here] >= 0) goto bad; /* the same name twice */
            term[here] = name;
        }
        /* offsets in preorder (a parent before its children), then the records */
        Py_ssize_t top = 0, offset = out_len;
        stack[top++] = 0;
        while (top > 0) {
            int32_t t = stack[--top], children = 0, reversed[64], nrev = 0;
            at[t] = (int32_t)offset;
            for (int32_t child = first[t]; child >= 0; child = next[child]) children++;
            offset += 4 + 2 * (Py_ssize_t)children;
            /* push in reverse so the smallest code point comes next (any order keeps parents first) */
            for (int32_t child = first[t]; child >= 0; child = next[child]) {
                if (nrev < 64) reversed[nrev++] = child;
                else stack[top++] = child;
            }
            while (nrev > 0) stack[top++] = reversed[--nrev];
        }
        if (offset > INT32_MAX) goto bad;
        if (offset > out_cap) {
            out_cap = 2 * offset;
            int32_t *grown = realloc(out, sizeof(int32_t) * (size_t)out_cap);
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            out = grown;
        }
        for (Py_ssize_t t = 0; t < made; t++) {
            int32_t *o = out + at[t], children = 0;
            o[0] = term[t], o[1] = (int32_t)lo[t], o[2] = (int32_t)hi[t];
            for (int32_t child = first[t]; child >= 0; child = next[child]) {
                o[4 + 2 * children] = cp[child];
                o[5 + 2 * children] = at[child];
                children++;
            }
            o[3] = children;
        }
        out[record + 4] = at[0];
        out_len = offset;
    }
    result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)sizeof(int32_t) * out_len);
    goto done;
bad:
    PyErr_Format(PyExc_ValueError, "Machine: bad key names (at word %zd)", i);
done:
    free(first), free(next), free(cp), free(term), free(lo), free(hi), free(at), free(stack), free(out);
    return result;
}

static PyObject *Machine_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"code", "automata", "names", NULL};
    PyObject *code, *automata, *names = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "SO!|S", kwlist, &code, &PyTuple_Type, &automata, &names))
        return NULL;
    if (PyBytes_GET_SIZE(code) % 4 || (names != NULL && PyBytes_GET_SIZE(names) % 4)) {
        PyErr_SetString(PyExc_ValueError, "Machine: code and names must be int32 words");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(automata); k++) {
        if (!PyObject_TypeCheck(PyTuple_GET_ITEM(automata, k), &AutomatonType)) {
            PyErr_Format(PyExc_TypeError, "Machine: automata[%zd] is not an Automaton", k);
            return NULL;
        }
    }
    if (names != NULL && PyBytes_GET_SIZE(names) > 0) {
        code = with_key_tries(code, i32(names), n32(names));
        if (code == NULL) return NULL;
    } else {
        Py_INCREF(code);
    }
    MachineObject *m = (MachineObject *)type->tp_alloc(type, 0);
    if (m == NULL) {
        Py_DECREF(code);
        return NULL;
    }
    Py_INCREF(automata);
    m->code = code;
    m->automata = automata;
    m->c = i32(code);
    m->size = n32(code);
    if (!Machine_validate(m)) {
        Py_DECREF(m);
        return NULL;
    }
    return (PyObject *)m;
}

/* Checks a state's bytes against the program: its size, every node id, phase and lexeme field that the
   step reads as an index, and the item words of a uniqueItems array on top (their count in ``*words``).
   Returns the number of frames, or -1 with ValueError set. */
static Py_ssize_t check_state(const MachineObject *m, const uint8_t *data, Py_ssize_t len, Py_ssize_t *words) {
    if (len < (Py_ssize_t)sizeof(MState)) goto bad;
    MState s;
    memcpy(&s, data, sizeof s);
    Py_ssize_t frames = s.frames;
    if (frames < 1 || frames > (len - (Py_ssize_t)sizeof(MState)) / (Py_ssize_t)sizeof(MFrame)) goto bad;
    Py_ssize_t rest = len - (Py_ssize_t)sizeof(MState) - frames * (Py_ssize_t)sizeof(MFrame);
    if (rest % 4) goto bad;
    *words = rest / 4;
    const MFrame *f = (const MFrame *)(data + sizeof(MState)); /* (bytes data is aligned) */
    const int32_t *c = m->c;
    for (Py_ssize_t k = 0; k < frames; k++) {
        int32_t node = f[k].node;
        if ((k == 0) != (node < 0)) goto bad;
        if (f[k].ws < 0) goto bad;
        if (k == 0) {
            if (f[k].phase != P_BEFORE && f[k].phase != P_VALUE && f[k].phase != P_AFTER) goto bad;
            continue;
        }
        if (node >= m->nodes || f[k].phase < P_OPEN || f[k].phase > P_KEY) goto bad;
        const int32_t *r = c + c[MH_SIZE + node];
        if (r[0] == K_OBJECT) {
            if ((f[k].phase == P_KEY_DONE || f[k].phase == P_COLON) && (f[k].count < -1 || f[k].count >= r[5])) goto bad;
        } else if (r[0] != K_ARRAY || f[k].phase == P_KEY || f[k].phase == P_KEY_DONE || f[k].phase == P_COLON ||
                   f[k].count < 0 || f[k].count > COUNT_CAP) {
            goto bad;
        }
    }
    /* the item words: only under a uniqueItems array, always the top frame */
    const int32_t *u = (const int32_t *)(data + sizeof(MState) + (size_t)frames * sizeof(MFrame));
    int top_unique = 0;
    for (Py_ssize_t k = 1; k < frames; k++) {
        const int32_t *r = c + c[MH_SIZE + f[k].node];
        if (r[0] != K_ARRAY || array_unique(r) == U_NONE) continue;
        if (k != frames - 1 || f[k].seen_hi != 0) goto bad;
        top_unique = 1;
    }
    if (!top_unique && *words) goto bad;
    if (top_unique) {
        const MFrame *t = &f[frames - 1];
        int reading = s.lex == L_STRING;
        if (reading && (s.n < 0 || s.node < 0 || s.node >= m->nodes || c[c[MH_SIZE + s.node]] != K_STRING)) goto bad;
        if (!reading && s.lex != L_NONE) goto bad;
        if ((Py_ssize_t)t->seen_lo + (reading ? s.n : 0) != *words) goto bad;
        for (Py_ssize_t q = 0; q < *words; q++)
            if (u[q] < 0 || u[q] > 0x10FFFF || (u[q] >= 0xD800 && u[q] <= 0xDFFF)) goto bad;
        Py_ssize_t items = 0;
        for (Py_ssize_t p = t->seen_lo; p > 0; items++) { /* each seen item's length after its code points */
            if (u[p - 1] > p - 1) goto bad;
            p -= (Py_ssize_t)u[p - 1] + 1;
        }
        if (items != t->count - (reading ? 1 : 0)) goto bad;
    }
    if (s.lex != L_STRING && s.lex != L_NUMBER && s.n) goto bad;
    if (s.lex != L_NUMBER && (s.p_lo || s.p_hi || s.digits || s.fraction || s.tails || s.exp_sign || s.exp_value))
        goto bad;
    switch (s.lex) {
    case L_NONE: break;
    case L_STRING: {
        if (s.node < 0 || s.node >= m->nodes || s.phase < S_BODY || s.phase > S_LOW_HEX) goto bad;
        const int32_t *r = c + c[MH_SIZE + s.node];
        if (r[0] == K_OBJECT) {
            if (f[frames - 1].node != s.node || f[frames - 1].phase != P_KEY) goto bad;
            if (s.cstate != -1 && (s.cstate < 0 || s.cstate >= m->size || m->trie_owner[s.cstate] != s.node)) goto bad;
        } else if (r[0] != K_STRING || s.cstate < 0) {
            goto bad;
        } else if (r[1] == C_AUTOMATON &&
                   s.cstate >= ((AutomatonObject *)PyTuple_GET_ITEM(m->automata, r[2]))->states) {
            goto bad;
        } else if (r[1] == C_LENGTH && r[3] >= 0 && s.cstate > r[3]) {
            goto bad;
        } else if (r[1] == C_CAPPED &&
                   (s.cstate >= ((AutomatonObject *)PyTuple_GET_ITEM(m->automata, r[2]))->states || s.n < 0 || s.n > r[3])) {
            goto bad;
        }
        if ((r[0] == K_OBJECT || r[1] != C_CAPPED) && !top_unique) {
            if (s.n) goto bad;
        }
        switch (s.phase) { /* the escape's fields: a hex value of as many digits as read, a high surrogate */
        case S_BODY:
        case S_ESCAPE:
            if (s.a || s.b) goto bad;
            break;
        case S_HEX:
            if (s.b < 0 || s.b > 3 || s.a < 0 || s.a >= (1 << (4 * s.b))) goto bad;
            break;
        case S_LOW_BACKSLASH:
        case S_LOW_U:
            if (s.a < 0xD800 || s.a > 0xDBFF || s.b) goto bad;
            break;
        case S_LOW_HEX:
            if (s.a < 0xD800 || s.a > 0xDBFF || s.b < 0 || (s.b >> 2) >= (1 << (4 * (s.b & 3)))) goto bad;
            break;
        }
        break;
    }
    case L_NUMBER: {
        if (s.node < 0 || s.node >= m->nodes ||
            (c[c[MH_SIZE + s.node]] != K_NUMBER && c[c[MH_SIZE + s.node]] != K_NUMSET) || s.phase < N_START ||
            s.phase > N_EXP || s.a < 0 || s.a > 1)
            goto bad;
        const int32_t *r = c + c[MH_SIZE + s.node];
        uint64_t mag = number_magnitude(&s);
        if (mag >= MAG_EXACT && mag - MAG_EXACT >= (uint64_t)number_modulus(r)) goto bad;
        int32_t set_states = 0; /* the set option's states: its automaton state in n, else n is 0 */
        for (int i = 0; i < number_options(r); i++)
            if (number_option(r, i)[1] == NUM_SET) set_states = number_option(r, i)[4];
        if (set_states ? s.n < -1 || s.n >= set_states : s.n != 0) goto bad;
        int64_t p = (int64_t)((uint64_t)(uint32_t)s.p_hi << 32 | (uint32_t)s.p_lo); /* (p_hi is unchecked here) */
        if (p < 0 || p >= pow10i(DEC_KEPT) || s.digits < 0 || s.digits > DEC_CAP || s.fraction < 0 ||
            s.fraction > DEC_CAP || s.tails < 0 || s.tails > (3 | NONZERO_FRACTION) || s.exp_sign < 0 ||
            s.exp_sign > 2 || s.exp_value < 0 || s.exp_value > DEC_CAP)
            goto bad;
        break;
    }
    case L_LITERAL:
        if (s.node < 0 || s.node > 2 || s.phase < 1 || s.phase >= (int32_t)strlen(LITERALS[s.node])) goto bad;
        break;
    default: goto bad;
    }
    return frames;
bad:
    PyErr_SetString(PyExc_ValueError, "machine: not a state of this program");
    return -1;
}

/* A state's ways: one single state (header and frames), or, after a character that opened a union several
   ways (fork_options), several single states one after another, each read on its own (a character
   is allowed where some way takes it; the Python parsers' UnionParser keeps its branches so). Fills
   ``at``/``lens`` (MAX_WAYS entries) with each way's offset and length and returns how many, or -1 with
   ValueError set. */
#define MAX_WAYS 64
static Py_ssize_t state_ways(const MachineObject *m, const uint8_t *data, Py_ssize_t len, Py_ssize_t *at,
                             Py_ssize_t *lens) {
    Py_ssize_t ways = 0, off = 0;
    while (off < len) {
        MState s;
        if (ways == MAX_WAYS || len - off < (Py_ssize_t)sizeof(MState)) goto bad;
        memcpy(&s, data + off, sizeof s);
        if (s.frames < 1 || s.frames > (len - off - (Py_ssize_t)sizeof(MState)) / (Py_ssize_t)sizeof(MFrame)) goto bad;
        Py_ssize_t size = (Py_ssize_t)sizeof(MState) + (Py_ssize_t)s.frames * (Py_ssize_t)sizeof(MFrame);
        const MFrame *top = (const MFrame *)(data + off + sizeof(MState)) + (s.frames - 1);
        if (s.frames > 1 && top->node >= 0 && top->node < m->nodes) { /* a uniqueItems array's item words */
            const int32_t *r = m->c + m->c[MH_SIZE + top->node];
            if (r[0] == K_ARRAY && array_unique(r) != U_NONE) {
                if (s.lex == L_STRING && s.n < 0) goto bad;
                int64_t words = (int64_t)top->seen_lo + (s.lex == L_STRING ? s.n : 0);
                if (words > (len - off - size) / 4) goto bad;
                size += 4 * (Py_ssize_t)words;
            }
        }
        Py_ssize_t words;
        if (check_state(m, data + off, size, &words) < 0) return -1;
        if (words && off + size < len) goto bad; /* (a state of several ways has no item words) */
        at[ways] = off;
        lens[ways++] = size;
        off += size;
    }
    if (ways > 1 && m->has_unique) goto bad;
    if (ways > 0) return ways;
bad:
    PyErr_SetString(PyExc_ValueError, "machine: not a state of this program");
    return -1;
}

static void ctx_of(Ctx *x, const MachineObject *m, const uint8_t *data) {
    const int32_t *c = m->c;
    *x = (Ctx){c, &PyTuple_GET_ITEM(m->automata, 0), (const MFrame *)(data + sizeof(MState)), c[MH_WS], c[MH_LEAD],
               c[MH_TRAIL], c[MH_DEPTH], c[MH_ASCII_ESCAPES], NULL, 0, 0};
}

/* The state's bytes from a working state: the original frames kept, then the local ones, then the item
   words of a uniqueItems array on top (its frame's seen_hi made 0: they start right there). */
static PyObject *state_bytes(const Ctx *x, const WHead *w, const MFrame *local) {
    Py_ssize_t frames = depth_of(w), words = 0;
    const MFrame *top = w->local > 0 ? &local[w->local - 1] : &x->orig[w->base - 1];
    int unique = frame_unique(x, top) != U_NONE;
    if (unique) words = (Py_ssize_t)top->seen_lo + (w->h.lex == L_STRING ? w->h.n : 0);
    Py_ssize_t head = (Py_ssize_t)sizeof(MState) + frames * (Py_ssize_t)sizeof(MFrame);
    PyObject *out = PyBytes_FromStringAndSize(NULL, head + 4 * words);
    if (out == NULL) return NULL;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
    MState h = w->h;
    h.frames = (int32_t)frames;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, x->orig, sizeof(MFrame) * (size_t)w->base);
    memcpy(p + sizeof h + sizeof(MFrame) * (size_t)w->base, local, sizeof(MFrame) * (size_t)w->local);
    if (unique) {
        MFrame last = *top;
        last.seen_hi = 0;
        memcpy(p + head - sizeof(MFrame), &last, sizeof last);
        memcpy(p + head, x->u + top->seen_hi, 4 * (size_t)words);
    }
    return out;
}

/* Gives a one-way state (``len`` bytes, checked) its buffer of item words: its own, then room for ``extra``
   more (a step or walk appends at most one word a byte). The caller frees x->u; 0 when out of memory. */
static int give_words(Ctx *x, const uint8_t *data, Py_ssize_t len, Py_ssize_t extra) {
    MState h;
    memcpy(&h, data, sizeof h);
    Py_ssize_t words = (len - (Py_ssize_t)sizeof(MState) - (Py_ssize_t)h.frames * (Py_ssize_t)sizeof(MFrame)) / 4;
    x->u_own = words;
    x->u_cap = words + extra + 8;
    x->u = malloc(sizeof(int32_t) * (size_t)x->u_cap);
    if (x->u == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    memcpy(x->u, data + (len - 4 * words), 4 * (size_t)words);
    return 1;
}

static PyObject *Machine_start(MachineObject *self, PyObject *Py_UNUSED(ignored)) {
    MState h = {L_NONE, 0, 0, 0, 0, 0, 1};
    MFrame root = {-1, P_BEFORE, 0, 0, 0, 0};
    PyObject *out = PyBytes_FromStringAndSize(NULL, sizeof h + sizeof root);
    if (out == NULL) return NULL;
    memcpy(PyBytes_AS_STRING(out), &h, sizeof h);
    memcpy(PyBytes_AS_STRING(out) + sizeof h, &root, sizeof root);
    return out;
}

typedef struct {
    uint8_t *buf;
    Py_ssize_t len;
} Way;

static int way_order(const void *a, const void *b) {
    const Way *u = a, *v = b;
    if (u->len != v->len) return u->len < v->len ? -1 : 1;
    return memcmp(u->buf, v->buf, (size_t)u->len);
}

static void free_ways(Way *ways, Py_ssize_t count) {
    for (Py_ssize_t i = 0; i < count; i++) free(ways[i].buf);
}

/* Adds the single state (x, w, local) to ``ways`` unless it is there already; 0 (ValueError set) past
   MAX_WAYS or out of memory. */
static int add_way(const Ctx *x, const WHead *w, const MFrame *local, Way *ways, Py_ssize_t *count) {
    Py_ssize_t frames = depth_of(w), len = (Py_ssize_t)sizeof(MState) + frames * (Py_ssize_t)sizeof(MFrame);
    uint8_t *buf = malloc((size_t)len);
    if (buf == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    MState h = w->h;
    h.frames = (int32_t)frames;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, x->orig, sizeof(MFrame) * (size_t)w->base);
    memcpy(buf + sizeof h + sizeof(MFrame) * (size_t)w->base, local, sizeof(MFrame) * (size_t)w->local);
    for (Py_ssize_t i = 0; i < *count; i++) {
        if (ways[i].len == len && !memcmp(ways[i].buf, buf, (size_t)len)) {
            free(buf);
            return 1;
        }
    }
    if (*count == MAX_WAYS) {
        free(buf);
        PyErr_SetString(PyExc_ValueError, "machine: a state of more ways than the machine keeps");
        return 0;
    }
    ways[(*count)++] = (Way){buf, len};
    return 1;
}

/* The step of a state of several ways, or of one that a character forks: each character steps every way
   (each of its own ways where it opens a union several ways), equal ways kept once, in a fixed order so that
   equal sets give equal bytes. None when no way takes the text. */
static PyObject *step_ways(const MachineObject *m, const uint8_t *data, Py_ssize_t len, const int32_t *cps,
                           Py_ssize_t n) {
    Way *cur = calloc(MAX_WAYS, sizeof(Way)), *next = calloc(MAX_WAYS, sizeof(Way));
    Py_ssize_t count = 0, at[MAX_WAYS], lens[MAX_WAYS];
    PyObject *result = NULL;
    if (cur == NULL || next == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t ways = state_ways(m, data, len, at, lens);
    if (ways < 0) goto done;
    for (Py_ssize_t i = 0; i < ways; i++) {
        cur[i].buf = malloc((size_t)lens[i]);
        if (cur[i].buf == NULL) {
            PyErr_NoMemory();
            free_ways(cur, i);
            goto done;
        }
        memcpy(cur[i].buf, data + at[i], (size_t)lens[i]);
        cur[i].len = lens[i];
    }
    count = ways;
    for (Py_ssize_t k = 0; k < n && count > 0; k++) {
        Py_ssize_t made = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            for (int32_t pick = 0;; pick++) {
                Ctx x;
                ctx_of(&x, m, cur[i].buf);
                WHead w;
                MFrame local[2];
                memcpy(&w.h, cur[i].buf, sizeof(MState));
                w.base = w.h.frames;
                w.local = 0;
                w.pick = pick;
                w.forks = 1;
                if (mstep(&x, &w, local, cps[k]) && !add_way(&x, &w, local, next, &made)) {
                    free_ways(next, made);
                    free_ways(cur, count);
                    goto done;
                }
                if (w.forks <= pick + 1) break;
            }
        }
        free_ways(cur, count);
        Way *swap = cur;
        cur = next;
        next = swap;
        count = made;
    }
    if (count == 0) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    qsort(cur, (size_t)count, sizeof(Way), way_order);
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) total += cur[i].len;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result != NULL) {
        uint8_t *out = (uint8_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t i = 0; i < count; i++) {
            memcpy(out, cur[i].buf, (size_t)cur[i].len);
            out += cur[i].len;
        }
    }
    free_ways(cur, count);
done:
    free(cur);
    free(next);
    return result;
}

/* The working state of the way at ``off`` of a checked state (state_ways); the item words' buffer (Ctx.u)
   is kept as it was. */
static void load_way(const MachineObject *self, const uint8_t *data, Py_ssize_t off, Ctx *x, WHead *w) {
    int32_t *u = x->u;
    Py_ssize_t own = x->u_own, cap = x->u_cap;
    ctx_of(x, self, data + off);
    x->u = u, x->u_own = own, x->u_cap = cap;
    memcpy(&w->h, data + off, sizeof(MState));
    w->base = w->h.frames;
    w->local = 0;
    w->pick = 0;
    w->forks = 1;
}

/* Checks the state and loads its first way; returns how many ways it has (offsets in ``at``), 0 on error.
   x->u must be NULL or a buffer the caller frees. */
static Py_ssize_t load_state(const MachineObject *self, Py_buffer *state, Ctx *x, WHead *w, Py_ssize_t *at) {
    Py_ssize_t lens[MAX_WAYS];
    Py_ssize_t ways = state_ways(self, state->buf, state->len, at, lens);
    if (ways < 0) return 0;
    load_way(self, state->buf, 0, x, w);
    return ways;
}

/* step(state, text): the state after the UTF-8 text ``text`` (whole characters), or None if refused. */
static PyObject *Machine_step(MachineObject *self, PyObject *args) {
    Py_buffer state, text;
    if (!PyArg_ParseTuple(args, "y*y*", &state, &text)) return NULL;
    PyObject *result = NULL;
    MFrame *local = NULL;
    Ctx x;
    WHead w;
    x.u = NULL;
    Py_ssize_t at[MAX_WAYS], lens[MAX_WAYS];
    Py_ssize_t ways = state_ways(self, state.buf, state.len, at, lens);
    if (ways < 0) goto done;
    const uint8_t *p = text.buf;
    int32_t *cps = PyMem_Malloc(sizeof(int32_t) * (size_t)(text.len + 1));
    if (cps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = decode_strict(p, text.len, cps);
    if (n < 0) {
        PyMem_Free(cps);
        PyErr_SetString(PyExc_ValueError, "machine step: text must be whole UTF-8 characters");
        goto done;
    }
    local = malloc(sizeof(MFrame) * (size_t)(n + 1));
    if (local == NULL) {
        PyMem_Free(cps);
        PyErr_NoMemory();
        goto done;
    }
    int ok = 1, forked = ways > 1;
    if (!forked) {
        load_way(self, state.buf, 0, &x, &w);
        if (!give_words(&x, state.buf, state.len, text.len)) {
            PyMem_Free(cps);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n && ok && !forked; k++) {
        w.pick = 0;
        w.forks = 1;
        ok = mstep(&x, &w, local, cps[k]);
        forked = w.forks > 1;
    }
    if (forked) { /* several ways (or already several): each character steps each way */
        result = step_ways(self, state.buf, state.len, cps, n);
    } else if (!ok) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else {
        result = state_bytes(&x, &w, local);
    }
    PyMem_Free(cps);
done:
    free(local);
    free(x.u);
    PyBuffer_Release(&state);
    PyBuffer_Release(&text);
    return result;
}

static PyObject *Machine_can_end(MachineObject *self, PyObject *arg) {
    Py_buffer state;
    if (PyObject_GetBuffer(arg, &state, PyBUF_SIMPLE) < 0) return NULL;
    Ctx x;
    WHead w;
    Py_ssize_t at[MAX_WAYS];
    PyObject *result = NULL;
    x.u = NULL;
    Py_ssize_t ways = load_state(self, &state, &x, &w, at);
    if (ways > 0) {
        int end = 0;
        for (Py_ssize_t i = 0; i < ways && !end; i++) {
            load_way(self, state.buf, at[i], &x, &w);
            end = mcan_end(&x, &w, NULL);
        }
        result = PyBool_FromLong(end);
    }
    PyBuffer_Release(&state);
    return result;
}

/* Sorts a list of (lo, hi) intervals and merges those that overlap or touch; 0 with an error set. */
static int merge_intervals(PyObject **list) {
    if (PyList_Sort(*list) < 0) return 0;
    PyObject *out = PyList_New(0);
    if (out == NULL) return 0;
    long lo = -1, hi = -2;
    Py_ssize_t n = PyList_GET_SIZE(*list);
    for (Py_ssize_t i = 0; i <= n; i++) {
        long a = 0, b = 0;
        if (i < n) {
            PyObject *pair = PyList_GET_ITEM(*list, i);
            a = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0));
            b = PyLong_AsLong(PyTuple_GET_ITEM(pair, 1));
            if (i > 0 && a <= hi + 1) {
                if (b > hi) hi = b;
                continue;
            }
        }
        if (i > 0) {
            PyObject *pair = Py_BuildValue("(ll)", lo, hi);
            if (pair == NULL || PyList_Append(out, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(out);
                return 0;
            }
            Py_DECREF(pair);
        }
        lo = a;
        hi = b;
    }
    Py_DECREF(*list);
    *list = out;
    return 1;
}

/* allowed(state): the characters that may come next, as a list of (lo, hi) code-point intervals. */
static PyObject *Machine_allowed(MachineObject *self, PyObject *arg) {
    Py_buffer state;
    if (PyObject_GetBuffer(arg, &state, PyBUF_SIMPLE) < 0) return NULL;
    Ctx x;
    WHead w;
    Py_ssize_t at[MAX_WAYS];
    PyObject *result = NULL, *list = NULL;
    x.u = NULL;
    Py_ssize_t ways = load_state(self, &state, &x, &w, at);
    if (ways == 0) goto done;
    if (ways == 1 && !give_words(&x, state.buf, state.len, 8)) goto done;
    list = PyList_New(0);
    if (list == NULL) goto done;
    MFrame local[2];
    int32_t run = -1;
    for (int32_t cp = 0; cp <= 0x80; cp++) {
        int ok = 0;
        for (Py_ssize_t i = 0; i < ways && !ok && cp < 0x80; i++) {
            load_way(self, state.buf, at[i], &x, &w);
            ok = mstep(&x, &w, local, cp);
        }
        if (ok && run < 0) run = cp;
        if (!ok && run >= 0) {
            PyObject *pair = Py_BuildValue("(ii)", run, cp - 1);
            if (pair == NULL || PyList_Append(list, pair) < 0) {
                Py_XDECREF(pair);
                goto done;
            }
            Py_DECREF(pair);
            run = -1;
        }
    }
    for (Py_ssize_t way = 0; way < ways; way++) { /* characters beyond ASCII: a string's body, per way */
        load_way(self, state.buf, at[way], &x, &w);
        if (w.h.lex == L_STRING && w.h.phase == S_BODY) {
            const MFrame *f = &x.orig[w.base - 1];
            const int32_t *r = rec(&x, w.h.node);
            const int32_t *lo = NULL, *hi = NULL;
            int32_t from = 0, to = 0, one[2] = {0x80, 0x10FFFF};
            if (r[0] == K_STRING && r[1] == C_CAPPED) {
                const AutomatonObject *a = (const AutomatonObject *)x.automata[r[2]];
                const int32_t *clo = i32(a->class_lo), *chi = i32(a->class_hi);
                for (Py_ssize_t i = 0; i < a->intervals; i++) {
                    if (chi[i] < 0x80 || !capped_meets(&x, r, &w.h, clo[i], chi[i], 0)) continue;
                    PyObject *pair = Py_BuildValue("(ii)", clo[i] < 0x80 ? 0x80 : clo[i], chi[i]);
                    if (pair == NULL || PyList_Append(list, pair) < 0) {
                        Py_XDECREF(pair);
                        goto done;
                    }
                    Py_DECREF(pair);
                }
            } else if (r[0] == K_STRING && r[1] == C_AUTOMATON && frame_unique(&x, f) == U_WORDS) {
                /* each allowed interval less the characters after which only seen words are left */
                const AutomatonObject *a = (const AutomatonObject *)x.automata[r[2]];
                const int32_t *alo = i32(a->allow_lo), *ahi = i32(a->allow_hi), *as = i32(a->allow_start);
                for (int32_t k = as[w.h.cstate]; k < as[w.h.cstate + 1]; k++) {
                    for (int64_t from_cp = alo[k] < 0x80 ? 0x80 : alo[k]; from_cp <= ahi[k];) {
                        int64_t stop = next_blocked(&x, &w.h, f, from_cp, ahi[k]), end = stop < 0 ? ahi[k] : stop - 1;
                        if (end >= from_cp) {
                            PyObject *pair = Py_BuildValue("(ii)", (int)from_cp, (int)end);
                            if (pair == NULL || PyList_Append(list, pair) < 0) {
                                Py_XDECREF(pair);
                                goto done;
                            }
                            Py_DECREF(pair);
                        }
                        if (stop < 0) break;
                        from_cp = stop + 1;
                    }
                }
            } else if (r[0] == K_STRING && r[1] == C_AUTOMATON) {
                const AutomatonObject *a = (const AutomatonObject *)x.automata[r[2]];
                lo = i32(a->allow_lo), hi = i32(a->allow_hi);
                from = i32(a->allow_start)[w.h.cstate], to = i32(a->allow_start)[w.h.cstate + 1];
            } else if (r[0] == K_STRING || takes_extras(r, f)) {
                if (raw_meets(&x, &w.h, f, 0x80, 0x10FFFF)) lo = &one[0], hi = &one[1], to = 1;
            }
            for (int32_t k = from; k < to; k++) {
                if (hi[k] < 0x80) continue;
                PyObject *pair = Py_BuildValue("(ii)", lo[k] < 0x80 ? 0x80 : lo[k], hi[k]);
                if (pair == NULL || PyList_Append(list, pair) < 0) {
                    Py_XDECREF(pair);
                    goto done;
                }
                Py_DECREF(pair);
            }
            if (r[0] == K_OBJECT && !takes_extras(r, f) && w.h.cstate >= 0) {
                const int32_t *t = x.c + w.h.cstate;
                for (int32_t k = 0; k < t[3]; k++) {
                    int32_t cp = t[4 + 2 * k];
                    if (cp < 0x80 || !key_viable(x.c + t[5 + 2 * k], f)) continue;
                    PyObject *pair = Py_BuildValue("(ii)", cp, cp);
                    if (pair == NULL || PyList_Append(list, pair) < 0) {
                        Py_XDECREF(pair);
                        goto done;
                    }
                    Py_DECREF(pair);
                }
            }
        }
    }
    if (ways > 1 && !merge_intervals(&list)) goto done; /* (each way's intervals, sorted and merged) */
    result = list;
    list = NULL;
done:
    Py_XDECREF(list);
    free(x.u);
    PyBuffer_Release(&state);
    return result;
}

/* ---- the mask: the flat trie walked with the machine ---- */

typedef struct {
    WHead w;
    int32_t edge, end, pending_count;
    int32_t pick; /* the way the next step of this level's current edge takes (fork_options) */
    uint8_t pending[4];
    uint64_t first[4]; /* the bytes an edge may hold (next_bytes): the others are passed over unstepped */
    uint8_t start_body; /* still in the body of the string the walk started in (key_walk) */
} MLevel;

typedef struct {
    const TrieObject *trie;
    const int32_t *es, *ec, *ts, *ti, *se;
    const uint8_t *eb;
    uint32_t *out;
    Ctx x;
    int32_t room; /* local frames per level */
    /* a walk along an open object's names (mask_body): below the start, in the key's body, only the paths
       that spell a name's beginning are walked; the nodes past their quotes and backslashes are ``handled``
       (the shared exits pass over them) */
    int key_walk;
    int32_t *handled;
    Py_ssize_t handled_len, handled_cap;
    /* an inside walk (Machine.inside): a string's quotes and backslashes are not stepped but recorded as
       exits (node past them, content state, the byte), ``exits_len`` int32 words of ``exits_cap`` */
    int inside, failed;
    int32_t *exits;
    Py_ssize_t exits_len, exits_cap;
    MLevel *levels;
    MFrame *locals; /* room frames per level */
} MWalk;

static inline void memit(const MWalk *k, int32_t node) {
    for (int32_t e = k->ts[node]; e < k->ts[node + 1]; e++) {
        uint32_t id = (uint32_t)k->ti[e];
        k->out[id >> 5] |= (uint32_t)1 << (id & 31);
    }
}

/* The ASCII bytes a string's body reads as themselves: not the quote, the backslash or a control character. */
static const uint64_t BODY_ASCII[2] = {~(uint64_t)0xFFFFFFFF & ~((uint64_t)1 << '"'), ~((uint64_t)1 << ('\\' - 64))};

/* Whether every token below ``node`` (reached on a whole character) is accepted with the state unchanged but
   for its length: the state is in a string's body whose content takes any character (up to a length, or an
   open object's key off the trie of its names), and
   the paths below hold only characters read as themselves there, no more of them than the content takes. */
static int plain_below(const MWalk *k, const WHead *w, const MFrame *local, int32_t node) {
    if (w->h.lex != L_STRING || w->h.phase != S_BODY) return 0;
    const int32_t *r = rec(&k->x, w->h.node);
    if (r[0] == K_OBJECT) { /* a key: any text off the names */
        const MFrame *f = w->local > 0 ? &local[w->local - 1] : &k->x.orig[w->base - 1];
        if (!takes_extras(r, f) || w->h.cstate >= 0) return 0;
    } else if (r[1] != C_ANY && r[1] != C_LENGTH) {
        return 0;
    }
    const TrieObject *t = k->trie;
    if ((t->below_flags[node] & (NODE_BOUNDARY | BELOW_INVALID)) != NODE_BOUNDARY) return 0;
    if ((t->below_ascii[2 * node] & ~BODY_ASCII[0]) || (t->below_ascii[2 * node + 1] & ~BODY_ASCII[1])) return 0;
    if (r[0] == K_STRING && r[1] == C_LENGTH && r[3] >= 0 && t->below_chars[node] > r[3] - w->h.cstate) return 0;
    return 1;
}

/* Whether every token below ``node`` (reached on a whole character) is accepted because the state reads the
   digits of a number without bounds (its integer part past a first nonzero digit, its fraction or its
   exponent, where any more digits are taken) and the paths below hold digits only. */
static int digits_below(const MWalk *k, const WHead *w, int32_t node) {
    const MState *s = &w->h;
    if (s->lex != L_NUMBER || (s->phase != N_INT && s->phase != N_FRAC && s->phase != N_EXP)) return 0;
    const int32_t *r = rec(&k->x, s->node);
    for (int i = 0; i < number_options(r); i++) /* (no bounds, steps or sets of values: a number's bare syntax) */
        if (option_bounded(number_option(r, i))) return 0;
    const TrieObject *t = k->trie;
    return (t->below_flags[node] & (NODE_BOUNDARY | BELOW_INVALID | BELOW_NON_ASCII)) == NODE_BOUNDARY &&
           !(t->below_ascii[2 * node] & ~0x03ff000000000000ULL) && !t->below_ascii[2 * node + 1];
}

/* Whether every token below ``node`` (reached on a whole character) is in the mask, from the summaries: the
   state reads a string's body over an automaton state with a uniform run (any string of at most
   run_length characters of its class is accepted, _native.c's Automaton_runs), and the paths below hold
   only characters of that class a body reads as themselves, no more of them than the run; or, where the
   run ends in a state that accepts none of them, the tokens below of at most that many characters. Emits
   them and returns 1; 0 when the subtree must be walked. */
static int automaton_covers(const MWalk *k, const WHead *w, const MFrame *local, int32_t node) {
    if (w->h.lex != L_STRING || w->h.phase != S_BODY) return 0;
    const int32_t *r = rec(&k->x, w->h.node);
    if (r[0] != K_STRING || (r[1] != C_AUTOMATON && r[1] != C_CAPPED)) return 0;
    if (frame_unique(&k->x, w->local > 0 ? &local[w->local - 1] : &k->x.orig[w->base - 1]) != U_NONE) return 0;
    const AutomatonObject *a = (const AutomatonObject *)k->x.automata[r[2]];
    int32_t state = w->h.cstate, limit = a->run_length[state];
    const TrieObject *t = k->trie;
    uint8_t flags = t->below_flags[node];
    /* (under a maximum length, only where every state still reaches an accepting one past the subtree) */
    if (r[1] == C_CAPPED && (int64_t)r[3] - w->h.n - t->below_chars[node] < r[5]) return 0;
    if (limit <= 0 || (flags & (NODE_BOUNDARY | BELOW_INVALID)) != NODE_BOUNDARY) return 0;
    if ((t->below_ascii[2 * node] & ~(a->run_ascii[2 * state] & BODY_ASCII[0])) ||
        (t->below_ascii[2 * node + 1] & ~(a->run_ascii[2 * state + 1] & BODY_ASCII[1])))
        return 0;
    if ((flags & BELOW_NON_ASCII) && !a->run_non_ascii[state]) return 0;
    int32_t end = k->ts[k->se[node]];
    if (t->below_chars[node] <= limit) {
        for (int32_t e = k->ts[node]; e < end; e++) {
            uint32_t id = (uint32_t)k->ti[e];
            k->out[id >> 5] |= (uint32_t)1 << (id & 31);
        }
        return 1;
    }
    if (!a->run_terminal[state] || r[1] == C_CAPPED) return 0;
    limit += t->node_chars[node];
    for (int32_t e = k->ts[node]; e < end; e++) {
        if (t->tok_chars[e] > limit) continue;
        uint32_t id = (uint32_t)k->ti[e];
        k->out[id >> 5] |= (uint32_t)1 << (id & 31);
    }
    return 1;
}

static inline void add_byte(uint64_t *set, int byte) { set[byte >> 6] |= (uint64_t)1 << (byte & 63); }
static inline void set_ascii(uint64_t *set, uint64_t low, uint64_t high) { set[0] = low, set[1] = high, set[2] = set[3] = 0; }

/* ASCII byte sets (bits of bytes 0-63, then 64-127); WS: whitespace, in every set between values */
#define B_WS 0x0000000100002600ULL, 0x0000000000000000ULL
#define B_NUMBER 0x03ff780100002600ULL, 0x2000002020000020ULL /* digits . e E + - and what may follow */
#define B_ESCAPE 0x0000800400000000ULL, 0x0034404410000000ULL /* " \ / b f n r t u */
#define B_HEX 0x03ff000000000000ULL, 0x0000007e0000007eULL
#define B_OBJ_OPEN 0x0000000500002600ULL, 0x2000000000000000ULL /* " } */
#define B_OBJ_COMMA 0x0000000500002600ULL, 0x0000000000000000ULL /* " */
#define B_KEY_DONE 0x0400000100002600ULL, 0x0000000000000000ULL /* : */
#define B_VALUE 0x03ff200500002600ULL, 0x0810404008000000ULL /* { [ " - digits t f n */
#define B_OBJ_AFTER 0x0000100100002600ULL, 0x2000000000000000ULL /* , } */
#define B_ARR_OPEN 0x03ff200500002600ULL, 0x0810404028000000ULL /* ] and a value's */
#define B_ARR_AFTER 0x0000100100002600ULL, 0x0000000020000000ULL /* , ] */


/* A superset of the bytes that may start the state's next character (after the ``pending`` bytes of a
   split one: a continuation byte), read from its phase alone: a walk passes over the other edges without
   copying the state to step it. With ``names``, a key's body offers only its names' next characters (the
   key walk leaves an extra key's text to the row). */
static void next_bytes(const Ctx *x, const WHead *w, const MFrame *local, int pending, uint64_t *set, int names) {
    if (pending) {
        set[0] = set[1] = set[3] = 0;
        set[2] = ~(uint64_t)0; /* 0x80-0xBF */
        return;
    }
    const MState *s = &w->h;
    switch (s->lex) {
    case L_LITERAL:
        set[0] = set[1] = set[2] = set[3] = 0;
        add_byte(set, (unsigned char)LITERALS[s->node][s->phase]);
        return;
    case L_NUMBER: set_ascii(set, B_NUMBER); return;
    case L_STRING: {
        switch (s->phase) {
        case S_ESCAPE: set_ascii(set, B_ESCAPE); return;
        case S_HEX:
        case S_LOW_HEX: set_ascii(set, B_HEX); return;
        case S_LOW_BACKSLASH: set_ascii(set, 0, (uint64_t)1 << ('\\' - 64)); return;
        case S_LOW_U: set_ascii(set, 0, (uint64_t)1 << ('u' - 64)); return;
        }
        const int32_t *r = rec(x, s->node);
        const MFrame *f = w->local > 0 ? &local[w->local - 1] : &x->orig[w->base - 1];
        if (r[0] == K_OBJECT && (names || !takes_extras(r, f))) { /* a key on its names' trie: their next characters */
            set_ascii(set, (uint64_t)1 << '"', (uint64_t)1 << ('\\' - 64));
            if (s->cstate < 0) return;
            const int32_t *t = x->c + s->cstate;
            for (int32_t k = 0; k < t[3]; k++)
                if (t[4 + 2 * k] >= 0x20) add_byte(set, utf8_lead(t[4 + 2 * k]));
            return;
        }
        if (r[0] == K_STRING && (r[1] == C_AUTOMATON || r[1] == C_CAPPED)) { /* the state's allowed characters */
            const AutomatonObject *a = (const AutomatonObject *)x->automata[r[2]];
            memcpy(set, a->first_bytes + 4 * (size_t)s->cstate, 4 * sizeof(uint64_t));
            set[0] |= (uint64_t)1 << '"';
            set[1] |= (uint64_t)1 << ('\\' - 64);
            return;
        }
        set[0] = 0xffffffff00000000ULL; /* any character a body holds as itself, and the escapes */
        set[1] = set[2] = set[3] = ~(uint64_t)0;
        return;
    }
    }
    /* between values: whitespace, punctuation and the first bytes of values (of any kind) */
    const MFrame *f = w->local > 0 ? &local[w->local - 1] : &x->orig[w->base - 1];
    if (f->node < 0) {
        if (f->phase == P_BEFORE) set_ascii(set, B_VALUE);
        else set_ascii(set, B_WS);
    } else if (rec(x, f->node)[0] == K_OBJECT) {
        switch (f->phase) {
        case P_OPEN: set_ascii(set, B_OBJ_OPEN); break;
        case P_COMMA: set_ascii(set, B_OBJ_COMMA); break;
        case P_KEY_DONE: set_ascii(set, B_KEY_DONE); break;
        case P_COLON: set_ascii(set, B_VALUE); break;
        case P_AFTER: set_ascii(set, B_OBJ_AFTER); break;
        default: set_ascii(set, B_WS);
        }
    } else {
        switch (f->phase) {
        case P_OPEN: set_ascii(set, B_ARR_OPEN); break;
        case P_COMMA: set_ascii(set, B_VALUE); break;
        case P_AFTER: set_ascii(set, B_ARR_AFTER); break;
        default: set_ascii(set, B_WS);
        }
    }
}

/* Whether some name goes on from key trie node ``at`` with a character whose UTF-8 starts with ``bytes``. */
static int name_char_starts(const Ctx *x, int32_t at, const uint8_t *bytes, int count) {
    if (at < 0) return 0;
    const int32_t *t = x->c + at;
    for (int32_t k = 0; k < t[3]; k++) {
        int32_t cp = t[4 + 2 * k];
        uint8_t utf8[4];
        int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (n <= count) continue;
        if (n == 2) utf8[0] = (uint8_t)(0xC0 | (cp >> 6)), utf8[1] = (uint8_t)(0x80 | (cp & 0x3F));
        else if (n == 3)
            utf8[0] = (uint8_t)(0xE0 | (cp >> 12)), utf8[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)),
            utf8[2] = (uint8_t)(0x80 | (cp & 0x3F));
        else
            utf8[0] = (uint8_t)(0xF0 | (cp >> 18)), utf8[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F)),
            utf8[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)), utf8[3] = (uint8_t)(0x80 | (cp & 0x3F));
        if (memcmp(utf8, bytes, (size_t)count) == 0) return 1;
    }
    return 0;
}

/* Whether the automaton of the string being read (C_AUTOMATON) accepts its content as read. */
static inline int automaton_accepts(const Ctx *x, const MState *s) {
    const AutomatonObject *a = (const AutomatonObject *)x->automata[rec(x, s->node)[2]];
    return ((const uint8_t *)PyBytes_AS_STRING(a->accepting))[s->cstate];
}

/* Appends ``n`` words to a growing array; 0 when out of memory. */
static int append_words(int32_t **words, Py_ssize_t *len, Py_ssize_t *cap, const int32_t *more, int n) {
    if (*len + n > *cap) {
        Py_ssize_t grown_cap = 2 * *cap + 64;
        int32_t *grown = realloc(*words, sizeof(int32_t) * (size_t)grown_cap);
        if (grown == NULL) return 0;
        *words = grown, *cap = grown_cap;
    }
    memcpy(*words + *len, more, sizeof(int32_t) * (size_t)n);
    *len += n;
    return 1;
}

static void mwalk(MWalk *k, int32_t node, const WHead *start, const uint8_t *pending, int pending_count) {
    int top = 0;
    MLevel *L = k->levels;
    L[0].w = *start;
    L[0].edge = k->es[node];
    L[0].end = k->es[node + 1];
    L[0].pending_count = pending_count;
    L[0].pick = 0;
    if (pending_count) memcpy(L[0].pending, pending, (size_t)pending_count);
    /* (level 0's local frames are the caller's: k->locals) */
    next_bytes(&k->x, &L[0].w, k->locals, pending_count, L[0].first, k->key_walk);
    L[0].start_body = 1;
    while (top >= 0) {
        MLevel *f = &L[top];
        if (f->edge == f->end) {
            top--;
            continue;
        }
        int32_t e = f->edge++;
        uint8_t byte = k->eb[e];
        if (!((f->first[byte >> 6] >> (byte & 63)) & 1)) continue;
        int32_t child = k->ec[e];
        if (k->inside && (byte == '"' || byte == '\\') && !f->pending_count) { /* a string's end or an escape */
            if (byte == '"' && !automaton_accepts(&k->x, &f->w.h)) continue;
            int32_t exit[3] = {child, f->w.h.cstate, byte};
            if (!append_words(&k->exits, &k->exits_len, &k->exits_cap, exit, 3)) {
                k->failed = 1;
                return;
            }
            continue;
        }
        MLevel *g = &L[top + 1];
        MFrame *gl = k->locals + (size_t)(top + 1) * (size_t)k->room;
        const MFrame *fl = k->locals + (size_t)top * (size_t)k->room;
        g->w = f->w;
        memcpy(gl, fl, sizeof(MFrame) * (size_t)f->w.local);
        int count = 0;
        uint8_t data[4];
        if (f->pending_count) {
            count = f->pending_count + 1;
            memcpy(data, f->pending, (size_t)f->pending_count);
            data[f->pending_count] = byte;
            if (byte < 0x80 || byte > 0xBF) continue;
            if (count == utf8_length(data[0])) {
                int32_t cp;
                if (!strict_utf8(data, count, &cp) || !mstep(&k->x, &g->w, gl, cp)) continue;
                count = 0;
            } else if (!mprefix_allowed(&k->x, &g->w, gl, data, count)) {
                continue;
            }
        } else if (byte < 0x80) {
            /* (a character that opens a union several ways: this edge is walked again for each) */
            g->w.pick = f->pick;
            g->w.forks = 1;
            int ok = mstep(&k->x, &g->w, gl, byte);
            if (g->w.forks > f->pick + 1) {
                f->edge--;
                f->pick++;
            } else {
                f->pick = 0;
            }
            if (!ok) continue;
        } else {
            data[0] = byte;
            count = 1;
            if (utf8_length(byte) < 2 || !mprefix_allowed(&k->x, &g->w, gl, data, 1)) continue;
        }
        uint8_t body = f->start_body;
        if (body && k->key_walk) {
            if (!f->pending_count && (byte == '"' || byte == '\\')) { /* past the key's end or an escape */
                if (!append_words(&k->handled, &k->handled_len, &k->handled_cap, &child, 1)) {
                    k->failed = 1;
                    return;
                }
                body = 0;
            } else if (count == 0 ? g->w.h.cstate < 0 : !name_char_starts(&k->x, g->w.h.cstate, data, count)) {
                continue; /* off the names: an extra key's text, which the row and the shared exits answer */
            }
        }
        if (count == 0 && automaton_covers(k, &g->w, gl, child)) continue;
        if (count == 0 && (plain_below(k, &g->w, gl, child) || digits_below(k, &g->w, child))) {
            /* every token below stays in a string's body, or in a number's digits */
            for (int32_t t = k->ts[child], end = k->ts[k->se[child]]; t < end; t++) {
                uint32_t id = (uint32_t)k->ti[t];
                k->out[id >> 5] |= (uint32_t)1 << (id & 31);
            }
            continue;
        }
        memit(k, child);
        if (k->es[child] < k->es[child + 1]) {
            g->edge = k->es[child];
            g->end = k->es[child + 1];
            g->pending_count = count;
            g->pick = 0;
            memcpy(g->pending, data, (size_t)count);
            next_bytes(&k->x, &g->w, gl, count, g->first, k->key_walk && body);
            g->start_body = body;
            top++;
        }
    }
}

/* ---- string bodies from the root: the vocabulary's run row plus the walks past its exits ---- */

/* Where a token leaves a string's body: every trie node reached from the root on characters a body reads
   as themselves (not the quote, the backslash or a control character; any character beyond ASCII), with an
   edge to a quote or a backslash. Built once per trie (the GIL held). */
struct BodyExits {
    Py_ssize_t n;
    int32_t *node;  /* the child past the quote or backslash */
    int32_t *k;     /* the characters read before it */
    uint8_t *byte;  /* the quote or the backslash */
    uint8_t *first; /* the token's first byte */
};

static void free_body_exits(struct BodyExits *e) {
    if (e == NULL) return;
    free(e->node);
    free(e->k);
    free(e->byte);
    free(e->first);
    free(e);
}

typedef struct {
    int32_t node, edge, end, k, pcount;
    uint8_t pending[4], first;
} ExitFrame;

static struct BodyExits *body_exits(TrieObject *t) {
    if (t->body_exits != NULL) return t->body_exits;
    const int32_t *es = i32(t->edge_start), *ec = i32(t->edge_child);
    const uint8_t *eb = (const uint8_t *)PyBytes_AS_STRING(t->edge_byte);
    struct BodyExits *x = calloc(1, sizeof *x);
    ExitFrame *stack = malloc(sizeof(ExitFrame) * (size_t)(t->max_depth + 2));
    Py_ssize_t cap = 1024;
    if (x != NULL) {
        x->node = malloc(sizeof(int32_t) * (size_t)cap);
        x->k = malloc(sizeof(int32_t) * (size_t)cap);
        x->byte = malloc((size_t)cap);
        x->first = malloc((size_t)cap);
    }
    if (x == NULL || stack == NULL || !x->node || !x->k || !x->byte || !x->first) goto fail;
    int top = 0;
    stack[0] = (ExitFrame){0, es[0], es[1], 0, 0, {0}, 0};
    while (top >= 0) {
        ExitFrame *f = &stack[top];
        if (f->edge == f->end) {
            top--;
            continue;
        }
        int32_t e = f->edge++;
        uint8_t byte = eb[e];
        int32_t child = ec[e];
        uint8_t first = top == 0 ? byte : f->first;
        ExitFrame g = {child, es[child], es[child + 1], f->k, 0, {0}, first};
        if (f->pcount) {
            if (byte < 0x80 || byte > 0xBF) continue;
            memcpy(g.pending, f->pending, (size_t)f->pcount);
            g.pending[f->pcount] = byte;
            int count = f->pcount + 1;
            if (count == utf8_length(g.pending[0])) {
                int32_t cp;
                if (!strict_utf8(g.pending, count, &cp)) continue;
                g.k++;
            } else {
                int64_t lo, hi;
                if (!utf8_prefix_interval(g.pending, count, &lo, &hi)) continue;
                g.pcount = count;
            }
        } else if (byte < 0x80) {
            if (byte == '"' || byte == '\\') {
                if (x->n == cap) {
                    cap *= 2;
                    int32_t *a = realloc(x->node, sizeof(int32_t) * (size_t)cap);
                    if (a) x->node = a;
                    int32_t *b = realloc(x->k, sizeof(int32_t) * (size_t)cap);
                    if (b) x->k = b;
                    uint8_t *c = realloc(x->byte, (size_t)cap);
                    if (c) x->byte = c;
                    uint8_t *d = realloc(x->first, (size_t)cap);
                    if (d) x->first = d;
                    if (!a || !b || !c || !d) goto fail;
                }
                x->node[x->n] = child;
                x->k[x->n] = f->k;
                x->byte[x->n] = byte;
                x->first[x->n] = first;
                x->n++;
                continue;
            }
            if (byte < 0x20) continue;
            g.k++;
        } else {
            int64_t lo, hi;
            if (utf8_length(byte) < 2 || !utf8_prefix_interval(&byte, 1, &lo, &hi)) continue;
            g.pending[0] = byte;
            g.pcount = 1;
        }
        if (g.edge < g.end) stack[++top] = g;
    }
    free(stack);
    t->body_exits = x;
    return x;
fail:
    free(stack);
    free_body_exits(x);
    PyErr_NoMemory();
    return NULL;
}

/* Whether the state reads a string's body from the root in a way the run row answers: a plain or
   length-limited string, or an open object's key; the room left (-1: no limit), else -2. */
static int32_t body_room(const Ctx *x, const WHead *w) {
    const MState *s = &w->h;
    if (s->lex != L_STRING || s->phase != S_BODY) return -2;
    const int32_t *r = rec(x, s->node);
    if (r[0] == K_OBJECT) return takes_extras(r, &x->orig[w->base - 1]) ? -1 : -2; /* (no local frames yet) */
    if (frame_unique(x, &x->orig[w->base - 1]) != U_NONE) return -2; /* (an item's close reads its words) */
    if (r[1] == C_ANY) return -1;
    if (r[1] == C_LENGTH) return r[3] < 0 ? -1 : r[3] - s->cstate;
    return -2;
}

/* The mask of a string body at the root: the row (tokens of body characters only, as many as the room
   allows), then each exit walked with the state after its characters and its quote or backslash. An open
   object's key on the trie of its names takes every token of body characters too (any text is a key), walks
   the paths that spell a name's beginning (key_walk: past their quotes and backslashes the state depends on
   the name), and walks the other exits as off the names (an extra key's text). */
/* A state past an exit's quote or backslash (mask_body): one step from the body, so at most two local
   frames (the top made local, and one a step could open; a quote or backslash opens none). */
typedef struct {
    WHead w;
    MFrame local[2];
    int known, ok;
} Stepped;

static int compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void mask_body(MWalk *k, const WHead *start, const uint32_t *row, Py_ssize_t words,
                      const struct BodyExits *exits, int32_t room) {
    memcpy(k->out, row, (size_t)words * 4);
    const int32_t *r = rec(&k->x, start->h.node);
    int key_on_trie = r[0] == K_OBJECT && start->h.cstate >= 0;
    if (key_on_trie) {
        k->key_walk = 1;
        k->handled_len = 0;
        mwalk(k, 0, start, NULL, 0);
        k->key_walk = 0;
        if (k->failed) return;
        if (k->handled_len > 0) qsort(k->handled, (size_t)k->handled_len, sizeof(int32_t), compare_int32);
    }
    Stepped stepped[2][2];
    memset(stepped, 0, sizeof stepped);
    for (Py_ssize_t i = 0; i < exits->n; i++) {
        int32_t chars = exits->k[i];
        if (key_on_trie && k->handled_len > 0 && bsearch(&exits->node[i], k->handled, (size_t)k->handled_len, sizeof(int32_t), compare_int32))
            continue; /* (a name's beginning before it: the key walk's) */
        if (room >= 0 && chars > room) continue;
        /* the state past the quote or backslash: the same for every exit of a byte where the characters
           before it leave the state as it is (any text, or an open key off its names), so stepped once */
        int quote = exits->byte[i] == '"';
        int shared = !(r[0] == K_STRING && r[1] == C_LENGTH), variant = r[0] == K_OBJECT && chars > 0;
        Stepped *past = &stepped[variant][quote];
        if (!shared || !past->known) {
            past->w = *start;
            if (chars > 0) {
                if (r[0] == K_OBJECT) past->w.h.cstate = -1;
                else if (r[1] == C_LENGTH) {
                    int32_t count = past->w.h.cstate + chars;
                    past->w.h.cstate = r[3] < 0 && count > r[2] ? r[2] : count;
                }
            }
            past->ok = mstep(&k->x, &past->w, past->local, exits->byte[i]);
            past->known = 1;
        }
        if (!past->ok) continue;
        int32_t node = exits->node[i];
        memit(k, node);
        if (k->es[node] < k->es[node + 1]) {
            /* (the walk below starts from this state, its local frames copied into level 0's) */
            memcpy(k->locals, past->local, sizeof(MFrame) * (size_t)past->w.local);
            mwalk(k, node, &past->w, NULL, 0);
        }
        if (!shared) past->known = 0;
    }
}

/* ---- string bodies over an automaton: the tokens inside, shared by every state of the same content state ----

   In the body of a string whose content is an automaton (C_AUTOMATON, no uniqueItems array's item), the
   tokens that stay in the body depend only on the automaton, its state and whether escapes may spell
   printable ASCII; so do the places where tokens leave it (a closing quote reached in an accepting state,
   a backslash in some state). ``inside`` computes both once (core/compiled_walk.py keeps them per automaton
   state), and ``mask`` with them takes the row and walks only below those exits, with the state past the
   quote (the same for every exit) or past the backslash. */

/* Whether the state reads such a body, from its first byte (no pending bytes): an automaton without a
   maximum length, or one under a maximum length (C_CAPPED) so far from it that no token of the trie (of at
   most ``depth`` bytes) can reach a state the maximum rules out, where the body reads as if it had none. */
static int inside_ready(const Ctx *x, const WHead *w, int64_t depth) {
    const MState *s = &w->h;
    if (s->lex != L_STRING || s->phase != S_BODY) return 0;
    const int32_t *r = rec(x, s->node);
    if (r[0] != K_STRING || frame_unique(x, &x->orig[w->base - 1]) != U_NONE) return 0;
    return r[1] == C_AUTOMATON || (r[1] == C_CAPPED && (int64_t)r[3] - s->n - 1 - depth >= r[5]);
}

/* The walk's arrays, from the trie. */
static int walk_setup(MWalk *k, TrieObject *trie) {
    k->trie = trie;
    k->es = i32(trie->edge_start);
    k->ec = i32(trie->edge_child);
    k->ts = i32(trie->tok_start);
    k->ti = i32(trie->tok_ids);
    k->se = i32(trie->subtree_end);
    k->eb = (const uint8_t *)PyBytes_AS_STRING(trie->edge_byte);
    k->room = (int32_t)trie->max_depth + 2;
    k->levels = malloc(sizeof(MLevel) * (size_t)(trie->max_depth + 2));
    k->locals = malloc(sizeof(MFrame) * (size_t)k->room * (size_t)(trie->max_depth + 2));
    if (k->levels == NULL || k->locals == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    return 1;
}

/* The mask from an inside row and its exits (int32 triples: node, content state, byte). */
static void mask_inside(MWalk *k, const WHead *start, const uint32_t *row, Py_ssize_t words, const int32_t *exits,
                        Py_ssize_t count) {
    memcpy(k->out, row, (size_t)words * 4);
    Stepped quote, escape;
    quote.known = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t node = exits[3 * i], state = exits[3 * i + 1], byte = exits[3 * i + 2];
        Stepped *past = byte == '"' ? &quote : &escape;
        if (byte != '"' || !quote.known) { /* (past a quote the state is the same for every exit) */
            past->w = *start;
            past->w.h.cstate = state;
            past->ok = mstep(&k->x, &past->w, past->local, byte);
            past->known = 1;
        }
        if (!past->ok) continue;
        memit(k, node);
        if (k->es[node] < k->es[node + 1]) {
            memcpy(k->locals, past->local, sizeof(MFrame) * (size_t)past->w.local);
            mwalk(k, node, &past->w, NULL, 0);
        }
    }
}

/* mask(trie, state, pending, out, row=None, exits=None): writes into ``out`` (int32 words) the packed mask of
   the tokens the machine accepts from ``state`` after the ``pending`` bytes of an incomplete character
   (end-of-sequence is the caller's), and returns whether it holds any token. ``row``: in a plain string's body (body_room), the vocabulary's run
   row; with ``exits``, in an automaton's (inside_key), the row and exits ``inside`` gave for its state. The
   GIL is released while walking. */
static PyObject *Machine_mask(MachineObject *self, PyObject *args) {
    TrieObject *trie;
    Py_buffer state, pending, out;
    PyObject *row_arg = Py_None, *exits_arg = Py_None;
    if (!PyArg_ParseTuple(args, "O!y*y*w*|OO", &TrieType, &trie, &state, &pending, &out, &row_arg, &exits_arg))
        return NULL;
    PyObject *result = NULL;
    MWalk k = {0};
    Py_buffer row = {0}, ex = {0};
    Py_ssize_t words = (trie->vocab_size + 31) / 32, exit_count = 0;
    const uint8_t *p = (const uint8_t *)pending.buf;
    if (pending.len > 3 || (pending.len > 0 && utf8_length(p[0]) <= pending.len)) {
        PyErr_SetString(PyExc_ValueError, "machine mask: pending must be the first bytes of one UTF-8 character");
        goto done;
    }
    if (out.len < words * 4 || ((uintptr_t)out.buf % 4) != 0) {
        PyErr_Format(PyExc_ValueError, "machine mask: the output needs %zd aligned int32 words", words);
        goto done;
    }
    WHead w;
    Py_ssize_t at[MAX_WAYS];
    Py_ssize_t ways = load_state(self, &state, &k.x, &w, at);
    if (ways == 0) goto done;
    if (ways == 1 && !give_words(&k.x, state.buf, state.len, (Py_ssize_t)trie->max_depth + 8)) goto done;
    int32_t room = ways == 1 ? body_room(&k.x, &w) : -2;
    const struct BodyExits *exits = NULL;
    if (row_arg != Py_None) {
        if (pending.len > 0 || ways != 1 || (exits_arg == Py_None ? room < -1 : !inside_ready(&k.x, &w, trie->max_depth))) {
            PyErr_SetString(PyExc_ValueError,
                            "machine mask: a row is taken only in a string's body (body_room, or inside_key with exits)");
            goto done;
        }
        if (PyObject_GetBuffer(row_arg, &row, PyBUF_C_CONTIGUOUS) < 0) goto done;
        if (row.len != words * 4 || ((uintptr_t)row.buf % 4) != 0) {
            PyErr_Format(PyExc_ValueError, "machine mask: the row needs %zd aligned int32 words", words);
            goto done;
        }
        if (exits_arg == Py_None) {
            exits = body_exits(trie);
            if (exits == NULL) goto done;
        } else { /* the exits of ``inside``: each in the trie, in the automaton, at a quote or a backslash */
            if (PyObject_GetBuffer(exits_arg, &ex, PyBUF_C_CONTIGUOUS) < 0) goto done;
            const AutomatonObject *a = (const AutomatonObject *)k.x.automata[rec(&k.x, w.h.node)[2]];
            const int32_t *e = (const int32_t *)ex.buf;
            exit_count = ex.len / 12;
            if (ex.len % 12 || ((uintptr_t)ex.buf % 4) != 0) {
                PyErr_SetString(PyExc_ValueError, "machine mask: exits must be aligned int32 triples");
                goto done;
            }
            for (Py_ssize_t i = 0; i < exit_count; i++) {
                if (e[3 * i] < 0 || e[3 * i] >= trie->nodes || e[3 * i + 1] < 0 || e[3 * i + 1] >= a->states ||
                    (e[3 * i + 2] != '"' && e[3 * i + 2] != '\\')) {
                    PyErr_Format(PyExc_ValueError, "machine mask: exit %zd is not in the trie or the automaton", i);
                    goto done;
                }
            }
        }
    } else if (exits_arg != Py_None) {
        PyErr_SetString(PyExc_ValueError, "machine mask: exits come with their row");
        goto done;
    }
    if (!walk_setup(&k, trie)) goto done;
    k.out = (uint32_t *)out.buf;
    uint8_t pending_bytes[4];
    memcpy(pending_bytes, p, (size_t)pending.len);
    Py_BEGIN_ALLOW_THREADS
    if (ex.buf != NULL) {
        mask_inside(&k, &w, (const uint32_t *)row.buf, words, (const int32_t *)ex.buf, exit_count);
    } else if (exits != NULL) {
        mask_body(&k, &w, (const uint32_t *)row.buf, words, exits, room);
    } else {
        memset(k.out, 0, (size_t)words * 4);
        for (Py_ssize_t way = 0; way < ways; way++) { /* (a token is allowed where some way takes it) */
            load_way(self, state.buf, at[way], &k.x, &w);
            mwalk(&k, 0, &w, pending_bytes, (int)pending.len);
        }
    }
    Py_END_ALLOW_THREADS
    if (k.failed) {
        PyErr_NoMemory();
        goto done;
    }
    int any = 0; /* (the first word with a token in it is usually near the start: common tokens have low ids) */
    for (Py_ssize_t i = 0; i < words && !any; i++) any = k.out[i] != 0;
    result = PyBool_FromLong(any);
done:
    free(k.levels);
    free(k.locals);
    free(k.handled);
    free(k.x.u);
    if (row.buf != NULL) PyBuffer_Release(&row);
    if (ex.buf != NULL) PyBuffer_Release(&ex);
    PyBuffer_Release(&state);
    PyBuffer_Release(&pending);
    PyBuffer_Release(&out);
    return result;
}

/* inside(trie, state): for a state inside_key answers, (row, exits): the packed tokens that stay in the
   string's body (bytes of int32 words) and where tokens leave it (bytes of int32 triples: the node past the
   quote or backslash, the content state there, the byte), for ``mask``. */
static PyObject *Machine_inside(MachineObject *self, PyObject *args) {
    TrieObject *trie;
    Py_buffer state;
    if (!PyArg_ParseTuple(args, "O!y*", &TrieType, &trie, &state)) return NULL;
    PyObject *result = NULL, *row = NULL;
    MWalk k = {0};
    Py_ssize_t words = (trie->vocab_size + 31) / 32;
    WHead w;
    Py_ssize_t at[MAX_WAYS];
    Py_ssize_t ways = load_state(self, &state, &k.x, &w, at);
    if (ways == 0) goto done;
    if (ways != 1 || !inside_ready(&k.x, &w, trie->max_depth)) {
        PyErr_SetString(PyExc_ValueError, "machine inside: not the body of a string over an automaton (inside_key)");
        goto done;
    }
    if (!give_words(&k.x, state.buf, state.len, (Py_ssize_t)trie->max_depth + 8)) goto done;
    if (!walk_setup(&k, trie)) goto done;
    row = PyBytes_FromStringAndSize(NULL, words * 4);
    if (row == NULL) goto done;
    k.out = (uint32_t *)PyBytes_AS_STRING(row);
    k.inside = 1;
    Py_BEGIN_ALLOW_THREADS
    memset(k.out, 0, (size_t)words * 4);
    mwalk(&k, 0, &w, NULL, 0);
    Py_END_ALLOW_THREADS
    if (k.failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(Oy#)", row, k.exits != NULL ? (const char *)k.exits : "",
                           (Py_ssize_t)(sizeof(int32_t) * (size_t)k.exits_len)); /* (bytes, never None) */
done:
    Py_XDECREF(row);
    free(k.exits);
    free(k.levels);
    free(k.locals);
    free(k.x.u);
    PyBuffer_Release(&state);
    return result;
}

/* inside_key(trie, state): (automaton index, content state, whether escapes may spell printable ASCII) when
   the state reads the body of a string over an automaton (see ``inside``); None otherwise. */
static PyObject *Machine_inside_key(MachineObject *self, PyObject *args) {
    TrieObject *trie;
    Py_buffer state;
    if (!PyArg_ParseTuple(args, "O!y*", &TrieType, &trie, &state)) return NULL;
    Ctx x;
    WHead w;
    PyObject *result = NULL;
    x.u = NULL;
    Py_ssize_t at[MAX_WAYS];
    Py_ssize_t ways = load_state(self, &state, &x, &w, at);
    if (ways > 0) {
        if (ways == 1 && inside_ready(&x, &w, trie->max_depth)) {
            result = Py_BuildValue("(iii)", rec(&x, w.h.node)[2], w.h.cstate, x.ascii_escapes);
        } else {
            Py_INCREF(Py_None);
            result = Py_None;
        }
    }
    free(x.u);
    PyBuffer_Release(&state);
    return result;
}

/* body_room(state): for a string's body whose mask the run row answers (see mask_body), the characters the
   row may hold (-1: any number); None otherwise. */
static PyObject *Machine_body_room(MachineObject *self, PyObject *arg) {
    Py_buffer state;
    if (PyObject_GetBuffer(arg, &state, PyBUF_SIMPLE) < 0) return NULL;
    Ctx x;
    WHead w;
    Py_ssize_t at[MAX_WAYS];
    PyObject *result = NULL;
    x.u = NULL;
    Py_ssize_t ways = load_state(self, &state, &x, &w, at);
    if (ways > 0) {
        int32_t room = ways == 1 ? body_room(&x, &w) : -2; /* (several ways: no row) */
        if (room < -1) {
            Py_INCREF(Py_None);
            result = Py_None;
        } else {
            result = PyLong_FromLong(room);
        }
    }
    free(x.u);
    PyBuffer_Release(&state);
    return result;
}

/* The ways of a checked state (state_ways) as a tuple of their bytes, each a state of one way; NULL with an
   error set when out of memory. */
static PyObject *ways_tuple(const void *data, const Py_ssize_t *at, const Py_ssize_t *lens, Py_ssize_t ways) {
    PyObject *result = PyTuple_New(ways);
    for (Py_ssize_t i = 0; result != NULL && i < ways; i++) {
        PyObject *way = PyBytes_FromStringAndSize((const char *)data + at[i], lens[i]);
        if (way == NULL) Py_CLEAR(result);
        else PyTuple_SET_ITEM(result, i, way);
    }
    return result;
}

/* plan(trie, state): how ``mask`` is best asked for the state, in one call: the tuple of its ways' bytes for
   a state of several ways (as ``ways``), the room of a string's body the run row answers (as ``body_room``),
   (automaton index, content state, ascii escapes) in an automaton string's body (as ``inside_key``), or
   None: the whole walk. */
static PyObject *Machine_plan(MachineObject *self, PyObject *args) {
    TrieObject *trie;
    Py_buffer state;
    if (!PyArg_ParseTuple(args, "O!y*", &TrieType, &trie, &state)) return NULL;
    Py_ssize_t at[MAX_WAYS], lens[MAX_WAYS];
    PyObject *result = NULL;
    Ctx x;
    WHead w;
    Py_ssize_t ways = state_ways(self, state.buf, state.len, at, lens);
    if (ways > 1) {
        result = ways_tuple(state.buf, at, lens, ways);
    } else if (ways == 1) {
        x.u = NULL;
        load_way(self, state.buf, 0, &x, &w);
        int32_t room = body_room(&x, &w);
        if (room >= -1) {
            result = PyLong_FromLong(room);
        } else if (inside_ready(&x, &w, trie->max_depth)) {
            result = Py_BuildValue("(iii)", rec(&x, w.h.node)[2], w.h.cstate, x.ascii_escapes);
        } else {
            Py_INCREF(Py_None);
            result = Py_None;
        }
    }
    PyBuffer_Release(&state);
    return result;
}

/* ways(state): a state of several ways (state_ways) as a tuple of its ways' bytes, each a state of one way;
   None for a state of one way. */
static PyObject *Machine_ways(MachineObject *self, PyObject *arg) {
    Py_buffer state;
    if (PyObject_GetBuffer(arg, &state, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t at[MAX_WAYS], lens[MAX_WAYS];
    PyObject *result = NULL;
    Py_ssize_t ways = state_ways(self, state.buf, state.len, at, lens);
    if (ways == 1) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (ways > 1) {
        result = ways_tuple(state.buf, at, lens, ways);
    }
    PyBuffer_Release(&state);
    return result;
}

static PyMemberDef Machine_members[] = {
    {"code", T_OBJECT_EX, offsetof(MachineObject, code), READONLY, "the program's int32 words (bytes)"},
    {"automata", T_OBJECT_EX, offsetof(MachineObject, automata), READONLY, "the program's Automaton objects"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef Machine_methods[] = {
    {"start", (PyCFunction)Machine_start, METH_NOARGS, "start(): the state before the document"},
    {"step", (PyCFunction)Machine_step, METH_VARARGS,
     "step(state, text): the state after the UTF-8 bytes ``text`` (whole characters), or None if refused"},
    {"can_end", (PyCFunction)Machine_can_end, METH_O, "can_end(state): whether the document may end here"},
    {"allowed", (PyCFunction)Machine_allowed, METH_O,
     "allowed(state): the characters that may come next, as sorted (lo, hi) code-point intervals"},
    {"mask", (PyCFunction)Machine_mask, METH_VARARGS,
     "mask(trie, state, pending, out, row=None, exits=None): the packed mask of the tokens allowed from ``state`` "
     "into ``out`` (returns whether it holds any); ``row``: in a string's body (see body_room), the tokens of at most that many body characters; "
     "with ``exits``, in an automaton's body (see inside_key), what ``inside`` gave"},
    {"inside", (PyCFunction)Machine_inside, METH_VARARGS,
     "inside(trie, state): (row, exits) of an automaton string's body: the tokens that stay in it, where others leave"},
    {"inside_key", (PyCFunction)Machine_inside_key, METH_VARARGS,
     "inside_key(trie, state): (automaton index, content state, ascii escapes) in an automaton string's body; "
     "else None"},
    {"plan", (PyCFunction)Machine_plan, METH_VARARGS,
     "plan(trie, state): the state's ways (a tuple of bytes), a string body's room (an int), an automaton body's "
     "inside_key (a tuple of ints), or None (the whole walk): what ``mask`` is best asked with"},
    {"ways", (PyCFunction)Machine_ways, METH_O,
     "ways(state): a state of several ways (a union being read) as a tuple of one-way states; else None"},
    {"body_room", (PyCFunction)Machine_body_room, METH_O,
     "body_room(state): in a string's body the run row answers, the characters it may hold (-1: any); else None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MachineType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "formatenforcer.core._native.Machine",
    .tp_basicsize = sizeof(MachineObject),
    .tp_dealloc = (destructor)Machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A JSON machine program (see _machine.c), validated once.",
    .tp_new = Machine_new,
    .tp_methods = Machine_methods,
    .tp_members = Machine_members,
};
