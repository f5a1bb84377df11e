//go:build unix

package cli

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is the width in columns of the terminal w writes to, or
// 0 when it is not known.
func terminalWidth(w io.Writer) int {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	var ws struct{ rows, cols, x, y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.cols)
}
