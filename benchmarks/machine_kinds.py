"""Where the compiled JSON machine's masks spend their time: CPU per token by the kind of state a mask starts
from, over the strict compact pass of the MaskBench cases the machine covers.

Each covered case is teacher-forced as the strict pass does (maskbench.force_pass: a new schema, the first
mask, then accept + mask per token, one process); every mask's CPU time is filed under the lexeme its state
reads (a key, a string by its content kind, a number, a literal) or "between values", and the accepts
under "accept". ``--pass-only`` runs the same pass and prints nothing, for instruction counts of the masks
alone:

    python benchmarks/machine_kinds.py
    PY=$(python -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --toggle-collect=Machine_mask --callgrind-out-file=/tmp/cg.masks \\
        $PY benchmarks/machine_kinds.py --pass-only
"""

from __future__ import annotations

import argparse
import collections
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import machine_split  # noqa: E402
import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402
from formatenforcer.core.machine import MachineState  # noqa: E402

_LEXEMES = ("between values", "string", "number", "literal")
_CONTENTS = ("any text", "length", "automaton", "capped automaton")
_HEADER = 16  # (the program's header words, machine_program.HEADER)


def _kind(state: object) -> str:
    """The kind of a machine state's mask: the lexeme it reads, a string by its content."""
    if not isinstance(state, MachineState):
        return "not a machine state"
    program, data = state.machine_state()
    lexeme, node = struct.unpack_from("<2i", data)
    if lexeme != 1:
        return _LEXEMES[lexeme]
    offset = struct.unpack_from("<i", program.code, 4 * (_HEADER + node))[0]
    kind, content = struct.unpack_from("<2i", program.code, 4 * offset)
    return "key" if kind == 1 else f"string: {_CONTENTS[content]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pass-only", action="store_true", help="run the covered cases' pass, print nothing")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = [w for w in maskbench.compact_pass(tokenizer) if machine_split._reason(JsonSchemaParser(w[0])) == "covered"]  # noqa: SLF001
    if args.pass_only:
        maskbench.force_pass(vocabulary, work)
        return
    maskbench.force_pass(vocabulary, work[:3])  # (the vocabulary's tables built, as in a warm process)
    spent: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    bitmask = allocate_bitmask(1, vocabulary.size)
    for schema, ids in work:
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
        matcher.fill_bitmask(bitmask, 0)
        for token in ids:
            start = time.process_time()
            matcher.accept_token(token)
            accepted = time.process_time()
            matcher.fill_bitmask(bitmask, 0)
            done = time.process_time()
            for kind, seconds in (("accept", accepted - start), (_kind(matcher.position.state), done - accepted)):
                spent[kind][0] += seconds
                spent[kind][1] += 1
    total = sum(seconds for seconds, _ in spent.values())
    print(f"{len(work)} covered cases, {sum(len(ids) for _, ids in work)} tokens; CPU per token by mask start:")
    for kind, (seconds, count) in sorted(spent.items(), key=lambda item: -item[1][0]):
        print(f"  {kind:26s} {count:6d}  {1e3 * seconds:7.1f} ms  {1e6 * seconds / count:7.1f} µs/token  "
              f"{100 * seconds / total:5.1f}%")  # fmt: skip


if __name__ == "__main__":
    main()
