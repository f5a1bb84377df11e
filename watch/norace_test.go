//go:build !race

package watch

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
