//go:build !unix

package cli

import "io"

// terminalWidth is 0, not known, where there is no TIOCGWINSZ.
func terminalWidth(io.Writer) int { return 0 }
