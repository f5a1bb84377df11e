package hostcancel

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// KeyPlacement says where a consequential call carries its idempotency key.
type KeyPlacement string

// Placements.
const (
	// KeyInMeta puts the key in params._meta[KeyName] (the default).
	KeyInMeta KeyPlacement = "meta"
	// KeyInArguments puts the key in params.arguments[KeyName].
	KeyInArguments KeyPlacement = "arguments"
)

// Default key names.
const (
	DefaultMetaKey     = "io.mcpflight/idempotency-key"
	DefaultArgumentKey = "idempotencyKey"
)

// Receipt is an execution receipt: the server's word that an effect was
// (or was not) applied.
type Receipt struct {
	ID      string
	Applied bool
}

// EffectState is what the controller knows of a consequential
// operation's side effect.
type EffectState string

// Effect states.
const (
	EffectUnknown    EffectState = "unknown"
	EffectApplied    EffectState = "committed"
	EffectNotApplied EffectState = "not-applied"
)

// SystemOfRecord asks the host's system of record whether the effect of
// the operation with idempotency key happened. applied false with a nil
// error means "checked: it did not happen".
type SystemOfRecord func(ctx context.Context, key string) (applied bool, detail string, err error)

// Effects configures consequential tools.
type Effects struct {
	// Tools are the tools the host marks consequential.
	Tools []string
	// KeyIn and KeyName say where the idempotency key goes: _meta
	// (DefaultMetaKey) unless KeyIn is KeyInArguments
	// (DefaultArgumentKey).
	KeyIn   KeyPlacement
	KeyName string
	// Receipt reads an execution receipt from a result; when nil,
	// ReadReceipt (structuredContent {receipt, applied}, the reference
	// server's shape).
	Receipt func(result json.RawMessage) (Receipt, bool)
	// Check, when set, is consulted whenever an operation did not end
	// completed with a receipt: a cancelled status never hides a
	// committed effect.
	Check SystemOfRecord
	// AllowWithoutCancel lets a consequential tool run on a server that
	// cannot cancel tasks; the alert still fires.
	AllowWithoutCancel bool
}

// ReadReceipt reads structuredContent {"receipt": ID, "applied": bool}.
func ReadReceipt(result json.RawMessage) (Receipt, bool) {
	var r struct {
		StructuredContent *struct {
			Receipt string `json:"receipt"`
			Applied *bool  `json:"applied"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil || r.StructuredContent == nil || r.StructuredContent.Applied == nil {
		return Receipt{}, false
	}
	return Receipt{ID: r.StructuredContent.Receipt, Applied: *r.StructuredContent.Applied}, true
}

// Sentinel errors of the ledger.
var (
	// ErrNotReconciled refuses a replacement operation: an operation with
	// the same idempotency key has not been reconciled yet.
	ErrNotReconciled = errors.New("hostcancel: the previous operation with this idempotency key is not reconciled")
	// ErrUnknownKey reports an idempotency key the ledger does not hold.
	ErrUnknownKey = errors.New("hostcancel: no operation with this idempotency key")
	// ErrNoCancelCapability refuses a consequential tool on a server that
	// cannot cancel tasks (see Effects.AllowWithoutCancel).
	ErrNoCancelCapability = errors.New("hostcancel: consequential tool on a server without tasks.cancel")
)

// Entry is the ledger's record of one idempotency key.
type Entry struct {
	Key    string
	TaskID string
	// Settled is set once the operation settled; Classification and
	// Effect are then its outcome.
	Settled        bool
	Classification Classification
	Effect         EffectState
	// Abandoned is set by Abandon, with its reason.
	Abandoned bool
	Reason    string
}

// Reconciled reports whether a replacement may be launched: the
// operation completed, failed, was verified cancelled, its effect is
// known to have committed, or the caller abandoned it.
func (e Entry) Reconciled() bool {
	if e.Abandoned {
		return true
	}
	if !e.Settled {
		return false
	}
	switch e.Classification {
	case CompletedBeforeCancel, Failed, CancelledVerified, EffectCommitted:
		return true
	}
	return false
}

// newKey returns a fresh idempotency key.
func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("hostcancel: crypto/rand failed: %v", err))
	}
	return "op-" + hex.EncodeToString(b)
}

// Ledger returns the ledger's record of key.
func (c *Controller) Ledger(key string) (Entry, bool) { return c.ledger.get(key) }

// Abandon marks the operation with idempotency key as explicitly
// abandoned by the caller, so that a replacement may be launched. The
// caller takes responsibility for any effect it may have committed.
func (c *Controller) Abandon(key, reason string) error {
	if err := c.ledger.abandon(key, reason); err != nil {
		return err
	}
	c.emit(nil, Event{Name: EventAbandoned, Reason: reason, Detail: "idempotency key " + key})
	return nil
}

// consequential reports whether tool is marked consequential.
func (e *Effects) consequential(tool string) bool {
	if e == nil {
		return false
	}
	for _, t := range e.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// place puts key into args or meta as configured.
func (e *Effects) place(key string, args, meta map[string]any) (map[string]any, map[string]any) {
	if e.KeyIn == KeyInArguments {
		return with(args, cmp.Or(e.KeyName, DefaultArgumentKey), key), meta
	}
	return args, with(meta, cmp.Or(e.KeyName, DefaultMetaKey), key)
}

// with returns a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}

func (e *Effects) receipt(result json.RawMessage) (Receipt, bool) {
	if len(result) == 0 {
		return Receipt{}, false
	}
	if e.Receipt != nil {
		return e.Receipt(result)
	}
	return ReadReceipt(result)
}
