package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/mcpflight/mcpflight/profile"
)

// ReplayFormat names version 1 of the replay file format
// (docs/explore.md): a JSON object with the plan's "sessions" and
// "steps", and what is needed to run it again.
const ReplayFormat = "mcpflight.explore-replay/v1"

// MaxReplayBytes bounds the replay file ReadReplay accepts.
const MaxReplayBytes = 16 << 20

// Replay is a replay file: a plan, the target and revision it ran
// against, and the violation it showed.
type Replay struct {
	Format   string     `json:"format"`
	Revision string     `json:"revision"`
	Target   TargetInfo `json:"target"`
	// Seed and Trial say where the plan was drawn from before shrinking.
	Seed  uint64 `json:"seed"`
	Trial int    `json:"trial"`
	// OpTimeoutMs is the operation timeout of the run; NoControl is set
	// when the control extension was ignored.
	OpTimeoutMs int64 `json:"opTimeoutMs"`
	NoControl   bool  `json:"noControl,omitempty"`
	// Slow is the slow tool a target without the control extension was
	// called with (the profile's), so that a replay calls it again.
	Slow *profile.Tool `json:"slow,omitempty"`
	// Observer is the profile's observer (docs/observer.md) the sessions
	// of such a target read over stdio, so that a replay reads it again
	// and the violations its counts show can show again.
	Observer *profile.Observer `json:"observer,omitempty"`
	Plan
	// Violation is the rule the plan broke, if it broke one.
	Violation *Violation `json:"violation,omitempty"`
}

// ErrReplay is wrapped by the errors of ReadReplay.
var ErrReplay = errors.New("explore: not a replay file")

// NewReplay describes a run's finding as a replay file.
func NewReplay(res *Result, cfg Config) *Replay {
	rp := &Replay{Format: ReplayFormat, Revision: res.Revision, Target: res.Target, Seed: res.Seed,
		OpTimeoutMs: cfg.OpTimeout.Milliseconds(), NoControl: cfg.NoControl}
	if cfg.OpTimeout <= 0 {
		rp.OpTimeoutMs = DefaultOpTimeout.Milliseconds()
	}
	if !res.Features.Control && cfg.Profile != nil && cfg.Profile.Slow != nil {
		slow := *cfg.Profile.Slow
		slow.Arguments = cfg.Profile.Slow.CloneArgs()
		rp.Slow = &slow
	}
	if !res.Features.Control && cfg.Profile.NamesObserver() {
		obs := *cfg.Profile.Observer
		obs.Arguments = maps.Clone(cfg.Profile.Observer.Arguments)
		rp.Observer = &obs
	}
	if f := res.Found; f != nil {
		rp.Trial, rp.Plan = f.Trial, f.Minimal
		v := f.Violation
		rp.Violation = &v
	}
	return rp
}

// WriteReplay writes rp as indented JSON.
func WriteReplay(w io.Writer, rp *Replay) error {
	out, err := json.MarshalIndent(rp, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// ReadReplay reads and checks a replay file: its format, unknown members
// (an error), and its plan.
func ReadReplay(r io.Reader) (*Replay, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxReplayBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	if len(data) > MaxReplayBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrReplay, MaxReplayBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rp Replay
	if err := dec.Decode(&rp); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	if rp.Format != ReplayFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrReplay, rp.Format, ReplayFormat)
	}
	if rp.Revision == "" {
		rp.Revision = Revision20251125
	}
	if err := rp.Plan.Validate(); err != nil {
		return nil, err
	}
	if rp.Observer != nil {
		if err := (&profile.Profile{Observer: rp.Observer}).Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReplay, err)
		}
	}
	return &rp, nil
}

// ReplayResult is what running a replay file again showed.
type ReplayResult struct {
	Violations []Violation
	// Violation is the one reported: the recorded rule when it broke
	// again, else the run's primary violation.
	Violation  *Violation
	Reproduced bool
	History    *History
	Figures    Figures
	Ops        int
	Elapsed    time.Duration
	// Runs is how many times the plan ran: once against a target with the
	// control extension (its seed orders everything), up to ReplayTries
	// times without it, until the recorded violation showed again.
	Runs int
}

// ReplayTries bounds the runs of a replay against a target without the
// control extension, whose timing, not the plan, orders what a run shows.
const ReplayTries = 3

// RunReplay runs the replay file's plan against target and checks it.
// prof, when not nil, names the slow tool (and observer) of a target
// without the control extension; the replay file's own (Replay.Slow,
// Replay.Observer) otherwise.
func RunReplay(ctx context.Context, target Target, rp *Replay, prof *profile.Profile) (*ReplayResult, error) {
	if prof == nil && rp.Slow != nil {
		prof = &profile.Profile{Name: "replay", Slow: rp.Slow, Observer: rp.Observer}
	}
	cfg := Config{Target: target, Revision: rp.Revision, OpTimeout: time.Duration(rp.OpTimeoutMs) * time.Millisecond,
		NoControl: rp.NoControl, Ops: len(rp.Steps) + 1, Profile: prof}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	f, err := ProbeRevision(ctx, target, cfg.Revision, cfg.NoControl)
	if err != nil {
		return nil, err
	}
	tries := 1
	if !f.Control {
		tries = ReplayTries
	}
	var out *ReplayResult
	for run := 1; run <= tries && (out == nil || !out.Reproduced); run++ {
		start := time.Now()
		tr, h, err := runOnce(ctx, cfg, f, rp.Plan)
		if err != nil {
			return nil, err
		}
		out = &ReplayResult{History: h, Ops: tr.ops, Elapsed: time.Since(start), Runs: run}
		out.Violations, out.Figures = Check(h, cfg.Revision)
		for _, v := range out.Violations {
			if rp.Violation != nil && v.Same(*rp.Violation) {
				v := v
				out.Violation, out.Reproduced = &v, true
				break
			}
		}
	}
	if out.Violation == nil {
		if v, ok := Primary(out.Violations); ok {
			out.Violation = &v
		}
	}
	return out, nil
}
