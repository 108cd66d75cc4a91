#!/usr/bin/env bash
# Checks the plugin's Lua: formatting with stylua (neovim/.stylua.toml) and
# lint with luacheck (neovim/.luacheckrc: unused or undefined variables,
# shadowing, unreachable code). Installs what is missing by itself:
#   stylua 2.6.0    from crates.io (cargo install --locked stylua@2.6.0) into
#                   ~/.cache/verbatim/tools, kept for later runs and other clones
#                   (PyPI has no stylua package)
#   luacheck 1.1.0  Debian's lua-check package (apt-get)
#
#   neovim/tests/style.sh          check
#   neovim/tests/style.sh --fix    reformat in place, then check
#
# Environment: VERBATIM_STYLUA   a stylua 2.6.0 binary to use instead
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin_dir=$(dirname "$tests_dir")
stylua_version=2.6.0

has_version() { "$1" --version 2>/dev/null | grep -q "$2"; }

stylua=${VERBATIM_STYLUA:-}
if [ -z "$stylua" ]; then
  if has_version stylua "stylua $stylua_version"; then
    stylua=$(command -v stylua)
  else
    tools="${XDG_CACHE_HOME:-$HOME/.cache}/verbatim/tools"
    stylua="$tools/bin/stylua"
    if ! has_version "$stylua" "stylua $stylua_version"; then
      echo "# installing stylua $stylua_version into $tools (cargo install)"
      cargo install --quiet --locked "stylua@$stylua_version" --root "$tools"
    fi
  fi
fi
if ! has_version "$stylua" "stylua $stylua_version"; then
  echo "stylua $stylua_version not found at $stylua" >&2
  exit 2
fi

if ! command -v luacheck >/dev/null; then
  echo "# installing luacheck (Debian package lua-check)"
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends lua-check
fi

cd "$plugin_dir"
dirs=(lua plugin tests scripts bench)
if [ "${1:-}" = "--fix" ]; then
  "$stylua" "${dirs[@]}"
fi
echo "# $("$stylua" --version) --check"
"$stylua" --check "${dirs[@]}"
echo "# $(luacheck --version | head -1)"
luacheck --no-color --quiet "${dirs[@]}"
echo "# Lua style and lint checks passed"
