#!/usr/bin/env bash
# End to end with the real Gemini CLI as the IDE companion's client
# (tests/e2e_gemini_cli.lua): installs Gemini CLI (and Claude Code, whose
# binary the tmux harness checks) with tests/agents/install.sh (npm, pinned;
# tmux from Debian), then runs the test through run.sh, in a headless Neovim
# 0.11 against $VERBATIM_BIN (default <repo>/target/debug/verbatim). Gemini CLI
# runs under the `node` on PATH (Node 20 or later).
#
#   neovim/tests/e2e_gemini_cli.sh
#
# Exits non-zero when Gemini CLI cannot be installed or any step fails;
# nothing is skipped.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$(dirname "$tests_dir")")

"$repo_dir/tests/agents/install.sh" >/dev/null
GEMINI_CLI_BIN=$("$repo_dir/tests/agents/install.sh" --print-bin gemini-cli)
export GEMINI_CLI_BIN
exec "$tests_dir/run.sh" e2e_gemini_cli
