#!/usr/bin/env python3
"""Runs the real, interactive Claude Code CLI under tmux for end-to-end tests,
against the scripted model of model_server.py. A Python module and a CLI.

From Python:

    sys.path.insert(0, "tests/agents"); import claude_tmux
    with claude_tmux.Session.start(cwd=project, script=[...]) as claude:
        claude.send_text("create hello.txt")
        claude.answer(["1"], r"Do you want to create hello\\.txt\\?")   # the permission prompt
        request = claude.wait_request(count=2)   # the main-loop request with the tool_result

From a shell or Node (every subcommand names the session with --name; start
prints the session as JSON):

    python3 tests/agents/claude_tmux.py start --name T --cwd DIR --script S.json [-- CLAUDE_ARGS...]
    python3 tests/agents/claude_tmux.py send --name T --text "create hello.txt"
    python3 tests/agents/claude_tmux.py answer --name T --regex 'Do you want' 1
    python3 tests/agents/claude_tmux.py wait-for --name T --regex 'Created' --timeout 20
    python3 tests/agents/claude_tmux.py wait-request --name T --count 2
    python3 tests/agents/claude_tmux.py capture --name T
    python3 tests/agents/claude_tmux.py stop --name T

`start --command 'nvim ...'` runs that command line in the pane instead of
Claude Code, in the same seeded HOME and minimal environment, with `claude`
on PATH (for a `:terminal claude` inside Neovim).

Each session has its own tmux server (`tmux -L NAME`, so `tmux -L NAME attach`
watches it live) and a state directory, by default $TMPDIR/claude-tmux-NAME,
holding session.json, a fresh HOME, the model's script, request log and
stderr. README.md beside this file describes the screens to expect.
"""

import argparse
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INSTALL_DIR = os.path.join(REPO, ".agents", "claude-code")
NATIVE_BIN = os.path.join(INSTALL_DIR, "node_modules", "@anthropic-ai",
                          "claude-code-linux-x64", "claude")
MODEL_SERVER = os.path.join(HERE, "model_server.py")

# Any key works with the scripted model; Claude Code remembers an approved key
# by its last 20 characters (customApiKeyResponses.approved in ~/.claude.json).
DEFAULT_API_KEY = "sk-ant-api03-verbatim-test-key-0123456789abcdef"

# The prompt box: a rule line, then the input line: "❯" and a no-break space. The
# permission dialog's "❯ 1. Yes" is indented by a space, so it does not match.
READY_REGEX = r"(?m)^─{20,}\n❯\s"

POLL_SECONDS = 0.05

# Claude Code's question for a folder it has not been told to trust.
TRUST_DIALOG_REGEX = r"Yes, I trust this folder"

# Claude Code's dialogs (the permission prompt among them) refuse keys for a
# moment after they open, so that keys typed for the prompt box do not answer
# them: a key sent as soon as the dialog shows is sometimes dropped without a
# trace. Nothing on the screen tells when the dialog starts listening, so
# answer() waits this long after the dialog appears (measured: keys sent 0.4 s
# after it appeared were never dropped; the guard in the source is 150-200 ms).
DIALOG_GUARD_SECONDS = 0.4

# An Enter that follows typed text too closely is taken for part of a paste and
# becomes a newline in the prompt box, not a submission: Gemini CLI (and Qwen
# Code, its fork) turns an Enter read within 30 ms of the last typed key into
# shift+Enter (`bufferFastReturn`, FAST_RETURN_TIMEOUT). The echo on the screen
# proves the last key was read; Enter sent this long after the echo is read at
# least as long after it, whatever the load. (CI failed so once: "create b.txt"
# stayed in Gemini CLI's prompt box and the model was never asked.)
ENTER_AFTER_ECHO_SECONDS = 0.15


class HarnessError(Exception):
    """A wait that timed out, a process that died, a session that is missing."""


def state_dir_for(name):
    return os.path.join(tempfile.gettempdir(), f"claude-tmux-{name}")


def claude_version(binary):
    """The version in the platform package's package.json, or None."""
    try:
        with open(os.path.join(os.path.dirname(binary), "package.json"), encoding="utf-8") as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def find_binary(binary=None):
    binary = binary or os.environ.get("CLAUDE_CODE_BIN") or NATIVE_BIN
    if not os.access(binary, os.X_OK):
        raise HarnessError(f"Claude Code binary not found at {binary}: run tests/agents/install.sh "
                           "(or pass --bin / set CLAUDE_CODE_BIN)")
    return binary


