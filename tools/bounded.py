"""Replays with a bound: what ./mmfuzz repro and trace run an input under.

A fuzz input libFuzzer saved as timeout-* hangs, or runs longer than the
per-input limit in corpus/TARGET.options; replayed without a bound it
would hold the terminal for ever.  The replays check at level 3 after every
op, more than the fuzzing run did, so the bound is ten times that limit."""
import configparser
import os
import signal
import subprocess


def parse_limit(value):
    """--timeout's value: seconds, 0 (no bound) to 86400; None if it is not one."""
    try:
        x = float(value)
    except ValueError:
        return None
    return x if 0 <= x <= 86400 else None


def pop_timeout(args, die):
    """(--timeout S or --timeout=S from @args - None when not given, the
    other arguments); a missing or bad value goes to @die(message)."""
    limit, rest, args = None, [], list(args)
    while args:
        a = args.pop(0)
        if a != "--timeout" and not a.startswith("--timeout="):
            rest.append(a)
            continue
        if a == "--timeout" and not args:
            die("--timeout needs a value (seconds; 0: no bound)")
        v = args.pop(0) if a == "--timeout" else a.split("=", 1)[1]
        limit = parse_limit(v)
        if limit is None:
            die("--timeout wants seconds from 0 (no bound) to 86400, not '%s'" % v)
    return limit, rest


def libfuzzer_options(root, target):
    """corpus/TARGET.options' [libfuzzer] section as {name: value} ({} without one)."""
    opts = configparser.ConfigParser(interpolation=None)
    try:
        opts.read(os.path.join(root, "corpus", target + ".options"))
        return dict(opts.items("libfuzzer")) if opts.has_section("libfuzzer") else {}
    except (configparser.Error, OSError):
        return {}


def default_limit(root, target):
    """(seconds, why): ten times the timeout in corpus/TARGET.options, or 250 s without one."""
    try:
        base = float(libfuzzer_options(root, target)["timeout"])
    except (KeyError, ValueError):
        return 250.0, "the default bound"
    return 10 * base, "ten times the timeout of %g s in corpus/%s.options" % (base, target)


def kill_group(p):
    """SIGKILL the process group of @p (started in a session of its own, so
    a Ctrl-C of ours never reached it) and reap @p."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def run_bounded(cmd, limit, **popen_args):
    """Run @cmd in a session of its own (Popen's @popen_args; text, errors
    replaced); (exit status, stdout, stderr), or (None, what it wrote so far)
    when it still runs after @limit seconds (0: no bound): then it and
    whatever it started get SIGTERM, and SIGKILL 5 s later.  Ctrl-C (or any
    other exception) kills them first: out of the terminal's session, they
    would not see it."""
    p = subprocess.Popen(cmd, start_new_session=True, text=True, errors="replace", **popen_args)
    try:
        out, err = p.communicate(timeout=limit or None)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        pass
    except BaseException:
        kill_group(p)
        raise
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            break
        try:
            out, err = p.communicate(timeout=wait)
            return None, out, err
        except subprocess.TimeoutExpired:
            continue
    out, err = p.communicate()
    return None, out, err
