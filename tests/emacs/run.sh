#!/usr/bin/env bash
# The Eglot end-to-end test: installs Debian's emacs-nox, elpa-eglot and tmux when
# missing, then drives a real Emacs with Eglot against the verbatim binary
# (VERBATIM_BIN, else target/debug/verbatim).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

missing=()
command -v emacs >/dev/null || missing+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa-src ] && ls /usr/share/emacs/site-lisp/elpa-src | grep -q '^eglot-' \
  || missing+=(elpa-eglot)
command -v tmux >/dev/null || missing+=(tmux)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  echo "installing ${missing[*]} (apt-get)" >&2
  "${sudo[@]}" apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
emacs --version | head -1
exec python3 "$here/e2e_eglot.py"
