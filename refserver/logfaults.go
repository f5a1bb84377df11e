package refserver

import "github.com/mcpflight/mcpflight/mcp"

// Faults of MCP logging (2025-11-25 server/utilities/logging). Each breaks
// one rule that a logging case checks.
const (
	// FaultRejectValidLevel: logging/setLevel refuses the valid level
	// "notice" with -32602 (LOG-2, LOG-3).
	FaultRejectValidLevel Fault = "reject-valid-level"
	// FaultAcceptInvalidLevel: logging/setLevel accepts a level that is
	// not one of the eight RFC 5424 levels (LOG-6).
	FaultAcceptInvalidLevel Fault = "accept-invalid-level"
	// FaultBadMessageShape: notifications/message carries a level outside
	// the RFC 5424 set ("WARN") and no data (LOG-2, schema
	// LoggingMessageNotification).
	FaultBadMessageShape Fault = "bad-message-shape"
	// FaultLogAfterCancel: a cancelled operation keeps logging after the
	// cancel (CAN-8: stop processing).
	FaultLogAfterCancel Fault = "log-after-cancel"
)

// stepLog sends the log line of a slow operation's step i, when the
// operation asked for step logs and the session's level lets info through
// (LOG-4). The caller holds c.sendMu, so no line follows a cancel.
func (ss *session) stepLog(c *call, i int) {
	if !c.logSteps {
		return
	}
	ss.sendLog(c, "info", i)
}

// sendLog writes one notifications/message about step i of c, at level,
// unless the session's level filters it out.
func (ss *session) sendLog(c *call, level string, i int) {
	ss.mu.Lock()
	floor := ss.level
	ss.mu.Unlock()
	if levelIndex(level) < floor && !ss.has(FaultLogLevelIgnored) {
		return
	}
	p := map[string]any{"level": level, "logger": "slow", "data": map[string]any{"operation": c.key, "step": i}}
	if ss.has(FaultBadMessageShape) {
		p = map[string]any{"level": "WARN", "logger": "slow"}
	}
	ss.notifyRouted(c, FaultLogCrossesStreams, mcp.NotificationMessage, p)
}
