package cases

import "testing"

func TestGuessable(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want bool
	}{
		{[]string{"task-1", "task-2"}, true},
		{[]string{"task-000000000017", "task-000000000018", "task-000000000019"}, true},
		{[]string{"task-9678149ffa34ee03", "task-2e54050ea6625112"}, false},
		{[]string{"2c3b083a18317550d814bd434b933bae", "b1c48ba542200c481631489a121f514f"}, false},
		{[]string{"task-000000000017", "task-000000000019"}, false}, // not a counter step
	} {
		if got := guessable(tc.ids) != ""; got != tc.want {
			t.Errorf("guessable(%q) = %v, want %v", tc.ids, got, tc.want)
		}
	}
}
