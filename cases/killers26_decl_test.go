package cases_test

import "github.com/mcpflight/mcpflight/refserver"

// extraKillers2026 is declared by the 2026-07-28 mutation matrix
// (cases/matrix_test.go on the cat26a branch); this file stands in for it
// until the two branches meet, and goes at the merge.
var extraKillers2026 = map[refserver.Fault][]string{}
