//go:build unix

package clientadapter

import "syscall"

// terminate sends SIGTERM to one process.
func terminate(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }
