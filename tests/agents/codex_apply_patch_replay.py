#!/usr/bin/env python3
"""Codex's own `apply_patch` over the `apply_patch` cases a replay dumped (issues 34, 43).

`server/tests/indentation_replay.rs` (VERBATIM_REPLAY_DUMP) and the benchmark
`server/benches/slip_replay.rs` (VERBATIM_REPLAY_DUMP) write every case they
replay; `replay_cases.py` reads both layouts. This script gives each patch to
the real Codex binary invoked as `apply_patch` (a symlink of that name: Codex
then applies the patch given as its first argument in the current directory),
and counts, per language and slip, what Verbatim's replay counts (one table per
language).

    VERBATIM_REPLAY_DUMP=/tmp/replay cargo bench -p verbatim --bench slip_replay -- go=/path/to/repo.git
    tests/agents/codex_apply_patch_replay.py /tmp/replay [path/to/codex]

The Codex binary is the one `tests/agents/install.sh --print-bin codex` installs.
"""

import collections
import os
import subprocess
import sys
import tempfile

from replay_cases import cases, outcome, print_tables, record

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CODEX = os.path.join(
    REPO, ".agents/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dump = sys.argv[1]
    codex = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_CODEX
    if not os.access(codex, os.X_OK):
        print(f"no Codex binary at {codex}: run tests/agents/install.sh --print-bin codex", file=sys.stderr)
        return 2
    tally = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as scratch:
        tool = os.path.join(scratch, "apply_patch")
        os.symlink(codex, tool)
        work = os.path.join(scratch, "work")
        os.makedirs(work)
        for language, slip, folder, name, old, new, patch, exact_elsewhere in cases(dump, "applyPatch"):
            target = os.path.join(work, name)
            with open(target, "w", encoding="utf-8") as out:
                out.write(old)
            done = subprocess.run([tool, patch], cwd=work, capture_output=True, timeout=60)
            written = open(target, encoding="utf-8").read() if os.path.exists(target) else None
            result = outcome(done.returncode == 0, old, new, written, exact_elsewhere)
            tally[(language, slip)][result] += 1
            record(folder, "codex", result)
            if os.path.exists(target):
                os.remove(target)
    print_tables("Codex apply_patch", "applyPatch", tally)
    return 0


if __name__ == "__main__":
    sys.exit(main())
