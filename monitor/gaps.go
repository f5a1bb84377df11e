package monitor

// A recording that lost frames (watch's recorder fell behind and said
// so) no longer holds every frame of the conversation. Most rules judge
// what they see, and a lost frame can only make them miss something. The
// rules in restsOnWholeRecord judge by what the record lacks or by what
// an earlier frame set up: a response for an ID never sent, progress for
// a token never issued, an ID reused while its request is in flight, a
// request before notifications/initialized, a log below a level set. A
// lost frame makes those find what did not happen, so once the record
// has a gap their findings are not made: each is counted
// (CountGapUndecided), and the report says so.

// CountGapUndecided counts the findings not made because the recording
// had lost frames before them.
const CountGapUndecided = "findings not made after the recording lost frames"

// restsOnWholeRecord are the rules whose findings a lost frame can
// cause.
var restsOnWholeRecord = map[string]bool{
	RuleOneResponse:        true, // its request may be the frame lost
	RuleNoNotificationRepl: true,
	RuleIDUnique:           true, // the response that ended the first use may be lost
	RuleCancelTarget:       true, // the request it names may be lost
	RuleAbandoned:          true,
	RuleTokenKnown:         true, // the request that issued the token may be lost
	RuleTokenUnique:        true, // the response that retired the token may be lost
	RuleLogLevel:           true, // the setting may be lost
	RuleInitializedFirst:   true, // notifications/initialized may be lost
	RuleTaskStillWorking:   true, // the tasks/cancel or the polls may be lost
	RuleTaskCancelledAsked: true, // the tasks/cancel may be lost
	RuleTaskDurable:        true,
	RuleListenAck:          true,
	RuleHandlerStops:       true, // the answer the wire would show may be lost
	// A token or an ID reused once its request is over: when the frame
	// that ended the first request, or the one that began the second,
	// is lost, a progress or an answer is judged against the wrong one.
	RuleProgressIncreasing: true,
	RuleProgressAfterEnd:   true,
	RuleCancelNoProgress:   true,
	RuleCancelNoResponse:   true,
	RuleCancelNoLog:        true,
	RuleCancelTask:         true, // a plain request reusing a task's ID may be lost
	RuleStreamPrimed:       true, // the priming event may be the piece lost
	RuleTaskRequired:       true, // a later tools/list may be lost
}

// Gap tells the monitor that the recording lost frames at this point:
// from here on the findings of restsOnWholeRecord are counted, not made.
func (m *Monitor) Gap() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gapped = true
}

// undecidedByGap reports whether a finding of ruleID against side is not
// made because of a gap, and counts it if so: a rule with such findings
// and no other is undecided in the results, never a pass.
func (m *Monitor) undecidedByGap(side Side, ruleID string) bool {
	if !m.gapped || !restsOnWholeRecord[ruleID] {
		return false
	}
	m.counts[CountGapUndecided]++
	if m.gapUndecided == nil {
		m.gapUndecided = map[sideRule]int{}
	}
	m.gapUndecided[sideRule{side, ruleID}]++
	return true
}
