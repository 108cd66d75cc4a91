#!/usr/bin/env python3
"""A real plain LSP client: GNU Emacs (Debian's emacs-nox) with Eglot (elpa-eglot),
configured only to start `verbatim lsp` (init.el beside this file), driven as a
person would through a terminal (tmux), with the agent played by the `verbatim` CLI.

    python3 tests/emacs/e2e_eglot.py            # VERBATIM_BIN names the binary

Each case prints what it saw; the run fails on the first case that goes wrong,
with the screen and the server's log. Eglot asks "Proceed? (y or n)" for every
edit a server sends; the person's answer is typed into that prompt.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROMPT = "Proceed? (y or n)"
TIMEOUT = 20.0


class Failure(Exception):
    pass


class Emacs:
    """One Emacs under its own tmux server, in a throwaway git project."""

    def __init__(self, binary):
        self.root = tempfile.mkdtemp(prefix="verbatim-eglot-")
        self.project = os.path.join(self.root, "project")
        os.makedirs(self.project)
        subprocess.run(["git", "init", "-q", self.project], check=True)
        runtime = os.path.join(self.root, "runtime")
        os.makedirs(runtime, mode=0o700)
        bin_dir = os.path.join(self.root, "bin")
        os.makedirs(bin_dir)
        self.log = os.path.join(self.root, "verbatim.log")
        # The server's log (stderr) goes to a file, so that a failure can show it.
        wrapper = os.path.join(bin_dir, "verbatim")
        with open(wrapper, "w") as handle:
            handle.write('#!/bin/sh\nif [ "$1" = lsp ]; then exec "%s" "$@" 2>>"%s"; fi\nexec "%s" "$@"\n'
                         % (binary, self.log, binary))
        os.chmod(wrapper, 0o755)
        self.env = {
            "HOME": os.path.join(self.root, "home"),
            "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "XDG_RUNTIME_DIR": runtime,
            "XDG_STATE_HOME": os.path.join(self.root, "state"),
            "CLAUDE_CONFIG_DIR": os.path.join(self.root, "claude"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "VERBATIM_LOG": "info",
        }
        os.makedirs(self.env["HOME"])
        self.socket = "verbatim-eglot-%d" % os.getpid()

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.socket, *args], check=check,
                              capture_output=True, text=True, env=self.env)

    def start(self, first_file):
        init = os.path.join(HERE, "init.el")
        command = "emacs -nw -q -l %s %s" % (init, first_file)
        self.tmux("new-session", "-d", "-s", "emacs", "-x", "110", "-y", "30",
                  "-c", self.project, command)
        self.wait_for(lambda: "Connected!" in self.messages() or self.cli_ok("documents"),
                      "Eglot to connect to verbatim lsp")
        self.wait_for(lambda: first_file in self.cli("documents").stdout,
                      "the first file to be open in the server")

    def stop(self):
        self.tmux("kill-server", check=False)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "emacs").stdout

    def messages(self):
        return self.screen()

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "emacs", *keys)

    def type(self, text):
        self.tmux("send-keys", "-t", "emacs", "-l", text)

    def cli(self, *args, stdin=None):
        return subprocess.run(["verbatim", *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, input=stdin, timeout=120)

    def cli_ok(self, *args):
        return self.cli(*args).returncode == 0

    def spawn(self, *args):
        return subprocess.Popen(["verbatim", *args], cwd=self.project, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(self, predicate, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.1)
        raise Failure("timed out waiting for %s" % what)

    def answer_prompts(self, process, answer, timeout=TIMEOUT):
        """Types `answer` into every Eglot prompt until `process` ends; returns
        (exit code, stdout, stderr, prompts answered)."""
        deadline = time.monotonic() + timeout
        answered = 0
        while process.poll() is None:
            if time.monotonic() > deadline:
                process.kill()
                raise Failure("the agent's command did not end; screen:\n" + self.screen())
            if PROMPT in self.screen():
                self.keys(answer)
                answered += 1
                # A re-offer asks again with the same words: give Emacs a moment to
                # take the answer, then look again.
                closes = time.monotonic() + 1.0
                while time.monotonic() < closes and PROMPT in self.screen() and process.poll() is None:
                    time.sleep(0.05)
            time.sleep(0.05)
        out, err = process.communicate()
        return process.returncode, out, err, answered

    def file(self, name):
        return os.path.join(self.project, name)

    def read(self, name):
        return json.loads(self.cli("read", "--json", name).stdout)

    def journal(self, name):
        result = self.cli("log", "--json", "--all", "-n", "100", "--path", self.file(name))
        return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]

    def visit(self, name):
        """Opens a file the way a person does (C-x C-f), and waits for its didOpen."""
        self.keys("C-x", "C-f")
        self.wait_for(lambda: "Find file:" in self.screen(), "the Find file prompt", timeout=5)
        self.keys("C-a", "C-k")
        self.type(self.file(name))
        self.keys("Enter")
        self.wait_for(lambda: "Find file:" not in self.screen(), "the file to be visited", timeout=5)
        self.wait_for(lambda: name in self.cli("documents").stdout, "%s to be open" % name)

    def goto_line_end(self, line):
        self.keys("M-g", "g")
        self.wait_for(lambda: "Goto line" in self.screen(), "the Goto line prompt", timeout=5)
        self.type(str(line))
        self.keys("Enter")
        self.wait_for(lambda: "Goto line" not in self.screen(), "the Goto line prompt to close", timeout=5)
        self.keys("C-e")


def check(condition, message):
    if not condition:
        raise Failure(message)


def edit(emacs, name, old, new, summary, *extra):
    return emacs.spawn("edit", "--json", "--agent", "eglot-e2e", "--old", old, "--new", new,
                       "-m", summary, *extra, name)


def case_yes_is_applied_without_another_keystroke(emacs):
    emacs.goto_line_end(3)
    emacs.type(" typed")
    emacs.wait_for(lambda: "gamma typed" in emacs.read("a.txt")["text"], "the typing to reach the server",
                   timeout=5)
    started = time.monotonic()
    code, out, err, prompts = emacs.answer_prompts(edit(emacs, "a.txt", "beta", "BETA", "Shout beta"), "y")
    seconds = time.monotonic() - started
    check(code == 0, "exit %d: %s %s" % (code, out, err))
    result = json.loads(out)
    check(result["applied"] is True, out)
    print("  y: applied (exit 0) after %d prompt(s) in %.1f s, pendingSync=%s, no keystroke after y"
          % (prompts, seconds, result.get("pendingSync", False)))
    # The person's next keystroke makes Eglot send what it held.
    emacs.keys("End")
    emacs.wait_for(lambda: emacs.read("a.txt")["text"] == "alpha\nBETA\ngamma typed\n",
                   "the applied edit and the typing in the server's text", timeout=5)
    check("note" not in emacs.read("a.txt"), "a note after the change arrived")


def case_no_is_a_rejection(emacs):
    code, out, err, _ = emacs.answer_prompts(edit(emacs, "a.txt", "alpha", "ALPHA", "Shout alpha"), "n")
    check(code == 10, "'n' should exit 10 (rejected), got %d: %s %s" % (code, out, err))
    check("User cancelled" in err + out, "the rejection should carry Eglot's words: %s %s" % (out, err))
    message = json.loads(out or err)["error"]["message"] if (out or err).strip().startswith("{") else err.strip()
    print("  n: rejected (exit 10): %s" % message)


def case_typing_just_before_the_edit(emacs):
    emacs.goto_line_end(1)
    emacs.type(" racing")
    process = edit(emacs, "a.txt", "BETA", "beta again", "Quiet beta")
    code, out, err, prompts = emacs.answer_prompts(process, "y")
    check(code in (0, 5), "expected applied or an honest stale, got %d: %s %s" % (code, out, err))
    emacs.keys("End")
    if code == 0:
        emacs.wait_for(lambda: emacs.read("a.txt")["text"] == "alpha racing\nbeta again\ngamma typed\n",
                       "both the typing and the edit", timeout=5)
    print("  typing just before the edit: exit %d after %d prompt(s)" % (code, prompts))


def case_crlf_saved_twice_journals_nothing(emacs):
    with open(emacs.file("dos.txt"), "wb") as handle:
        handle.write(b"one\r\ntwo\r\nthree\r\n")
    emacs.visit("dos.txt")
    for word in (" first", " second"):
        emacs.goto_line_end(2)
        emacs.type(word)
        emacs.keys("C-x", "C-s")
        emacs.wait_for(lambda: word.encode() + b"\r\n" in open(emacs.file("dos.txt"), "rb").read(),
                       "the save to reach the disk", timeout=5)
        time.sleep(1.0)
    entries = emacs.journal("dos.txt")
    check(entries == [], "a CRLF file saved twice journaled: %s" % entries)
    check(open(emacs.file("dos.txt"), "rb").read() == b"one\r\ntwo first second\r\nthree\r\n",
          "the file should keep its CRLF line endings")
    read = emacs.read("dos.txt")
    check(read["lineEnding"] == "crlf" and "\r" not in read["text"], "the read of a CRLF file: %s" % read)
    print("  CRLF file saved twice: nothing journaled, CRLF kept; read says lineEnding crlf")


def case_sed_on_a_clean_buffer_shows_in_it(emacs):
    with open(emacs.file("clean.txt"), "w") as handle:
        handle.write("red\ngreen\nblue\n")
    emacs.visit("clean.txt")
    subprocess.run(["sed", "-i", "s/green/GREEN/", emacs.file("clean.txt")], check=True)
    # The server's reload is a plain workspace/applyEdit, which Eglot confirms ("y"). As
    # Eglot applies it, Emacs itself sees the file changed on disk and asks, as it asks
    # before any edit of such a buffer: "r" (or "yes" to "Reread") rereads the file.
    reread = "Reread from disk? (yes or no)"
    supersession = "really edit the buffer? (y, n, r or C-h)"
    emacs.wait_for(lambda: any(prompt in emacs.screen() for prompt in (PROMPT, reread, supersession)),
                   "the reload to be offered")
    deadline = time.monotonic() + TIMEOUT
    answered = []
    while "GREEN" not in emacs.screen().split("\n-")[0] or any(
            prompt in emacs.screen() for prompt in (PROMPT, reread, supersession)):
        check(time.monotonic() < deadline, "the buffer never showed the change on disk")
        screen = emacs.screen()
        if reread in screen:
            emacs.type("yes")
            emacs.keys("Enter")
            answered.append("Reread? yes")
        elif supersession in screen:
            emacs.keys("r")
            answered.append("really edit? r")
        elif PROMPT in screen:
            emacs.keys("y")
            answered.append("Proceed? y")
        time.sleep(0.5)
    emacs.keys("End")
    emacs.wait_for(lambda: emacs.read("clean.txt")["text"] == "red\nGREEN\nblue\n",
                   "the server to hold the reloaded text", timeout=5)
    modified = "**" in [line for line in emacs.screen().splitlines() if "clean.txt" in line][-1]
    print("  sed -i on a clean buffer: shown in it after %s%s"
          % (", ".join(answered), "; the buffer is marked modified" if modified else ", not modified"))


def case_a_file_not_open_is_reported_truthfully(emacs):
    with open(emacs.file("closed.txt"), "w") as handle:
        handle.write("one\ntwo\n")
    code, out, err, _ = emacs.answer_prompts(edit(emacs, "closed.txt", "two", "TWO", "Shout two"), "y")
    check(code == 0, "exit %d: %s %s" % (code, out, err))
    result = json.loads(out)
    check(result["applied"] is True and not result.get("partial"), "not partial: %s" % out)
    check("+TWO" in result["diff"], "the diff is the edit: %s" % out)
    check(all(hunk["accepted"] for hunk in result.get("hunks", [])), "every hunk applied: %s" % out)
    outcomes = [entry.get("outcome") for entry in emacs.journal("closed.txt")]
    check("partial" not in outcomes, "journaled as partial: %s" % outcomes)
    print("  a file not open: applied in a new buffer, not partial, journal %s" % outcomes)


def case_three_edits_in_a_row_with_no_keystroke_between(emacs):
    with open(emacs.file("three.txt"), "w") as handle:
        handle.write("one\ntwo\nthree\n")
    emacs.visit("three.txt")
    text = "one\ntwo\nthree\n"
    outcomes = []
    for old, new in (("one", "ONE"), ("two", "TWO"), ("three", "THREE")):
        started = time.monotonic()
        code, out, err, prompts = emacs.answer_prompts(edit(emacs, "three.txt", old, new, "Shout " + old), "y")
        seconds = time.monotonic() - started
        check(code == 0, "edit %s: exit %d: %s %s" % (old, code, out, err))
        result = json.loads(out)
        check(result["applied"] is True and not result.get("pendingSync"), out)
        text = text.replace(old, new, 1)
        # The agent's read between edits is the text the person sees, with no wait and no note.
        read_started = time.monotonic()
        read = emacs.read("three.txt")
        check(read["text"] == text and "note" not in read, "read after %s: %s" % (old, read))
        check(read["rev"] == result["rev"], "the read's rev is the applied rev: %s vs %s" % (read, out))
        outcomes.append("applied in %.1f s (%d prompt), read in %.2f s"
                        % (seconds, prompts, time.monotonic() - read_started))
    screen = emacs.screen()
    check("ONE" in screen and "TWO" in screen and "THREE" in screen, "the buffer shows all three:\n" + screen)
    print("  " + "; ".join(outcomes))
    # The person's next keystroke sends what Eglot held: the server agrees with it.
    emacs.keys("End")
    time.sleep(1.0)
    check(emacs.read("three.txt")["text"] == text, "after the keystroke: %s" % emacs.read("three.txt"))
    outcomes = [entry.get("outcome") for entry in emacs.journal("three.txt")]
    check(outcomes.count("applied") == 3 and "differsFromAnswer" not in outcomes, "journal: %s" % outcomes)


def case_c_g_on_a_prompt_frees_the_next_edit(emacs):
    with open(emacs.file("other.txt"), "w") as handle:
        handle.write("left\nright\n")
    dismissed = edit(emacs, "a.txt", "alpha", "ALPHA", "Shout alpha")
    emacs.wait_for(lambda: PROMPT in emacs.screen(), "the prompt of the edit to dismiss")
    time.sleep(1.2)  # the person reads the prompt
    emacs.keys("C-g")
    emacs.wait_for(lambda: PROMPT not in emacs.screen(), "the prompt to go", timeout=5)
    # The person goes back to work: a keystroke that changes the buffer.
    emacs.type("z")
    started = time.monotonic()
    code, out, err = None, "", ""
    try:
        out, err = dismissed.communicate(timeout=10)
        code = dismissed.returncode
    except subprocess.TimeoutExpired:
        dismissed.kill()
        raise Failure("the dismissed edit's agent was not told within 10 s; screen:\n" + emacs.screen())
    told = time.monotonic() - started
    check(code == 20 and "notAnswered" in out + err, "the dismissed edit: exit %s: %s %s" % (code, out, err))
    started = time.monotonic()
    code, out, err, prompts = emacs.answer_prompts(edit(emacs, "other.txt", "right", "RIGHT", "Shout right"), "y",
                                                   timeout=10)
    seconds = time.monotonic() - started
    check(code == 0 and json.loads(out)["applied"] is True, "the next edit: exit %d: %s %s" % (code, out, err))
    outcomes = [entry.get("outcome") for entry in emacs.journal("a.txt")]
    check("notAnswered" in outcomes, "the journal should say the edit was not answered: %s" % outcomes)
    print("  C-g: the agent told notAnswered (exit 20) %.1f s after the next keystroke; the next edit applied "
          "in %.1f s after %d prompt(s)" % (told, seconds, prompts))


def case_auto_revert_rereads_a_clean_buffer_with_at_most_one_question(emacs):
    """docs/emacs.md recommends global-auto-revert-mode: Emacs rereads a clean buffer
    itself, and the server, seeing the buffer follow the disk, offers nothing."""
    with open(emacs.file("auto.txt"), "w") as handle:
        handle.write("cat\ndog\nbird\n")
    emacs.visit("auto.txt")
    emacs.keys("M-:")
    emacs.wait_for(lambda: "Eval:" in emacs.screen(), "the Eval prompt", timeout=5)
    emacs.type("(global-auto-revert-mode 1)")
    emacs.keys("Enter")
    time.sleep(0.5)
    subprocess.run(["sed", "-i", "s/dog/DOG/", emacs.file("auto.txt")], check=True)
    questions = []
    deadline = time.monotonic() + TIMEOUT
    while emacs.read("auto.txt")["text"] != "cat\nDOG\nbird\n" or PROMPT in emacs.screen():
        check(time.monotonic() < deadline, "the buffer never followed the disk; screen:\n" + emacs.screen())
        screen = emacs.screen()
        if PROMPT in screen:
            emacs.keys("y")
            questions.append("Proceed? y")
        elif "(yes or no)" in screen:
            emacs.type("yes")
            emacs.keys("Enter")
            questions.append("yes or no: yes")
        elif "(y, n, r or C-h)" in screen:
            emacs.keys("r")
            questions.append("really edit? r")
        time.sleep(0.3)
    check(len(questions) <= 1, "more than one question: %s" % questions)
    emacs.keys("M-:")
    emacs.wait_for(lambda: "Eval:" in emacs.screen(), "the Eval prompt", timeout=5)
    emacs.type("(global-auto-revert-mode -1)")
    emacs.keys("Enter")
    print("  with global-auto-revert-mode: the clean buffer followed the disk after %s"
          % (", ".join(questions) or "no question at all"))


CASES = [
    case_yes_is_applied_without_another_keystroke,
    case_no_is_a_rejection,
    case_typing_just_before_the_edit,
    case_crlf_saved_twice_journals_nothing,
    case_sed_on_a_clean_buffer_shows_in_it,
    case_auto_revert_rereads_a_clean_buffer_with_at_most_one_question,
    case_a_file_not_open_is_reported_truthfully,
    case_three_edits_in_a_row_with_no_keystroke_between,
    case_c_g_on_a_prompt_frees_the_next_edit,
]


def main():
    binary = os.environ.get("VERBATIM_BIN") or os.path.join(REPO, "target", "debug", "verbatim")
    for tool in ("emacs", "tmux", "git"):
        if shutil.which(tool) is None:
            print("e2e_eglot: %s is not installed" % tool, file=sys.stderr)
            return 2
    emacs = Emacs(os.path.abspath(binary))
    with open(emacs.file("a.txt"), "w") as handle:
        handle.write("alpha\nbeta\ngamma\n")
    failed = None
    try:
        emacs.start("a.txt")
        for case in CASES:
            print(case.__name__.replace("case_", "").replace("_", " "))
            case(emacs)
    except Failure as failure:
        failed = failure
    finally:
        screen = emacs.screen()
        emacs.stop()
    if failed:
        print("FAILED: %s\n--- screen ---\n%s" % (failed, screen), file=sys.stderr)
        if os.path.exists(emacs.log):
            print("--- verbatim log (last 60 lines) ---", file=sys.stderr)
            with open(emacs.log) as handle:
                print("".join(handle.readlines()[-60:]), file=sys.stderr)
        return 1
    shutil.rmtree(emacs.root, ignore_errors=True)
    print("Eglot end to end: %d cases passed" % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
