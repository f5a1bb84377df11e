// Package testparallel lets a package whose tests mostly wait (on a real
// server's pace, on grace windows) run more of its parallel tests at once
// than go test's default, which is GOMAXPROCS: on a 2-core machine two
// tests that wait minutes would otherwise hold back every other parallel
// test of the package.
package testparallel

import (
	"flag"
	"runtime"
	"strconv"
)

// Raise sets -test.parallel to perCPU × GOMAXPROCS, unless the command
// line gave -parallel itself. Call it from TestMain before m.Run; the
// package's tests must bound the work they do at once themselves.
func Raise(perCPU int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
	}
}
