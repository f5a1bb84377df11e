package hostcancel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Ledger holds the idempotency keys of consequential operations and what
// is known of each, so that no replacement operation is launched for a
// key until the previous one is reconciled. NewLedger keeps it in memory;
// OpenLedger backs it with a file that survives the host: an append-only
// log of JSON lines, one record per change, each synced to disk before
// the change takes effect (a key is reserved only once its record is
// durable), replayed when the file is opened again. A Ledger may be
// shared by the controllers of one host (Config.Ledger).
//
// The file is never compacted: one line per reservation, task ID,
// settlement or abandonment, about 150 bytes each.
type Ledger struct {
	mu      sync.Mutex
	entries map[string]*Entry
	file    *os.File // nil: in memory
	path    string
	// broken is the first write failure: the ledger then refuses new
	// reservations, since it could not promise to remember them.
	broken error
}

// Ledger file records.
const (
	recordReserve = "reserve"
	recordTask    = "task"
	recordSettle  = "settle"
	recordAbandon = "abandon"
	recordRelease = "release"
)

// ledgerRecord is one line of a ledger file.
type ledgerRecord struct {
	Op             string         `json:"op"`
	Key            string         `json:"key"`
	TaskID         string         `json:"taskId,omitempty"`
	Classification Classification `json:"classification,omitempty"`
	Effect         EffectState    `json:"effect,omitempty"`
	Reason         string         `json:"reason,omitempty"`
	Time           time.Time      `json:"time"`
}

// MaxLedgerLine bounds one line of a ledger file; a longer one is
// corrupt.
const MaxLedgerLine = 64 << 10

// ErrLedger wraps a ledger file that cannot be read or written.
var ErrLedger = errors.New("hostcancel: ledger file")

// NewLedger returns an empty ledger in memory.
func NewLedger() *Ledger { return &Ledger{entries: map[string]*Entry{}} }

// OpenLedger opens (or creates) the ledger file at path and replays it.
// A last line cut short (the host died while writing it) is a record
// that never took effect: it is dropped and the file truncated to the
// last whole line. Any other line that does not parse is an error.
// Entries a previous run left unreconciled are Unreconciled; the host
// reconciles them (Controller.Reconcile) or abandons them.
func OpenLedger(path string) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	l := &Ledger{entries: map[string]*Entry{}, file: f, path: path}
	if err := l.replay(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// replay reads the file, applies its records and leaves the offset at
// the end of the last whole line.
func (l *Ledger) replay() error {
	raw, err := io.ReadAll(l.file)
	if err != nil {
		return fmt.Errorf("%w: reading %s: %w", ErrLedger, l.path, err)
	}
	whole := len(raw)
	if i := bytes.LastIndexByte(raw, '\n'); i+1 != len(raw) {
		whole = i + 1 // a torn last record
	}
	sc := bufio.NewScanner(bytes.NewReader(raw[:whole]))
	sc.Buffer(make([]byte, 0, 4096), MaxLedgerLine)
	for n := 1; sc.Scan(); n++ {
		var rec ledgerRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Key == "" {
			return fmt.Errorf("%w: %s line %d is not a ledger record", ErrLedger, l.path, n)
		}
		l.apply(rec)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLedger, l.path, err)
	}
	if whole != len(raw) {
		if err := l.file.Truncate(int64(whole)); err != nil {
			return fmt.Errorf("%w: dropping the torn last record of %s: %w", ErrLedger, l.path, err)
		}
	}
	if _, err := l.file.Seek(int64(whole), io.SeekStart); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLedger, l.path, err)
	}
	return nil
}

// apply makes rec's change. Caller holds mu (or owns l).
func (l *Ledger) apply(rec ledgerRecord) {
	switch rec.Op {
	case recordReserve:
		l.entries[rec.Key] = &Entry{Key: rec.Key}
		return
	case recordRelease:
		delete(l.entries, rec.Key)
		return
	}
	e := l.entries[rec.Key]
	if e == nil {
		return
	}
	switch rec.Op {
	case recordTask:
		e.TaskID = rec.TaskID
	case recordSettle:
		if rec.TaskID != "" {
			e.TaskID = rec.TaskID
		}
		e.Settled, e.Classification, e.Effect = true, rec.Classification, rec.Effect
	case recordAbandon:
		e.Abandoned, e.Reason = true, rec.Reason
	}
}

// commit makes rec durable (a file ledger: written and synced) and then
// applies it. Caller holds mu.
func (l *Ledger) commit(rec ledgerRecord) error {
	if l.file != nil {
		if l.broken != nil {
			return l.broken
		}
		rec.Time = time.Now().UTC()
		line, err := json.Marshal(rec)
		if err == nil && len(line) >= MaxLedgerLine {
			err = fmt.Errorf("a record of %d bytes", len(line))
		}
		if err == nil {
			_, err = l.file.Write(append(line, '\n'))
		}
		if err == nil {
			err = l.file.Sync()
		}
		if err != nil {
			l.broken = fmt.Errorf("%w: writing %s: %w", ErrLedger, l.path, err)
			return l.broken
		}
	}
	l.apply(rec)
	return nil
}

// Close closes the ledger's file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file, l.broken = nil, fmt.Errorf("%w: %s is closed", ErrLedger, l.path)
	return err
}

// Entry returns the record of key.
func (l *Ledger) Entry(key string) (Entry, bool) { return l.get(key) }

// Unreconciled returns the entries whose operation is not reconciled, by
// key: after OpenLedger, what a previous run of the host left open.
func (l *Ledger) Unreconciled() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	for _, e := range l.entries {
		if !e.Reconciled() {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmpString(a.Key, b.Key) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reserve claims key for a new operation, refusing a key whose previous
// operation is not reconciled.
func (l *Ledger) reserve(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[key]; ok && !e.Reconciled() {
		return fmt.Errorf("%w: key %q (task %q, %s)", ErrNotReconciled, key, e.TaskID, describeEntry(*e))
	}
	return l.commit(ledgerRecord{Op: recordReserve, Key: key})
}

// created records the task ID of key's operation, so that a later run can
// find the task.
func (l *Ledger) created(key, taskID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commit(ledgerRecord{Op: recordTask, Key: key, TaskID: taskID})
}

// settle records how key's operation ended.
func (l *Ledger) settle(key, taskID string, cl Classification, eff EffectState) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commit(ledgerRecord{Op: recordSettle, Key: key, TaskID: taskID, Classification: cl, Effect: eff})
}

// abandon marks key's operation abandoned by the caller.
func (l *Ledger) abandon(key, reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.entries[key]; !ok {
		return fmt.Errorf("%w: %q", ErrUnknownKey, key)
	}
	return l.commit(ledgerRecord{Op: recordAbandon, Key: key, Reason: reason})
}

// release forgets key when its operation never started (the request could
// not be sent).
func (l *Ledger) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.commit(ledgerRecord{Op: recordRelease, Key: key})
}

func (l *Ledger) get(key string) (Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

func describeEntry(e Entry) string {
	if !e.Settled {
		return "still in flight, or left by a run that ended before it settled"
	}
	return string(e.Classification)
}
