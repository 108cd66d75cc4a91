#!/usr/bin/env bash
# End to end with the real Claude Code CLI (tests/e2e_claude_code.lua): installs
# Claude Code with tests/agents/install.sh (npm, pinned; tmux from Debian),
# then runs the test through run.sh, in a headless Neovim 0.11 with isolated
# XDG directories, against $VERBATIM_BIN (default <repo>/target/debug/verbatim).
#
#   neovim/tests/e2e_claude_code.sh
#
# Exits non-zero when Claude Code cannot be installed or any step fails;
# nothing is skipped.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$(dirname "$tests_dir")")

CLAUDE_CODE_BIN=$("$repo_dir/tests/agents/install.sh" --print-bin)
export CLAUDE_CODE_BIN
exec "$tests_dir/run.sh" e2e_claude_code
