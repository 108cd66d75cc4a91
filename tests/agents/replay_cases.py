"""The cases a replay dumped, and their outcomes counted as the Rust replay counts them.

Two layouts are read: `server/tests/indentation_replay.rs` writes
`<dump>/<case>-<slip>/{old,new,patch}` (a Rust file, `f.rs`, `apply_patch` only);
`server/benches/slip_replay.rs` writes
`<dump>/<language>/<dialect>/<case>-<slip>/{old,new,patch,name,exactElsewhere,verbatim}`.
A peer's outcome is one of recovered (success, the file is the new version),
refused (an error, the file as it was), wrong (success, anything else), partial
(an error, something written) and exact elsewhere (success where the slipped
quote is exactly another place of the file: an exact quote of that place).
"""

import collections
import os


def _read(folder, name, default=None):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as file:
        return file.read()


def cases(dump, dialect):
    """Yields (language, slip, folder, file name, old, new, patch, exact elsewhere) in order."""
    entries = sorted(os.listdir(dump))
    if any(os.path.exists(os.path.join(dump, entry, "patch")) for entry in entries):
        layout = [("rust (registry)", os.path.join(dump, entry)) for entry in entries if dialect == "applyPatch"]
    else:
        layout = []
        for language in entries:
            folder = os.path.join(dump, language, dialect)
            if os.path.isdir(folder):
                layout += [(language, os.path.join(folder, case)) for case in sorted(os.listdir(folder))]
    for language, folder in layout:
        if not os.path.isdir(folder):
            continue
        slip = os.path.basename(folder).split("-", 1)[1]
        yield (
            language,
            slip,
            folder,
            _read(folder, "name", "f.rs").strip(),
            _read(folder, "old"),
            _read(folder, "new"),
            _read(folder, "patch"),
            _read(folder, "exactElsewhere", "false").strip() == "true",
        )


def outcome(applied, old, new, written, exact_elsewhere):
    if applied:
        if written == new:
            return "recovered"
        return "exactElsewhere" if exact_elsewhere else "wrong"
    return "refused" if written == old else "partial"


def record(folder, peer, result):
    """Writes a peer's outcome beside the case (`replay_side_by_side.py` reads it)."""
    with open(os.path.join(folder, peer), "w", encoding="utf-8") as file:
        file.write(result)


COLUMNS = ["recovered", "refused", "wrong", "partial", "exactElsewhere"]


def print_tables(peer, dialect, tally):
    """One Markdown table per language: a row per slip, then the total."""
    for language in sorted({language for language, _ in tally}):
        print(f"\n{language} · {dialect} · {peer}\n")
        print("| slip | cases | recovered | refused | wrong | partial | exact elsewhere |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        total = collections.Counter()
        for (lang, slip), counts in sorted(tally.items()):
            if lang == language:
                total.update(counts)
                print(_row(slip, counts))
        print(_row("**total**", total))


def _row(label, counts):
    cases = sum(counts[column] for column in COLUMNS)
    share = 100.0 * counts["recovered"] / cases if cases else 0.0
    rest = " | ".join(str(counts[column]) for column in COLUMNS[1:])
    return f"| {label} | {cases} | {counts['recovered']} ({share:.1f}%) | {rest} |"
