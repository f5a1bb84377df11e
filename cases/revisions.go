package cases

import "github.com/mcpflight/mcpflight/spec"

// bothRevisions is the Versions of a case that applies to 2025-11-25 and
// 2026-07-28 alike; where the registry has another row for the same
// behaviour in 2026-07-28, the case names it in ReqsUnder, so that a
// verdict cites the rule of the revision the run spoke.
func bothRevisions() []string { return []string{spec.V20251125, spec.V20260728} }

// only2026 is the Versions of a case of 2026-07-28 alone.
func only2026() []string { return []string{spec.V20260728} }
