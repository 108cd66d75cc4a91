#!/usr/bin/env python3
"""Aider's own SEARCH/REPLACE application over the blocks a replay dumped (issue 43).

The benchmark `server/benches/slip_replay.rs` (VERBATIM_REPLAY_DUMP) writes every
SEARCH/REPLACE case it replays; `replay_cases.py` reads them. Each patch is parsed
by Aider's `find_original_update_blocks` and applied by `EditBlockCoder.apply_edits`
itself, as Aider applies a model's answer: block after block, each written when
it matches, a `ValueError` listing the blocks that did not (the others stay
written: counted as partial). A benchmark peer only: Aider is never part of
Verbatim. Aider is installed into a virtual environment of its own:

    python3 -m venv .venv-peers && .venv-peers/bin/pip install aider-chat
    .venv-peers/bin/python tests/agents/aider_search_replace_replay.py /tmp/replay
"""

import collections
import os
import sys
import tempfile
import types

from replay_cases import cases, outcome, print_tables, record

try:
    from aider.coders.editblock_coder import DEFAULT_FENCE, EditBlockCoder, find_original_update_blocks
except ImportError:
    print("aider is not installed here: python3 -m venv .venv-peers && .venv-peers/bin/pip install aider-chat",
          file=sys.stderr)
    sys.exit(2)


def coder_in(work, name):
    """The parts of an EditBlockCoder that `apply_edits` uses, for one file in `work`."""
    def read_text(path):
        with open(path, encoding="utf-8") as file:
            return file.read()

    def write_text(path, text):
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)

    full_path = os.path.join(work, name)
    return types.SimpleNamespace(
        io=types.SimpleNamespace(read_text=read_text, write_text=write_text),
        abs_root_path=lambda path: os.path.join(work, path),
        abs_fnames={full_path},
        get_rel_fname=lambda path: os.path.relpath(path, work),
        fence=DEFAULT_FENCE,
    )


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tally = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as work:
        for language, slip, folder, name, old, new, patch, exact_elsewhere in cases(sys.argv[1], "searchReplace"):
            target = os.path.join(work, name)
            with open(target, "w", encoding="utf-8") as out:
                out.write(old)
            coder = coder_in(work, name)
            try:
                edits = list(find_original_update_blocks(patch, DEFAULT_FENCE, [name]))
                edits = [edit for edit in edits if edit[0] is not None]
                EditBlockCoder.apply_edits(coder, edits)
                applied = bool(edits)
            except ValueError:
                applied = False
            with open(target, encoding="utf-8") as file:
                written = file.read()
            result = outcome(applied, old, new, written, exact_elsewhere)
            tally[(language, slip)][result] += 1
            record(folder, "aider", result)
            os.remove(target)
    print_tables("Aider", "searchReplace", tally)
    return 0


if __name__ == "__main__":
    sys.exit(main())
