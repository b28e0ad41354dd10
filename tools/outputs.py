"""The files a verb or a benchmark script writes when its work is done
(--json, -o, --c, --encode): whether they can be written is checked before
the work, so that a wrong path costs an error message, not the results."""
import os


def cannot_make_dir(opt, path):
    """"OPT: cannot create 'PATH': ANCESTOR is not a directory | is not
    writable | takes no new directory (/proc: tried)" when the directory PATH
    (and its missing parents) cannot be made; None when it can (or already
    is a directory)."""
    p = os.path.abspath(path)
    while not os.path.exists(p):
        p = os.path.dirname(p)
    if os.path.isdir(p) and os.access(p, os.W_OK | os.X_OK):
        if p == os.path.abspath(path):
            return None
        # access() says yes to root on /proc and /sys: a directory is made there and removed.
        import tempfile
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".mmfuzz-probe-", dir=p))
        except OSError as e:
            return "%s: cannot create '%s': %s takes no new directory (%s)" % (opt, path, p, e.strerror)
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


def cannot_create(opt, path):
    """cannot_write(), and then whether the directory takes a new file: one is
    made there and removed (access() says yes to root on /proc and /sys, and
    a read-only mount says no only when written).  "OPT: cannot write 'PATH':
    why", or None."""
    why = cannot_write(opt, path)
    if why:
        return why
    import tempfile
    try:
        fd, probe = tempfile.mkstemp(prefix=".mmfuzz-probe-", dir=os.path.dirname(os.path.abspath(path)))
    except OSError as e:
        return "%s: cannot write '%s': its directory takes no new file (%s)" % (opt, path, e.strerror)
    os.close(fd)
    os.unlink(probe)
    return None


def write_whole(path, src=None, data=None):
    """Copy the file @src (or write the bytes @data) to @path through a
    temporary file in @path's directory renamed over it: @path is the old
    file or the whole new one, never half written.  OSError on failure (the
    temporary file removed)."""
    import shutil
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as f:
            if data is not None:
                f.write(data)
            else:
                with open(src, "rb") as s:
                    shutil.copyfileobj(s, f)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m