def seed_home(home, trusted_dirs, api_key, version=None, claude_json=None, settings=None):
    """Makes HOME go straight to the prompt: onboarding done, the key approved,
    the folders trusted, the one-time notices seen; and the permission mode
    `default` (this version's own default is `auto`, a server-side classifier
    that a scripted model does not play). Merges into files already there, so a
    test may seed more before or after."""
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    config_path = os.path.join(home, ".claude.json")
    config = _read_json(config_path, {})
    config.update({
        "hasCompletedOnboarding": True,
        "hasSeenAutoDefaultNotice": True,
        # Else defaultMode "default" brings "Make auto mode your default permission mode?".
        "hasSeenAutoDefaultNudge": True,
        "officialMarketplaceAutoInstallAttempted": True,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
    })
    if version:
        config.setdefault("lastReleaseNotesSeen", version)
        config.setdefault("lastClawdEntranceVersion", version)
    projects = config.setdefault("projects", {})
    for folder in trusted_dirs:
        for key in {folder, os.path.realpath(folder)}:
            projects.setdefault(key, {}).update({"hasTrustDialogAccepted": True})
    config.update(claude_json or {})
    _write_json(config_path, config)

    settings_path = os.path.join(home, ".claude", "settings.json")
    user_settings = _read_json(settings_path, {})
    user_settings.setdefault("permissions", {}).setdefault("defaultMode", "default")
    user_settings.update(settings or {})
    _write_json(settings_path, user_settings)


def _read_json(path, default):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def _terminal_name():
    for base in ("/usr/share/terminfo", "/lib/terminfo", "/etc/terminfo"):
        if os.path.exists(os.path.join(base, "t", "tmux-256color")):
            return "tmux-256color"
    return "screen-256color"


def start_model_server(script_path, log_path, stderr_path, timeout=10.0):
    """Starts model_server.py; returns (Popen, port) once it has written its port."""
    port_file = log_path + ".port"
    for stale in (port_file, log_path):
        if os.path.exists(stale):
            os.unlink(stale)
    open(log_path, "w").close()
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, MODEL_SERVER, "--script", script_path, "--log", log_path,
             "--port-file", port_file],
            stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(port_file):
            with open(port_file) as f:
                return process, int(f.read())
        if process.poll() is not None:
            break
        time.sleep(0.02)
    process.kill()
    with open(stderr_path) as f:
        raise HarnessError(f"model_server.py did not start (exit {process.poll()}):\n{f.read()}")


