package watch

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pollHostEnd returns a pollable stand-in for f, the host's end of stdin
// or stdout (polled true), or f itself (polled false), and a function
// that undoes what it changed.
//
// A host hands the shim its pipes (from Node.js, socket pairs) in
// blocking mode, which os.Stdin and os.Stdout use as they are: a read
// then waits in a system call holding a thread and its P, which sysmon
// retakes and hands off whenever the recorder keeps the other P busy,
// going back to polling every 20 µs each time it does. Those thread
// wake-ups cost more than the pipe hops themselves on a small machine.
// In non-blocking mode the end waits in the netpoller like the server's
// pipes, and the forwarders can use rawIO on it.
//
// Only a pipe or a socket is given a stand-in. Its open file
// description is the shim's own end of the host's pipe (the host has
// the other end, a description of its own), so O_NONBLOCK on it is seen
// only by the shim and by whoever shares that end, such as a shell that
// started the shim without exec and waits for it. Anything else is
// returned as it is: a terminal above all, whose O_NONBLOCK every
// process on it would see, or a regular file. The stand-in is a
// duplicate of the end, registered with the netpoller even when the end
// was already non-blocking (os.Stdout is not when the host hands one
// socket as both stdin and stdout, which the stand-in for stdin makes
// non-blocking), and can be closed without closing fd 0 or 1. restore
// closes it, which ends a read or write still waiting on it, and clears
// O_NONBLOCK again if pollHostEnd set it; a shim killed before restore
// leaves its end non-blocking.
func pollHostEnd(f *os.File) (stand *os.File, polled bool, restore func()) {
	noop := func() {}
	rc, err := f.SyscallConn()
	if err != nil {
		return f, false, noop
	}
	var flags, dup int
	ctlErr := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if err = unix.Fstat(int(fd), &st); err != nil {
			return
		}
		if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFIFO && kind != unix.S_IFSOCK {
			err = errNotPipe
			return
		}
		if flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0); err != nil {
			return
		}
		if dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0); err != nil {
			return
		}
		if flags&unix.O_NONBLOCK == 0 {
			if _, err = unix.FcntlInt(uintptr(dup), unix.F_SETFL, flags|unix.O_NONBLOCK); err != nil {
				_ = unix.Close(dup)
			}
		}
	})
	if ctlErr != nil || err != nil {
		return f, false, noop
	}
	// NewFile sees O_NONBLOCK and registers the descriptor with the
	// netpoller.
	pf := os.NewFile(uintptr(dup), f.Name())
	return pf, true, func() {
		_ = pf.Close() // waits for a read or write in progress on it
		if flags&unix.O_NONBLOCK == 0 {
			_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETFL, flags) })
		}
	}
}

// errNotPipe says pollHostEnd leaves an end as it is.
var errNotPipe = errors.New("not a pipe or a socket")

// rawIO reads and writes a non-blocking, pollable file with raw system
// calls, waiting in the netpoller when it is not ready, as os.File does.
// Unlike os.File's, a raw call does not enter the scheduler's system
// call state, whose entry wakes sysmon when it sleeps: between two
// frames of a conversation the shim is idle and sysmon goes to sleep, so
// every read and write woke it, and it then polled every 20 µs for a
// while. With rawIO the forwarding path wakes no thread but the one the
// bytes are for. A raw call must never block, so rawIO is only made for
// a descriptor in non-blocking mode (fastIO checks), and nothing may
// set it blocking afterwards (os.File.Fd would: it is not called on the
// shim's ends).
type rawIO struct {
	rc   syscall.RawConn
	name string
}

// fastIO returns a rawIO for f, which must be registered with the
// netpoller (an os.Pipe end, a stand-in of pollHostEnd), if it is in
// non-blocking mode; else f.
func fastIO(f *os.File) interface {
	io.Reader
	io.Writer
} {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	if rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblocking = err == nil && flags&unix.O_NONBLOCK != 0
	}) != nil || !nonblocking {
		return f
	}
	return &rawIO{rc: rc, name: f.Name()}
}

// Read reads once, waiting for data in the netpoller; 0 bytes read is
// io.EOF.
func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	if err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	}); err != nil {
		return 0, err
	}
	switch {
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.name, Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// Write writes all of p, waiting in the netpoller while the pipe is
// full.
func (r *rawIO) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		var n uintptr
		var errno syscall.Errno
		if err := r.rc.Write(func(fd uintptr) bool {
			for {
				n, _, errno = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
				if errno != syscall.EINTR {
					return errno != syscall.EAGAIN
				}
			}
		}); err != nil {
			return done, err
		}
		switch {
		case errno != 0:
			return done, &os.PathError{Op: "write", Path: r.name, Err: errno}
		case n == 0:
			return done, io.ErrShortWrite
		}
		done += int(n)
	}
	return done, nil
}
