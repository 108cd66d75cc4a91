#!/usr/bin/env bash
# Installs Verbatim and shows it working:
#   1. the `verbatim` binary, with cargo, into ~/.cargo/bin;
#   2. the VS Code extension, when `code` is on PATH (or with --vscode: just build the .vsix);
#   3. prints the lazy.nvim spec for the Neovim plugin in this checkout;
#   4. runs a real session (a scripted editor and an agent) against the installed binary.
#
#   ./install.sh            everything that applies on this machine
#   ./install.sh --no-demo  skip step 4
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
demo=1
build_vsix=0
for arg in "$@"; do
  case "$arg" in
    --no-demo) demo=0 ;;
    --vscode) build_vsix=1 ;;
    *) echo "unknown option $arg (expected --no-demo or --vscode)" >&2; exit 2 ;;
  esac
done

current="starting"
step() { current=$*; printf '\n==> %s\n' "$*"; }
# One line at the end that says which step failed (its own output is above it).
trap 'echo "install.sh failed while ${current}" >&2' ERR

step "installing the verbatim binary (cargo install --locked --path server)"
cargo install --locked --path "$repo/server"
bin_dir=${CARGO_HOME:-$HOME/.cargo}/bin
verbatim=$bin_dir/verbatim
"$verbatim" --version
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "note: $bin_dir is not on your PATH; add it so that editors find \`verbatim\`" ;;
esac

if command -v code >/dev/null || [ "$build_vsix" = 1 ]; then
  step "building the VS Code extension (vscode-extension/dist/verbatim.vsix)"
  (cd "$repo/vscode-extension" && npm ci --no-audit --no-fund && npm run package)
  if command -v code >/dev/null; then
    code --install-extension "$repo/vscode-extension/dist/verbatim.vsix"
  else
    echo "install it with: code --install-extension $repo/vscode-extension/dist/verbatim.vsix"
  fi
else
  step "VS Code: \`code\` is not on PATH; run ./install.sh --vscode to build the extension package"
fi

step "Neovim 0.11: add this spec to lazy.nvim (see neovim/README.md for the options)"
cat <<SPEC
{ dir = "$repo/neovim", name = "verbatim", main = "verbatim", opts = {} }
SPEC

if [ "$demo" = 1 ]; then
  step "a real session against the installed binary (tests/demo/transcript.py)"
  python3 "$repo/tests/demo/transcript.py" "$verbatim"
fi

step "done: open a project in your editor, then point an agent at it (docs/agents.md)"
