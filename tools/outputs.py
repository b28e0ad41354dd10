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


def not_regular(path):
    """What an existing @path is when it is not a regular file (past symlinks):
    "a FIFO (a named pipe)", "a device", "a socket", "not a regular file";
    None when it is one, or does not exist."""
    import stat
    try:
        m = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(m) or stat.S_ISDIR(m):
        return None
    if stat.S_ISFIFO(m):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(m) or stat.S_ISBLK(m):
        return "a device"
    if stat.S_ISSOCK(m):
        return "a socket"
    return "not a regular file"


def cannot_create(opt, path):
    """cannot_write(), then whether an existing PATH is a regular file (a
    device, a FIFO or a socket is refused: write_whole() would replace it by
    a file, and opening a FIFO blocks), and then whether the directory takes
    a new file: one is made there and removed (access() says yes to root on
    /proc and /sys, and a read-only mount says no only when written).  A
    symlink is judged by what it points to, where write_whole() writes.
    "OPT: cannot write 'PATH': why", or None."""
    why = cannot_write(opt, path)
    if why:
        return why
    what = not_regular(path)
    if what:
        return "%s: cannot write '%s': it is %s, not a regular file (name a file)" % (opt, path, what)
    import tempfile
    real = os.path.realpath(path)
    if not os.path.isdir(os.path.dirname(real)):
        return "%s: cannot write '%s': it is a symlink to %s, whose directory does not exist" % (opt, path, real)
    try:
        fd, probe = tempfile.mkstemp(prefix=".mmfuzz-probe-", dir=os.path.dirname(real))
    except OSError as e:
        return "%s: cannot write '%s': its directory takes no new file (%s)" % (opt, path, e.strerror)
    os.close(fd)
    os.unlink(probe)
    return None


def temp_beside(path, suffix=""):
    """A new empty temporary file in the directory of @path's real file (past
    a symlink), for a verb to fill and then rename with replace_with(): its
    name.  OSError when it cannot be made."""
    import tempfile
    real = os.path.realpath(path)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(real), suffix=suffix, dir=os.path.dirname(real))
    os.close(fd)
    return tmp


def replace_with(tmp, path):
    """Rename the temporary file @tmp over @path's real file (a symlink is
    written through, not replaced), with the mode an existing file had (or
    the one a new file gets).  OSError when @path is not a regular file (a
    device or a FIFO is never replaced by a file) or the rename fails; @tmp
    is removed then."""
    real = os.path.realpath(path)
    try:
        what = not_regular(real)
        if what:
            raise OSError(17, "it is %s, not a regular file" % what)
        mode = os.stat(real).st_mode & 0o7777 if os.path.exists(real) else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        remove_quietly(tmp)
        raise


def write_whole(path, src=None, data=None):
    """Copy the file @src (or write the bytes @data) to @path through a
    temporary file in the directory of @path's real file renamed over it:
    @path is the old file or the whole new one, never half written; a
    symlink @path is written through (its target replaced, the link kept).
    OSError on failure (the temporary file removed), also when @path exists
    and is no regular file (a device, a FIFO: never replaced by a file)."""
    import shutil
    tmp = temp_beside(path)
    try:
        with open(tmp, "wb") as f:
            if data is not None:
                f.write(data)
            else:
                with open(src, "rb") as s:
                    shutil.copyfileobj(s, f)
    except BaseException:
        remove_quietly(tmp)
        raise
    replace_with(tmp, path)


def remove_quietly(tmp):
    """A temporary file of ours, gone (on the failure path: its own error is not the one to report)."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m
