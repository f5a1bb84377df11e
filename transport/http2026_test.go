package transport

import (
	"testing"
)

// TestEncodeHeaderValue: the spec's encoding examples (26/http §Value
// Encoding, HTTP-101), and the round trip.
func TestEncodeHeaderValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"inner space", "inner space"},
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},
		{"", ""},
	} {
		got := EncodeHeaderValue(tc.in)
		if got != tc.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != tc.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v, want %q", got, back, err, tc.in)
		}
	}
	if _, err := DecodeHeaderValue("=?base64?!!!?="); err == nil {
		t.Error("a sentinel with bad Base64 decoded")
	}
}
