// Package watch is the forwarding and recording layer of a live judge:
// it sits between a real host (Claude Code, an agent, the MCP Inspector)
// and a real server, forwards every byte unchanged, and records the
// conversation as a chronology (chrono.Event) for the rules that judge
// it.
//
// Forwarding and recording are kept apart. The forwarders (Stdio for a
// stdio server, Proxy for a Streamable HTTP one) copy bytes and hand each
// piece they copy to a Recorder through a bounded queue that never makes
// them wait; the Recorder frames, decodes, redacts and writes events on
// a goroutine of its own and hands them to its Sinks. A recorder that
// falls behind drops pieces and counts them (Recorder.Dropped), and the
// recording says where: the capture is then incomplete, the conversation
// untouched.
//
// Directions follow the host: chrono.Out is host (client) to server,
// chrono.In server to host. Channels follow the transport package: over
// stdio "stdin", "stdout", "stderr" and "process"; over HTTP "POST #n",
// "GET #n", "DELETE #n" (any method, numbered per method) for request
// lines, bodies and statuses, and "SSE POST #n", "SSE GET #n" for the
// events of a response stream.
//
// The texts of the events a judge matches are fixed here:
// ClientClosedText (a client cancelling by closing a response stream),
// TextCaptureIncomplete (pieces dropped), and the process events of
// Stdio (see its documentation).
package watch

import "github.com/mcpflight/mcpflight/chrono"

// TextCaptureIncomplete begins the text of every event (KindError) that
// says pieces of the conversation were dropped before they were
// recorded, on the channel they were dropped from or, at the end of the
// capture, on channel "recorder".
const TextCaptureIncomplete = "the capture is incomplete"

// ClientClosedText is the text of the KindDecision event (Dir Harness)
// recorded when a client closes the response of a request before the
// response to it came: "closing the response stream of request ID: the
// client closed it before its response", on channel "SSE POST #n" when
// the response was an event stream, "POST #n" when no stream had begun
// (the client gave up waiting for the response's headers, or for a JSON
// body). From protocol revision 2026-07-28 on, that is how a client
// cancels a request over Streamable HTTP; before, it is a disconnection.
// id is the request's id as chrono.Summary gives it: 7, or "abc" with
// its quotes.
func ClientClosedText(id string) string {
	return chrono.TextStreamClosed + id + ": the client closed it before its response"
}