class Session:
    """One tmux server running Claude Code (or --command) in one pane."""

    def __init__(self, state):
        self.state = state
        self.name = state["name"]
        self._model_process = None  # the Popen, when this process started the model

    # ----- life cycle -------------------------------------------------------

    @classmethod
    def start(cls, cwd, name=None, script=None, base_url=None, claude_args=(), command=None,
              env=None, home=None, binary=None, api_key=DEFAULT_API_KEY, size=(120, 40),
              trust=(), claude_json=None, settings=None, wait_ready=True, ready_timeout=30.0,
              state_dir=None):
        """Starts a session and, unless `command` is given or wait_ready is false,
        waits for Claude Code's prompt box.

        script: a list of model steps or the path of a JSON script; starts
            model_server.py with it. Otherwise base_url names a model already running.
        claude_args: extra arguments for claude, e.g. ["--ide"] or
            ["--permission-mode", "acceptEdits"].
        command: a shell command line to run in the pane instead of claude.
        env: extra environment, e.g. {"CLAUDE_CODE_SSE_PORT": "1234"}; a value of
            None removes one of the defaults.
        home: a HOME to seed and use (kept by stop); by default a fresh one in the state directory.
        """
        name = name or f"claude-{os.getpid()}-{secrets.token_hex(3)}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise HarnessError(f"session name {name!r}: use letters, digits, '.', '_' or '-'")
        state_dir = os.path.abspath(state_dir or state_dir_for(name))
        if _tmux_alive(name):
            raise HarnessError(f"a tmux server named {name} is already running: "
                               f"stop it first (claude_tmux.py stop --name {name})")
        shutil.rmtree(state_dir, ignore_errors=True)
        os.makedirs(state_dir)
        cwd = os.path.abspath(cwd)
        binary = find_binary(binary)
        owns_home = home is None
        home = os.path.abspath(home or os.path.join(state_dir, "home"))
        os.makedirs(home, exist_ok=True)
        seed_home(home, [cwd, *trust], api_key, claude_version(binary), claude_json, settings)

        state = {"name": name, "state_dir": state_dir, "home": home, "owns_home": owns_home,
                 "cwd": cwd, "bin": binary, "model_pid": None, "model_port": None,
                 "model_log": None, "model_stderr": None, "pane_pid": None}
        process = None
        if script is not None:
            if isinstance(script, (list, dict)):
                script_path = os.path.join(state_dir, "script.json")
                _write_json(script_path, script)
            else:
                script_path = os.path.abspath(script)
            state["model_log"] = os.path.join(state_dir, "requests.jsonl")
            state["model_stderr"] = os.path.join(state_dir, "model_server.stderr")
            process, port = start_model_server(script_path, state["model_log"],
                                               state["model_stderr"])
            state["model_pid"], state["model_port"] = process.pid, port
            base_url = f"http://127.0.0.1:{port}"
        if not base_url:
            raise HarnessError("give a script (to start model_server.py) or a model's base URL")

        bin_dir = os.path.dirname(binary)
        pane_env = {
            "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TERM": _terminal_name(),
            "LANG": "C.UTF-8",
            "TMPDIR": tempfile.gettempdir(),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": api_key,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        for key, value in (env or {}).items():
            if value is None:
                pane_env.pop(key, None)
            else:
                pane_env[key] = str(value)
        state["env"] = pane_env
        if command is not None:
            program = ["/bin/sh", "-c", command]
        else:
            program = [binary, *claude_args]
        state["program"] = program

        config = os.path.join(state_dir, "tmux.conf")
        with open(config, "w") as f:
            # remain-on-exit keeps the last screen (and exit status) of a program that quits.
            f.write("set -g remain-on-exit on\nset -g status off\nset -s escape-time 0\n"
                    "set -g history-limit 20000\n")
        width, height = size
        env_args = [f"{k}={v}" for k, v in pane_env.items()]
        try:
            _tmux(name, "-f", config, "new-session", "-d", "-s", "main", "-x", str(width),
                  "-y", str(height), "-c", cwd, "env", "-i", *env_args, *program)
        except HarnessError:
            if process is not None:
                process.kill()
                process.wait()
            raise
        session = cls(state)
        session._model_process = process
        state["pane_pid"] = int(session._display("#{pane_pid}"))
        state["socket_path"] = session._display("#{socket_path}")
        _write_json(os.path.join(state_dir, "session.json"), state)
        if wait_ready and command is None:
            try:
                session._wait_ready(ready_timeout)
            except HarnessError:
                session.stop(keep=True)
                raise
        return session

    def _wait_ready(self, timeout):
        """Waits for the prompt box. The folder was seeded as trusted, but another
        Claude Code running in the same HOME may rewrite ~/.claude.json from its own
        copy in between and take that trust away (seen once in a full run): Claude
        Code then asks whether to trust the folder, and the answer is yes, as the
        seed said."""
        deadline = time.monotonic() + timeout
        self.wait_for(f"{READY_REGEX}|{TRUST_DIALOG_REGEX}", timeout)
        if re.search(TRUST_DIALOG_REGEX, self.capture()):
            print(f"claude_tmux: {self.state['cwd']} lost its seeded trust; answering the trust dialog",
                  file=sys.stderr)
            self.answer(["Down", "Enter"], dialog=TRUST_DIALOG_REGEX)
            self.wait_for(READY_REGEX, max(deadline - time.monotonic(), 10.0))

    @classmethod
    def attach(cls, name, state_dir=None):
        """The session started (perhaps by another process) under `name`."""
        path = os.path.join(state_dir or state_dir_for(name), "session.json")
        try:
            with open(path, encoding="utf-8") as f:
                return cls(json.load(f))
        except FileNotFoundError:
            raise HarnessError(
                f"no session named {name} ({path} is missing): start it first") from None

    def stop(self, keep=False):
        """Kills the tmux server and what ran in its pane (claude, or nvim and the
        claude in its :terminal), and the model server; removes the state
        directory unless `keep`."""
        # The pane's process tree, taken before tmux goes: its processes are
        # reparented then. Each is known by (pid, start time), so a reused pid
        # is never signalled.
        pane_tree = _process_tree(self.state.get("pane_pid"))
        if _tmux_alive(self.name):
            subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)
        socket_path = self.state.get("socket_path")
        if socket_path and os.path.exists(socket_path) and not _tmux_alive(self.name):
            os.unlink(socket_path)  # tmux leaves it behind after kill-server
        # Let them exit on the hangup (Claude Code saves its state then), then
        # SIGTERM, then SIGKILL the stragglers.
        started = time.monotonic()
        signalled = set()
        while True:
            remaining = [p for p in pane_tree if _same_process(*p)]
            elapsed = time.monotonic() - started
            if not remaining or elapsed > 4.0:
                break
            for process in remaining:
                if elapsed > 3.0:
                    _signal(process[0], signal.SIGKILL)
                elif elapsed > 1.5 and process not in signalled:
                    _signal(process[0], signal.SIGTERM)
                    signalled.add(process)
            time.sleep(POLL_SECONDS)
        model_pid = self.state.get("model_pid")
        if self._model_process is not None:
            self._model_process.terminate()
            try:
                self._model_process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._model_process.kill()
                self._model_process.wait()
        elif model_pid and _proc_has(model_pid, "cmdline", self.state["model_log"]):
            _terminate(model_pid)
        if not keep:
            shutil.rmtree(self.state["state_dir"], ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        # On failure keep the state directory (HOME, request log) for a post-mortem.
        if kind is not None:
            print(f"claude_tmux: kept {self.state['state_dir']} for inspection", file=sys.stderr)
        self.stop(keep=kind is not None)

    # ----- the terminal -----------------------------------------------------

    def send_keys(self, *keys):
        """tmux key names: Enter, Escape, Tab, BTab (shift+tab), Up, Down, C-c, "1", ..."""
        _tmux(self.name, "send-keys", "-t", "main", *keys)

    def send_text(self, text, enter=True, echo_timeout=5.0):
        """Types `text` literally; with `enter`, waits until its end shows on the
        screen (so the keystrokes arrived), lets ENTER_AFTER_ECHO_SECONDS pass
        (so Enter is not taken for part of a paste) and presses Enter."""
        _tmux(self.name, "send-keys", "-t", "main", "-l", text)
        if enter:
            tail = text.strip().splitlines()[-1][-12:] if text.strip() else ""
            if tail:
                self.wait_for(re.escape(tail), timeout=echo_timeout)
            time.sleep(ENTER_AFTER_ECHO_SECONDS)
            self.send_keys("Enter")

    def answer(self, keys, dialog=r"Do you want to", timeout=20.0):
        """Answers a dialog: waits for `dialog` on the screen, lets its input
        guard pass (DIALOG_GUARD_SECONDS), then sends `keys` (tmux key names,
        e.g. ["1"], ["Down", "Down", "Tab"], ["Escape"])."""
        self.wait_for(dialog, timeout)
        time.sleep(DIALOG_GUARD_SECONDS)
        self.send_keys(*keys)

    def wait_ide(self, ide_name, timeout=20.0):
        """Waits until Claude Code counts the IDE `ide_name` (the lock's ideName)
        as connected, as its `/ide` dialog shows it (`✔ NAME`); returns the
        seconds it took.

        Claude Code connects only after its prompt box is drawn, and for a
        moment after the MCP handshake it still ignores the IDE: a prompt sent
        then is answered without openDiff. Nothing else on the screen tells, so
        this opens `/ide`, reads it and closes it with Esc ("Kept IDE
        selection"), until the check mark shows. The command stays in the
        transcript and reaches the model as local-command output."""
        started = time.monotonic()
        deadline = started + timeout
        connected = re.compile(r"✔ " + re.escape(ide_name))
        while True:
            self.wait_for(READY_REGEX, max(deadline - time.monotonic(), 0.1))
            _tmux(self.name, "send-keys", "-t", "main", "-l", "/ide")
            self.wait_for(r"/ide\s+Manage IDE integrations", 5.0)
            time.sleep(ENTER_AFTER_ECHO_SECONDS)
            self.send_keys("Enter")
            self.wait_for(r"Connect to an IDE|No available IDEs detected", 10.0)
            time.sleep(DIALOG_GUARD_SECONDS)
            screen = self.capture()
            self.send_keys("Escape")
            try:
                self.wait_for(r"Connect to an IDE|No available IDEs detected", 5.0, absent=True)
            except HarnessError:
                self.send_keys("Escape")  # the first one fell in the dialog's guard
                self.wait_for(r"Connect to an IDE|No available IDEs detected", 5.0, absent=True)
            if connected.search(screen):
                return time.monotonic() - started
            if time.monotonic() >= deadline:
                raise HarnessError(self.diagnose(
                    f"timed out after {timeout:g}s waiting for the IDE {ide_name!r} to be "
                    f"connected; the last /ide dialog read:\n{screen.strip()}"))
            time.sleep(0.3)

    def capture(self, escapes=False, history=False):
        """The pane's text: the visible screen, or with `history` the scrollback too."""
        args = ["capture-pane", "-p", "-t", "main"]
        if escapes:
            args.append("-e")
        if history:
            args += ["-S", "-"]
        return _tmux(self.name, *args)

    def pane_exit_status(self):
        """None while the program runs, else its exit status (128 + N for signal N)."""
        deadline = time.monotonic() + 1.0
        while True:
            dead, status, signum = self._display(
                "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}").split(":")
            if dead != "1":
                return None
            # tmux marks the pane dead a moment before it records the status.
            if status or signum or time.monotonic() > deadline:
                return int(status) if status else 128 + int(signum or 0)
            time.sleep(0.02)

    def wait_for(self, regex, timeout=20.0, history=False, absent=False):
        """Waits until `regex` matches the screen (or, with `absent`, no longer
        matches); returns the match (None with `absent`). On timeout, or when the
        program exits first, raises HarnessError with the screen and the last
        model requests."""
        pattern = re.compile(regex)
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture(history=history)
            match = pattern.search(screen)
            if (match is None) == absent:
                return match
            status = self.pane_exit_status()
            if status is not None:
                raise HarnessError(self.diagnose(
                    f"the program in the pane exited (status {status}) while waiting for "
                    f"{'no ' if absent else ''}/{regex}/"))
            if time.monotonic() >= deadline:
                raise HarnessError(self.diagnose(
                    f"timed out after {timeout:g}s waiting for {'no ' if absent else ''}/{regex}/"))
            time.sleep(POLL_SECONDS)

    def wait_until(self, predicate, timeout=20.0, what="a condition"):
        """Waits for predicate() to be true; HarnessError (with the screen) if not."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                raise HarnessError(
                    self.diagnose(f"timed out after {timeout:g}s waiting for {what}"))
            time.sleep(POLL_SECONDS)

    # ----- the model --------------------------------------------------------

    def requests(self, kind=None):
        """The logged requests (harness events left out), optionally of one kind."""
        return [r for r in self._log_records()
                if "event" not in r and (kind is None or r["kind"] == kind)]

    def mismatches(self):
        """The model_server expect_mismatch events so far."""
        return [r for r in self._log_records() if r.get("event") == "expect_mismatch"]

    def _log_records(self):
        """Every complete line of the model's log: the server may be writing the last one."""
        path = self.state.get("model_log")
        if not path or not os.path.exists(path):
            return []
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.endswith("\n")]

    def wait_request(self, count, kind="main", timeout=20.0):
        """Waits until `count` requests of `kind` were logged; returns the last of them."""
        self.wait_until(lambda: len(self.requests(kind)) >= count, timeout,
                        f"{count} {kind} request(s) to the model")
        return self.requests(kind)[count - 1]

    def diagnose(self, headline):
        """A failure message: the headline, the screen, the last requests, the model's stderr."""
        parts = [headline, f"--- screen of tmux -L {self.name} ---"]
        try:
            parts.append(self.capture().rstrip("\n"))
        except HarnessError as error:
            parts.append(f"(no screen: {error})")
        log = self.state.get("model_log")
        if log:
            parts.append(f"--- last model requests ({log}) ---")
            parts.extend(summarize(r) for r in self.requests()[-5:])
            parts.extend(f"MISMATCH step {m['step']}: missing {m['missing']!r} in "
                         f"{m['tool_results']!r}" for m in self.mismatches())
        stderr = self.state.get("model_stderr")
        if stderr and os.path.exists(stderr) and os.path.getsize(stderr):
            with open(stderr) as f:
                parts += ["--- model_server stderr ---", f.read()[-2000:].rstrip()]
        parts.append(f"--- state directory: {self.state['state_dir']} ---")
        return "\n".join(parts)

    def _display(self, fmt):
        return _tmux(self.name, "display-message", "-p", "-t", "main", fmt).strip()


