//go:build race

package watch

// raceEnabled says the tests run under the race detector, whose
// instrumentation makes the recorder many times slower and memory
// figures meaningless.
const raceEnabled = true
