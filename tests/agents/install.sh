#!/usr/bin/env bash
# Installs what the agent end-to-end tests need, idempotently and quietly:
#   - Claude Code, Codex, Gemini CLI, Qwen Code, GitHub Copilot CLI, opencode and
#     Factory Droid, pinned, each into its own folder of <repo>/.agents/ (npm;
#     postinstall scripts are not needed: the tests run the native binaries of
#     Claude Code, Codex, Copilot, opencode and Droid, and Gemini CLI and Qwen Code
#     under Node);
#   - Debian's tmux, if it is missing.
# A second run, with everything in place, only checks and returns.
#
#   tests/agents/install.sh                       install Claude Code (prints nothing when all is there)
#   tests/agents/install.sh --print-bin           install Claude Code, then print the claude binary's path
#   tests/agents/install.sh --all                 install Claude Code, Codex and Gemini CLI
#   tests/agents/install.sh --print-bin AGENT     install AGENT (claude-code, codex, gemini-cli, qwen-code,
#                                                 copilot, opencode, droid), print its command
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_CLI_VERSION=0.61.0
QWEN_CODE_VERSION=0.24.4
COPILOT_VERSION=1.0.102
OPENCODE_VERSION=1.18.33
# The platform package: the wrapper @factory/cli pins a platform version the registry lacks.
DROID_VERSION=0.225.2

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
agents="$repo/.agents"

usage() { echo "usage: $0 [--all | --print-bin [claude-code|codex|gemini-cli|qwen-code|copilot|opencode|droid]]" >&2; exit 2; }

print_bin=false
wanted=(claude-code)
case "${1:-}" in
  --print-bin)
    print_bin=true
    case "${2:-claude-code}" in
      claude-code|codex|gemini-cli|qwen-code|copilot|opencode|droid) wanted=("${2:-claude-code}") ;;
      *) usage ;;
    esac
    [ $# -le 2 ] || usage
    ;;
  --all) wanted=(claude-code codex gemini-cli); [ $# -eq 1 ] || usage ;;
  "") ;;
  *) usage ;;
esac

if ! command -v tmux >/dev/null; then
  echo "installing tmux (apt-get)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi

# The package, version, folder, the file to run and the manifest whose version is checked
# (and npm's extra arguments).
describe() {
  npm_extra=()
  case "$1" in
    claude-code)
      package=@anthropic-ai/claude-code version=$CLAUDE_CODE_VERSION prefix="$agents/claude-code"
      bin="$prefix/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
      manifest="$prefix/node_modules/@anthropic-ai/claude-code-linux-x64/package.json" ;;
    codex)
      package=@openai/codex version=$CODEX_VERSION prefix="$agents/codex"
      bin="$prefix/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
      manifest="$prefix/node_modules/@openai/codex/package.json" ;;
    gemini-cli)
      package=@google/gemini-cli version=$GEMINI_CLI_VERSION prefix="$agents/gemini-cli"
      bin="$prefix/node_modules/@google/gemini-cli/bundle/gemini.js"
      manifest="$prefix/node_modules/@google/gemini-cli/package.json" ;;
    qwen-code)
      package=@qwen-code/qwen-code version=$QWEN_CODE_VERSION prefix="$agents/qwen-code"
      bin="$prefix/node_modules/@qwen-code/qwen-code/cli-entry.js"
      manifest="$prefix/node_modules/@qwen-code/qwen-code/package.json"
      # Its optional native modules (clipboard, terminal) are not needed and need a compiler.
      npm_extra=(--omit=optional) ;;
    copilot)
      package=@github/copilot version=$COPILOT_VERSION prefix="$agents/copilot"
      bin="$prefix/node_modules/@github/copilot-linux-x64/copilot"
      manifest="$prefix/node_modules/@github/copilot/package.json" ;;
    opencode)
      package=opencode-ai version=$OPENCODE_VERSION prefix="$agents/opencode"
      bin="$prefix/node_modules/opencode-linux-x64/bin/opencode"
      manifest="$prefix/node_modules/opencode-ai/package.json" ;;
    droid)
      package=@factory/cli-linux-x64 version=$DROID_VERSION prefix="$agents/droid"
      bin="$prefix/node_modules/@factory/cli-linux-x64/bin/droid"
      manifest="$prefix/node_modules/@factory/cli-linux-x64/package.json" ;;
  esac
}

installed_version() {
  [ -f "$bin" ] && [ -f "$manifest" ] || return 1
  sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$manifest" | head -1
}

# npm's exit status and the end of its log, with the free space where it writes: a
# failed install says why. A download cut by the network is tried again (up to 3 times,
# 10 s apart, the folder cleared first); a full disk or any other error is not, since
# trying again cannot help.
npm_install() {
  local attempt
  for attempt in 1 2 3; do
    rm -rf "$prefix/node_modules"
    mkdir -p "$prefix"
    if npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        --fetch-retries=4 --fetch-retry-mintimeout=5000 --fetch-retry-maxtimeout=60000 \
        "${npm_extra[@]}" "$package@$version" >"$log" 2>&1; then
      return 0
    fi
    echo "npm install of $package@$version failed (attempt $attempt of 3); the end of its log:" >&2
    tail -30 "$log" >&2
    df -h "$prefix" "$(npm config get cache)" >&2 || true
    if grep -q -E 'ENOSPC|no space left' "$log"; then
      echo "the disk is full: free some space (the folder above) and run the tests again" >&2
      return 1
    fi
    if ! grep -q -E 'ECONNRESET|ETIMEDOUT|EAI_AGAIN|ECONNREFUSED|ENOTFOUND|EPIPE|socket hang up|network|integrity checksum failed|TAR_BAD_ARCHIVE|zlib|unexpected end|E5[0-9][0-9]|E429' "$log"; then
      return 1
    fi
    [ "$attempt" -lt 3 ] && sleep 10
  done
  return 1
}

for agent in "${wanted[@]}"; do
  describe "$agent"
  if [ "$(installed_version || true)" != "$version" ]; then
    echo "installing $package@$version into $prefix (npm)" >&2
    log="$agents/$agent-npm-install.log"
    mkdir -p "$prefix"
    if ! npm_install; then
      echo "npm install of $package@$version into $prefix failed: see its log above (kept in $log)" >&2
      exit 1
    fi
    if [ "$(installed_version || true)" != "$version" ]; then
      tail -30 "$log" >&2
      echo "npm installed no runnable $agent at $bin (is this linux-x64 with glibc?)" >&2
      exit 1
    fi
  fi
done

if $print_bin; then
  echo "$bin"
fi
