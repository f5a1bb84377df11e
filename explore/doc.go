// Package explore looks for the races the catalogue was not written for.
// Each trial opens several sessions of a target at once and drives them
// through a seeded plan of operations drawn from a weighted mix (calls
// with and without a progress token, cancels at every point of a call,
// duplicate and invalid cancels, token reuse, ping, dropped and resumed
// Streamable HTTP streams, closed sessions, durable tasks), one operation
// at a time. Against a server with the io.mcpflight/control extension
// every call is gated: it advances only at the checkpoints the explorer
// releases, so a seed gives the same interleaving on every run.
//
// The sessions' chronologies share one clock and merge into one history,
// which is checked against invariants taken from the spec, each citing
// its requirement IDs and the revisions it holds for (Invariants): one
// response per request, none and no progress after an accepted cancel
// beyond the race window, progress that increases and stops, tokens and
// IDs never confused across sessions, terminal tasks that never change,
// tasks/result that matches the task, cleanup exactly once, a session
// that stays usable. The rules the server's frames alone show are the
// passive rule engine's (package monitor, which watch and judge use
// too); the others rest on evidence only the explorer has (check.go).
// The race window is evidence, not time: what the gates released before
// the cancel allowed the server to write. Races the spec allows are
// counted by which way they went (Figures).
//
// On a violation the plan is shrunk (Shrink) to the fewest sessions,
// steps and simplest arguments that still break the same rule, and
// written as a replay file (Replay, docs/explore.md) that RunReplay runs
// again.
package explore
