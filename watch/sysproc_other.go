//go:build unix && !linux

package watch

import "syscall"

// dieWithParent does nothing where there is no parent-death signal: a
// server whose shim is SIGKILLed sees its stdin end instead.
func dieWithParent(*syscall.SysProcAttr) {}
