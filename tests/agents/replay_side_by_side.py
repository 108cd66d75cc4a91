#!/usr/bin/env python3
"""Verbatim beside the peers, per language, dialect and slip, over replays' dumps.

Reads what `server/benches/slip_replay.rs` wrote in each case of
VERBATIM_REPLAY_DUMP (`verbatim`: its outcome) and what
`codex_apply_patch_replay.py` (`codex`) and `aider_search_replace_replay.py`
(`aider`) wrote there after it, and prints one Markdown table per language and
dialect: for each slip, the cases and each tool's recovered / refused / wrong /
partial (exact elsewhere, the protocol's own, is in none of them; see
replay_cases.py). Several dumps of the same corpora (two engines, say) may be
given as LABEL=DIR: each gets a Verbatim column, the peer's comes from the first.

    tests/agents/replay_side_by_side.py /tmp/replay
    tests/agents/replay_side_by_side.py main=/tmp/replay-main new=/tmp/replay-new
"""

import collections
import os
import sys

PEERS = {"singleEdit": None, "applyPatch": "codex", "searchReplace": "aider"}
SHOWN = ["recovered", "refused", "wrong", "partial"]


def read_outcomes(dump, language, dialect, tool):
    """{(case, slip): outcome} of `tool` in one dump."""
    folder = os.path.join(dump, language, dialect)
    out = {}
    if not os.path.isdir(folder):
        return out
    for case in sorted(os.listdir(folder)):
        path = os.path.join(folder, case, tool)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                text = file.read().strip()
            out[case] = text[:1].lower() + text[1:]
    return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dumps = [arg.split("=", 1) if "=" in arg else ["verbatim", arg] for arg in sys.argv[1:]]
    first = dumps[0][1]
    languages = sorted(entry for entry in os.listdir(first) if os.path.isdir(os.path.join(first, entry)))
    for label, dump in dumps:
        print_targets(label, dump, first, languages)
    for language in languages:
        for dialect, peer in PEERS.items():
            columns = [(f"Verbatim {label}" if len(dumps) > 1 else "Verbatim",
                        read_outcomes(dump, language, dialect, "verbatim")) for label, dump in dumps]
            if peer:
                columns.append((peer.capitalize(), read_outcomes(first, language, dialect, peer)))
            if columns[0][1]:
                print_table(language, dialect, columns)
    return 0


def share(outcomes, slips, result="recovered"):
    chosen = [o for case, o in outcomes.items() if case.split("-", 1)[1] in slips and o != "exactElsewhere"]
    return sum(o == result for o in chosen), len(chosen)


def print_targets(label, dump, first, languages):
    """Issue 43's targets, one row per language, for one dump's Verbatim."""
    print(f"\nTargets, Verbatim {label}\n")
    print("| language | wrong / partial | single edits recovered (slips but typos) | SEARCH/REPLACE slips below Aider "
          "| apply_patch recovered (Codex) | tabs / whole hunk, lowest dialect | typos refused |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for language in languages:
        mine = {d: read_outcomes(dump, language, d, "verbatim") for d in PEERS}
        bad = sum(o in ("wrong", "partial") for outcomes in mine.values() for o in outcomes.values())
        slips = {case.split("-", 1)[1] for outcomes in mine.values() for case in outcomes}
        recoverable = slips - {"clean", "typo"}
        single, single_cases = share(mine["singleEdit"], recoverable)
        aider = read_outcomes(first, language, "searchReplace", "aider")
        below = [s for s in sorted(slips) if share(mine["searchReplace"], {s})[0] < share(aider, {s})[0]]
        codex = read_outcomes(first, language, "applyPatch", "codex")
        patched, _ = share(mine["applyPatch"], slips)
        lowest = min(
            (100.0 * r / n, f"{d} {s}")
            for d in PEERS for s in ("tabsForSpaces", "spacesForTabs", "wholeHunkShifted")
            for r, n in [share(mine[d], {s})] if n >= 10
        )
        typos = [share(mine[d], {"typo"}, "refused") for d in PEERS]
        refused, typo_cases = sum(r for r, _ in typos), sum(n for _, n in typos)
        print(f"| {language} | {bad} | {100.0 * single / max(single_cases, 1):.1f}% | {', '.join(below) or 'none'} "
              f"| {patched} ({share(codex, slips)[0]}) | {lowest[0]:.0f}% ({lowest[1]}) | {refused} of {typo_cases} |")


def print_table(language, dialect, columns):
    print(f"\n{language} · {dialect}\n")
    print("| slip | cases | " + " | ".join(f"{name}: rec / ref / wrong / part" for name, _ in columns) + " |")
    print("|---|---:|" + "---:|" * len(columns))
    slips = sorted({case.split("-", 1)[1] for case in columns[0][1]})
    for slip in slips + [None]:
        counts = []
        for _, outcomes in columns:
            counts.append(collections.Counter(o for case, o in outcomes.items() if slip in (None, case.split("-", 1)[1])))
        print(row(f"**total**" if slip is None else slip, counts))


def row(label, counts):
    cases = sum(counts[0].values())
    cells = []
    for shown in counts:
        share = 100.0 * shown["recovered"] / cases if cases else 0.0
        cells.append(f"{shown['recovered']} ({share:.0f}%) / " + " / ".join(str(shown[c]) for c in SHOWN[1:]))
    return f"| {label} | {cases} | " + " | ".join(cells) + " |"


if __name__ == "__main__":
    sys.exit(main())
