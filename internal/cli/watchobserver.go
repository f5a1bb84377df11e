package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/watch"
	"github.com/mcpflight/mcpflight/watch/observe"
)

// observerTimeout bounds opening the observer's session and each read.
const observerTimeout = 10 * time.Second

// watchObserver resolves --observer: the profile that names the
// observer watch reads after a cancel.
func watchObserver(name string) (*profile.Observer, error) {
	if name == "" {
		return nil, nil
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

// injectedWhere says where the reads of a stdio server's observer go, for
// the report's notes.
const injectedWhere = "sent inside the host's session between its frames, with its answer kept from the host (a stdio server has one stream, the host's)"

// injectedObserverReader reads obs inside the host's session with a
// stdio server, through inject. The request is the one a session of
// mcpflight's own would send, under the revision the host's session
// speaks (revision; nil until the host's first request): under
// 2026-07-28 it carries its own envelope, naming mcpflight as the
// client, without a log level, so that the server logs nothing for it
// (LOG-41).
func injectedObserverReader(inject *watch.Injector, obs *profile.Observer, revision func() *string, version string) observe.Reader {
	return func(ctx context.Context) (profile.Observation, error) {
		rev := revision()
		if rev == nil {
			return profile.Observation{}, errors.New("the host's session has not shown its revision yet")
		}
		method, params := obs.Request()
		if spec.Modern(*rev) {
			params["_meta"] = map[string]any{
				mcp.MetaProtocolVersion:    *rev,
				mcp.MetaClientCapabilities: map[string]any{},
				mcp.MetaClientInfo:         map[string]any{"name": "mcpflight-observer", "version": version},
			}
		}
		qctx, cancel := context.WithTimeout(ctx, observerTimeout)
		defer cancel()
		msg, err := inject.Call(qctx, method, params)
		switch {
		case errors.Is(err, watch.ErrInjectorClosed):
			return profile.Observation{}, fmt.Errorf("%w: %w", observe.ErrEnded, err)
		case err != nil:
			return profile.Observation{}, err
		case msg.Error != nil:
			return profile.Observation{}, fmt.Errorf("the server answered %s with error %d: %s", method, msg.Error.Code, chrono.Sanitize(msg.Error.Message, false))
		}
		doc, err := obs.Document(msg.Result)
		if err != nil {
			return profile.Observation{}, err
		}
		return obs.Observe(doc)
	}
}
