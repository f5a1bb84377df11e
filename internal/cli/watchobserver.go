package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/watch/observe"
)

// observerTimeout bounds opening the observer's session and each read.
const observerTimeout = 10 * time.Second

// watchObserver resolves --observer: the profile that names the
// observer watch reads after a cancel. Over stdio the server has one
// stream, the host's, and no session of mcpflight's own to read it on.
func watchObserver(name string, stdio bool) (*profile.Observer, error) {
	if name == "" {
		return nil, nil
	}
	if stdio {
		return nil, usagef(watchUsage, "--observer reads the observer on a session of mcpflight's own, which a stdio server (one host, one stream) does not offer: use it with --target")
	}
	prof, err := profile.Resolve(name)
	if err != nil {
		return nil, usagef(watchUsage, "--observer: %v", err)
	}
	if !prof.NamesObserver() {
		return nil, usagef(watchUsage, "--observer: profile %s names no observer (docs/observer.md)", name)
	}
	return prof.Observer, nil
}

// observerReader reads obs on a Streamable HTTP session of its own with
// the server at target, opened at the first read (auto: the revision the
// server offers) and opened again after a read that broke it. It is
// called from one goroutine (observe.Poller.Run); closeReader ends the
// session.
func observerReader(ctx context.Context, target *url.URL, obs *profile.Observer) (read observe.Reader, closeReader func()) {
	var s *peer.Session
	closeDialed := func() {}
	closeSession := func() {
		closeDialed()
		s, closeDialed = nil, func() {}
	}
	read = func(rctx context.Context) (profile.Observation, error) {
		if s == nil {
			// The log holds the reads' frames only as long as a broken
			// read needs them: watch records the readings themselves.
			log := chrono.New(chrono.WithCaps(64, 1<<20))
			t := runner.HTTPTarget("observer", transport.HTTPConfig{URL: target.String(), StallTimeout: observerTimeout, HeaderTimeout: observerTimeout})
			var err error
			if s, closeDialed, err = dialSession(ctx, t, log); err != nil {
				return profile.Observation{}, fmt.Errorf("opening a session for the observer: %w", err)
			}
			octx, cancel := context.WithTimeout(rctx, observerTimeout)
			_, err = negotiate.Open(octx, s, negotiate.ModeAuto, negotiate.Options{})
			cancel()
			if err != nil {
				closeSession()
				return profile.Observation{}, fmt.Errorf("opening a session for the observer: %w", err)
			}
		}
		method, params := obs.Request()
		var raw json.RawMessage
		qctx, cancel := context.WithTimeout(rctx, observerTimeout)
		err := s.Request(qctx, method, params, &raw)
		cancel()
		if err != nil {
			closeSession()
			return profile.Observation{}, err
		}
		doc, err := obs.Document(raw)
		if err != nil {
			return profile.Observation{}, err
		}
		return obs.Observe(doc)
	}
	return read, closeSession
}
