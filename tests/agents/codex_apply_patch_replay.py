#!/usr/bin/env python3
"""Codex's own `apply_patch` over the cases of the indentation replay (issue 34).

`server/tests/indentation_replay.rs` writes every case it replays when
VERBATIM_REPLAY_DUMP names a directory: `<case>-<slip>/old`, `new` and `patch`.
This script gives each patch to the real Codex binary invoked as `apply_patch`
(a symlink of that name: Codex then applies the patch given as its first
argument in the current directory), and counts, per slip, what Verbatim's test
counts: recovered (the file is the new version), refused (an error, the file as
it was), wrong (anything else written with success) and partial (an error, but
the file was written).

    VERBATIM_REPLAY_DUMP=/tmp/replay cargo test -p verbatim --test indentation_replay
    tests/agents/codex_apply_patch_replay.py /tmp/replay [path/to/codex]
"""

import collections
import os
import subprocess
import sys
import tempfile

DEFAULT_CODEX = (
    "/work/main/.agents/codex/node_modules/@openai/codex-linux-x64/vendor/"
    "x86_64-unknown-linux-musl/bin/codex"
)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dump = sys.argv[1]
    codex = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_CODEX
    if not os.access(codex, os.X_OK):
        print(f"no Codex binary at {codex}", file=sys.stderr)
        return 2
    tally = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as scratch:
        tool = os.path.join(scratch, "apply_patch")
        os.symlink(codex, tool)
        for case in sorted(os.listdir(dump)):
            slip = case.split("-", 1)[1]
            read = lambda name: open(os.path.join(dump, case, name), encoding="utf-8").read()
            old, new, patch = read("old"), read("new"), read("patch")
            work = os.path.join(scratch, "work")
            os.makedirs(work, exist_ok=True)
            target = os.path.join(work, "f.rs")
            with open(target, "w", encoding="utf-8") as out:
                out.write(old)
            done = subprocess.run([tool, patch], cwd=work, capture_output=True, timeout=60)
            written = open(target, encoding="utf-8").read() if os.path.exists(target) else None
            if done.returncode == 0:
                tally[slip]["recovered" if written == new else "wrong"] += 1
            else:
                tally[slip]["refused" if written == old else "partial"] += 1
            os.remove(target) if os.path.exists(target) else None
    for slip in sorted(tally):
        counts = tally[slip]
        print(
            f"codex apply_patch {slip}: {counts['recovered']} recovered, {counts['refused']} refused, "
            f"{counts['wrong']} wrong, {counts['partial']} partial"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
