package watch

import "syscall"

// dieWithParent makes the kernel SIGKILL the server when the shim dies,
// however it dies (SIGKILL included), so that a host that kills the shim
// leaves no server behind. The signal is tied to the OS thread that
// started the child, which the Go runtime keeps for the life of the
// process unless a goroutine locked to it exits: Stdio never locks one.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
