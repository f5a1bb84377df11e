// Package testchild helps the tests that run child processes of their
// own: their own test binary again (a stdio server, a helper that
// misbehaves on purpose), or a testdata command they build (Builds).
package testchild

import (
	"os"
	"strings"
)

// RaceEnv is the GORACE entry, KEY=VALUE, for such a child: the caller's
// GORACE options with atexit_sleep_ms=0. Under -race a Go program waits a
// second when it exits (the default atexit_sleep_ms of the race runtime,
// time for other threads to finish a report), so every teardown of a
// child that exits on its own would cost a second of wall time; a race in
// the child still ends it with the race detector's exit status.
func RaceEnv() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}
