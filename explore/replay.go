package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
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
}

// RunReplay runs the replay file's plan against target and checks it.
func RunReplay(ctx context.Context, target Target, rp *Replay) (*ReplayResult, error) {
	cfg := Config{Target: target, Revision: rp.Revision, OpTimeout: time.Duration(rp.OpTimeoutMs) * time.Millisecond,
		NoControl: rp.NoControl, Ops: len(rp.Steps) + 1}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	f, err := ProbeRevision(ctx, target, cfg.Revision, cfg.NoControl)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tr, h, err := runOnce(ctx, cfg, f, rp.Plan)
	if err != nil {
		return nil, err
	}
	out := &ReplayResult{History: h, Ops: tr.ops, Elapsed: time.Since(start)}
	out.Violations, out.Figures = Check(h, cfg.Revision)
	for _, v := range out.Violations {
		if rp.Violation != nil && v.Same(*rp.Violation) {
			v := v
			out.Violation, out.Reproduced = &v, true
			break
		}
	}
	if out.Violation == nil {
		if v, ok := Primary(out.Violations); ok {
			out.Violation = &v
		}
	}
	return out, nil
}
