// Package docscheck keeps README.md and the pages of docs/ true to the
// code. Its tests hold every count the docs state in a phrase they know
// ("142 cases in the catalogue", the summary line under a "$ mcpflight
// check" command) to the number the code gives, and every relative link
// to a file and heading that exist, and the contributing guide's
// walk-through of a case to the files, tests and commands it names, so
// that a change that makes the docs wrong fails "go test" instead of
// waiting for a reader to notice.
package docscheck
