// Package ciaction holds the test of the GitHub Action's script
// (.github/action/run.sh, driven by action.yml at the repository root):
// it runs the script as the action does, against the reference server,
// and checks both reports it must leave. It has no code of its own.
package ciaction