def summarize(record):
    """One line per logged request: what it was and what its last message held."""
    body = record.get("body") or {}
    line = f"#{record['seq']} {record['method']} {record['path']} kind={record['kind']}"
    if record.get("step") is not None:
        line += f" step={record['step']}"
    messages = body.get("messages") if isinstance(body, dict) else None
    if messages:
        last = messages[-1]
        content = last.get("content")
        if isinstance(content, list):
            content = " | ".join(
                f"{b.get('type')}:"
                f"{json.dumps(b.get('content', b.get('text', b.get('input'))))[:160]}"
                for b in content if isinstance(b, dict))
        line += f" last {last.get('role')}: {str(content)[:400]}"
    return line


def _tmux(name, *args):
    result = subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise HarnessError(f"tmux -L {name} {' '.join(shlex.quote(a) for a in args[:3])}...: "
                           f"{result.stderr.strip() or 'failed'}")
    return result.stdout


def _tmux_alive(name):
    return subprocess.run(["tmux", "-L", name, "has-session"],
                          capture_output=True).returncode == 0


def _start_time(pid):
    """The start time of a running (not zombie) process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == b"Z" else fields[19]


def _same_process(pid, start_time):
    return _start_time(pid) == start_time


def _process_tree(root):
    """(pid, start time) of root and all its descendants that are running."""
    if not root or _start_time(root) is None:
        return []
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        start_time = _start_time(pid)
        if start_time is not None:
            tree.append((pid, start_time))
        todo.extend(children.get(pid, []))
    return tree


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _proc_has(pid, name, text):
    """Whether /proc/PID/NAME (environ or cmdline) contains `text`."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return text.encode() in f.read()
    except OSError:
        return False


