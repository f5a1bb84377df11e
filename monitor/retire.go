package monitor

// What a session forgets, so that its memory follows what is in flight
// and not the length of the conversation: an answered HTTP exchange once
// maxEnded later ones were answered, and, past maxOpen open requests of a
// side, the oldest cancelled ones whose crossing window passed with no
// answer. A retired request joins the answered ones (ended), where a late
// response or progress still finds it and is judged as after its cancel.

// keepEnded keeps r, answered or retired, among the latest maxEnded
// ended requests of its side, for a late response, late progress or a
// late cancel to name; the oldest is forgotten, its token noted in
// forgottenTokens.
func (s *session) keepEnded(r *request) {
	s.ended[r.side] = append(s.ended[r.side], r)
	if len(s.ended[r.side]) > maxEnded {
		if old := s.ended[r.side][0]; old.token != nil {
			s.forgottenTokens.add(old.tokenKey)
		}
		s.ended[r.side][0] = nil
		s.ended[r.side] = s.ended[r.side][1:]
	}
	s.postAnswered(r)
}

// postAnswered notes that r, the request of an HTTP exchange, was
// answered or retired: its exchange is kept for the latest maxEnded such
// requests, whose streams may still carry late events, and then
// forgotten.
func (s *session) postAnswered(r *request) {
	if s.streams[r.channel] != r {
		return
	}
	s.answeredPosts = append(s.answeredPosts, r)
	if len(s.answeredPosts) <= maxEnded {
		return
	}
	old := s.answeredPosts[0]
	s.answeredPosts[0] = nil
	s.answeredPosts = s.answeredPosts[1:]
	if s.streams[old.channel] == old {
		delete(s.streams, old.channel)
	}
}

// noteCancelled queues r, an open request just cancelled, for
// retireCancelled. Requests answered since they were queued are dropped
// from the queue when it has grown to twice maxOpen, so that it holds
// only open requests.
func (s *session) noteCancelled(r *request) {
	s.cancelled = append(s.cancelled, r)
	if len(s.cancelled) < 2*maxOpen {
		return
	}
	open := s.cancelled[:0]
	for _, c := range s.cancelled {
		if s.reqs[c.side][c.id.Key()] == c {
			open = append(open, c)
		}
	}
	clear(s.cancelled[len(open):])
	s.cancelled = open
}

// retireCancelled retires, while side holds more than maxOpen requests
// open, the oldest cancelled request of side whose crossing window has
// passed: its cancel was honoured for as long as the wire shows, as at
// the end of a session (end).
func (s *session) retireCancelled(side Side) {
	for len(s.reqs[side]) > maxOpen && len(s.cancelled) > 0 {
		r := s.cancelled[0]
		key := r.id.Key()
		if s.reqs[r.side][key] == r {
			if s.now-r.cancelAt <= s.window() {
				return // the oldest is still within its window: so are the rest
			}
			s.closeRequest(r)
			s.keepEnded(r)
			if cancellable(r) && !r.closed {
				s.exercise(RuleCancelNoResponse, other(r.side))
				s.exercise(RuleCancelNoProgress, other(r.side))
			}
		}
		s.cancelled[0] = nil
		s.cancelled = s.cancelled[1:]
	}
}
