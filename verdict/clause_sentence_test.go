package verdict

import (
	"errors"
	"testing"

	"github.com/mcpflight/mcpflight/spec"
)

// TestClauseOfTheSentence: CAN-56's registry level is MUST NOT, its
// sentence "The server SHOULD stop work ... and MUST NOT send any further
// messages for it": naming either clause works (a case that cites the
// SHOULD clause must not end in a harness-bug error against a real
// server), a keyword in neither the level nor the sentence is refused.
func TestClauseOfTheSentence(t *testing.T) {
	for _, tc := range []struct {
		id, clause string
		want       Verdict
		err        error
	}{
		{"CAN-56", "SHOULD", Warn, nil},
		{"CAN-56", "MUST NOT", Fail, nil},
		{"CAN-54", "SHOULD", Warn, nil},
		{"CAN-56", "MAY", "", ErrNoSuchClause},
		// "MUST" is only part of "MUST NOT" in the sentence.
		{"CAN-56", "MUST", "", ErrNoSuchClause},
		{"CAN-56", "SHOULD NOT", "", ErrNoSuchClause},
	} {
		j, err := Req(tc.id).Clause(tc.clause).Judge(spec.V20260728)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s clause %q: %v, want %v", tc.id, tc.clause, err, tc.err)
		case tc.err == nil && err != nil:
			t.Errorf("%s clause %q: %v", tc.id, tc.clause, err)
		case tc.err == nil && (j.Verdict != tc.want || j.Level != tc.clause):
			t.Errorf("%s clause %q: %s at %q, want %s", tc.id, tc.clause, j.Verdict, j.Level, tc.want)
		}
	}
}

func TestSentenceHasKeyword(t *testing.T) {
	for _, tc := range []struct {
		quote, kw string
		want      bool
	}{
		{"servers SHOULD stop and MUST NOT send", "SHOULD", true},
		{"servers SHOULD stop and MUST NOT send", "MUST", false},
		{"servers SHOULD stop and MUST NOT send", "MUST NOT", true},
		{"a SHOULDER", "SHOULD", false},
		{"it is NOT RECOMMENDED", "RECOMMENDED", false},
		{"it is NOT RECOMMENDED", "NOT RECOMMENDED", true},
		{"anything", "PERHAPS", false},
	} {
		if got := sentenceHasKeyword(tc.quote, tc.kw); got != tc.want {
			t.Errorf("sentenceHasKeyword(%q, %q) = %v, want %v", tc.quote, tc.kw, got, tc.want)
		}
	}
}
