// Package cases is the catalogue: each case is a row of data (a stable ID,
// the requirement IDs it checks, the versions it applies to, what it needs
// from the target) plus a Run function that drives a peer session through
// the probe kit and judges the chronology. Cases never format output.
package cases
