"""The files a verb or a benchmark script writes when its work is done
(--json, -o, --c, --encode): whether they can be written is checked before
the work, so that a wrong path costs an error message, not the results."""
import os


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
