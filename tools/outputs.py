"""The files a verb or a benchmark script writes when its work is done
(--json, -o, --c, --encode): whether they can be written is checked before
the work, so that a wrong path costs an error message, not the results."""
import os


def cannot_make_dir(opt, path):
    """"OPT: cannot create 'PATH': ANCESTOR is not a directory | is not
    writable" when the directory PATH (and its missing parents) cannot be
    made; None when it can (or already is a directory)."""
    p = os.path.abspath(path)
    while not os.path.exists(p):
        p = os.path.dirname(p)
    if os.path.isdir(p) and os.access(p, os.W_OK | os.X_OK):
        return None
    return "%s: cannot create '%s': %s is %s" % (opt, path, p, "not writable" if os.path.isdir(p)
                                                 else "not a directory")


def cannot_write(opt, path):
    """"OPT: cannot write 'PATH': why" when PATH is a directory or its
    directory does not exist; None when it can be written (or tried)."""
    if os.path.isdir(path):
        why = "it is a directory"
    elif not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        why = "no such directory"
    else:
        return None
    return "%s: cannot write '%s': %s" % (opt, path, why)
