//go:build unix

// Package proc starts the child processes of the harness (a stdio server
// checked by transport, one watched by watch): each in a process group of
// its own, so that a signal reaches every process it starts and none
// outlives the run, with errors that say why it could not start.
package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// ErrExecutableNotFound is matched (errors.Is) by the error of a command
// whose executable, or the interpreter named by its #! line, does not
// exist. The error also wraps the underlying os/exec error.
var ErrExecutableNotFound = errors.New("executable not found")

// Command builds the command of a child in a process group of its own,
// with env (KEY=VALUE entries) added to the harness's environment and dir
// (when not empty) as its working directory. display is the command as
// typed, for the errors: "cannot start DISPLAY: …".
func Command(argv, env []string, dir, display string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("cannot start %s: no command", display)
	}
	if dir != "" {
		// Checked here because a failed chdir in the child is reported as
		// a bare ENOENT, indistinguishable from a missing executable.
		if fi, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("cannot start %s: working directory: %w", display, err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("cannot start %s: working directory %s is not a directory", display, dir)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, StartError(display, cmd.Err)
	}
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// StartError explains why the command could not start, naming it:
// "cannot start DISPLAY: …", matching ErrExecutableNotFound when the
// executable or its interpreter does not exist.
func StartError(display string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("cannot start %s: %w", display, notFound{err})
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot start %s: executable or its #! interpreter not found: %w", display, notFound{err})
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot start %s: not executable: %w", display, err)
	}
	return fmt.Errorf("cannot start %s: %w", display, err)
}

// notFound marks an error as ErrExecutableNotFound without changing its
// text.
type notFound struct{ err error }

func (e notFound) Error() string        { return e.err.Error() }
func (e notFound) Unwrap() error        { return e.err }
func (e notFound) Is(target error) bool { return target == ErrExecutableNotFound }