def _running(pid):
    """Whether pid exists and is not a zombie."""
    return _start_time(pid) is not None


def _terminate(pid, grace=2.0):
    """SIGTERM, then SIGKILL after `grace` seconds, to one process we started."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
            if finished:
                return
        except ChildProcessError:
            # Not our child (another process started it): poll whether it is still
            # running. A zombie counts as gone: PID 1 in a container may never reap it.
            if not _running(pid):
                return
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ----- command line ----------------------------------------------------------

def _parse_env(items):
    env = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise HarnessError(f"--env {item!r}: expected KEY=VALUE")
        env[key] = value
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(prog="claude_tmux.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="subcommand", required=True)

    def named(name, help_text):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--name", required=(name != "start"), help="the session's name")
        sub.add_argument("--state-dir", help="default: $TMPDIR/claude-tmux-NAME")
        return sub

    start = named("start", "start a session; prints it as JSON")
    start.add_argument("--cwd", default=os.getcwd(), help="project folder (trusted)")
    start.add_argument("--script", help="JSON script: starts model_server.py for this session")
    start.add_argument("--base-url", help="a model server already running, instead of --script")
    start.add_argument("--env", action="append", metavar="KEY=VALUE", help="extra environment")
    start.add_argument("--unset", action="append", default=[], metavar="KEY",
                       help="leave out one of the default variables")
    start.add_argument("--home", help="HOME to seed and use (default: fresh, in the state dir)")
    start.add_argument("--bin", help="claude binary (default: $CLAUDE_CODE_BIN, .agents/...)")
    start.add_argument("--api-key", default=DEFAULT_API_KEY)
    start.add_argument("--size", default="120x40", help="pane WIDTHxHEIGHT")
    start.add_argument("--trust", action="append", default=[], help="another folder to trust")
    start.add_argument("--claude-json", help="JSON object merged into HOME/.claude.json")
    start.add_argument("--settings", help="JSON object merged into HOME/.claude/settings.json")
    start.add_argument("--command", help="shell command line to run instead of claude")
    start.add_argument("--no-wait", action="store_true", help="do not wait for the prompt box")
    start.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the prompt")
    start.add_argument("claude_args", nargs="*", help="after --: arguments for claude")

    send = named("send", "send tmux keys (Enter, Escape, Tab, Down, C-c, ...) or --text")
    send.add_argument("--text", help="type this literally, then Enter")
    send.add_argument("--no-enter", action="store_true", help="with --text: no Enter")
    send.add_argument("keys", nargs="*")

    answer = named("answer", "wait for a dialog, let its input guard pass, send keys")
    answer.add_argument("--regex", default="Do you want to", help="the dialog to wait for")
    answer.add_argument("--timeout", type=float, default=20.0)
    answer.add_argument("keys", nargs="+", help="tmux key names: 1, Enter, Down, Tab, Escape")

    wait = named("wait-for", "wait until a regex matches the screen; prints the match as JSON")
    wait.add_argument("--regex", required=True)
    wait.add_argument("--timeout", type=float, default=20.0)
    wait.add_argument("--history", action="store_true", help="search the scrollback too")
    wait.add_argument("--absent", action="store_true", help="wait until it no longer matches")

    wait_ide = named("wait-ide", "wait until /ide shows the IDE connected (see README)")
    wait_ide.add_argument("--ide-name", required=True, help="the lock file's ideName")
    wait_ide.add_argument("--timeout", type=float, default=20.0)

    capture = named("capture", "print the screen")
    capture.add_argument("--escapes", action="store_true", help="keep colours (capture-pane -e)")
    capture.add_argument("--history", action="store_true", help="include the scrollback")

    requests = named("requests", "print the logged model requests as a JSON list")
    requests.add_argument("--kind", choices=["main", "side", "count_tokens", "other"])

    wait_request = named("wait-request", "wait for the COUNTth request of a kind; prints it")
    wait_request.add_argument("--count", type=int, required=True)
    wait_request.add_argument("--kind", default="main")
    wait_request.add_argument("--timeout", type=float, default=20.0)

    named("status", "print the session, its pane's state and the mismatches as JSON")

    stop = named("stop", "kill tmux and the model server; remove the state dir")
    stop.add_argument("--keep", action="store_true", help="keep the state directory")

    args = parser.parse_args(argv)
    try:
        return _run(args)
    except HarnessError as error:
        print(f"claude_tmux: {error}", file=sys.stderr)
        return 1


def _run(args):
    if args.subcommand == "start":
        width, _, height = args.size.partition("x")
        session = Session.start(
            cwd=args.cwd, name=args.name, script=args.script, base_url=args.base_url,
            claude_args=args.claude_args, command=args.command,
            env={**_parse_env(args.env), **{key: None for key in args.unset}},
            home=args.home, binary=args.bin, api_key=args.api_key, size=(int(width), int(height)),
            trust=args.trust,
            claude_json=json.loads(args.claude_json) if args.claude_json else None,
            settings=json.loads(args.settings) if args.settings else None,
            wait_ready=not args.no_wait, ready_timeout=args.timeout, state_dir=args.state_dir)
        print(json.dumps(session.state, indent=2))
        return 0

    session = Session.attach(args.name, args.state_dir)
    if args.subcommand == "send":
        if args.text is not None:
            session.send_text(args.text, enter=not args.no_enter)
        if args.keys:
            session.send_keys(*args.keys)
    elif args.subcommand == "answer":
        session.answer(args.keys, args.regex, args.timeout)
    elif args.subcommand == "wait-for":
        started = time.monotonic()
        match = session.wait_for(args.regex, args.timeout, args.history, args.absent)
        print(json.dumps({"match": match.group(0) if match else None,
                          "groups": list(match.groups()) if match else [],
                          "seconds": round(time.monotonic() - started, 3)}))
    elif args.subcommand == "wait-ide":
        seconds = session.wait_ide(args.ide_name, args.timeout)
        print(json.dumps({"seconds": round(seconds, 3)}))
    elif args.subcommand == "capture":
        sys.stdout.write(session.capture(args.escapes, args.history))
    elif args.subcommand == "requests":
        print(json.dumps(session.requests(args.kind)))
    elif args.subcommand == "wait-request":
        print(json.dumps(session.wait_request(args.count, args.kind, args.timeout)))
    elif args.subcommand == "status":
        alive = _tmux_alive(session.name)
        print(json.dumps({**session.state, "tmux_alive": alive,
                          "exit_status": session.pane_exit_status() if alive else None,
                          "requests": len(session.requests()),
                          "mismatches": session.mismatches()}, indent=2))
    elif args.subcommand == "stop":
        session.stop(keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
