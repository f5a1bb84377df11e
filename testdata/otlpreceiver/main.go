// Command otlpreceiver is the OTLP receiver the telemetry tests export
// to: the OpenTelemetry Collector's own OTLP receiver (otlpreceiver), so
// that what the tests assert is what a real collector accepts and
// decodes, not what a stand-in believes the protocol to be.
//
// It serves OTLP/HTTP (protobuf and JSON, as the collector does) on a
// free loopback port, prints its base URL ("http://127.0.0.1:PORT") as
// its first line on stdout, then writes one JSON line per span and per
// metric data point received (Record). It stops when its standard input
// ends: the receiver is shut down, which waits for the exports in
// flight, so every line of an accepted export is written before it
// exits. Its log goes to stderr.
//
// It is a module of its own so that the collector's dependencies never
// enter mcpflight's module; the tests build it with go build
// (internal/targets.GoBinary).
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Record is one line of the output: a span (Signal "span") or a metric
// data point (Signal "metric"). Times are Unix nanoseconds; IDs are hex.
type Record struct {
	Signal   string         `json:"signal"`
	Resource map[string]any `json:"resource,omitempty"`
	Scope    string         `json:"scope,omitempty"`

	// A span.
	TraceID       string         `json:"traceId,omitempty"`
	SpanID        string         `json:"spanId,omitempty"`
	ParentSpanID  string         `json:"parentSpanId,omitempty"`
	Name          string         `json:"name"`
	Kind          string         `json:"kind,omitempty"`
	StartUnixNano int64          `json:"startUnixNano,omitempty"`
	EndUnixNano   int64          `json:"endUnixNano,omitempty"`
	Attributes    map[string]any `json:"attributes,omitempty"`
	Events        []Event        `json:"events,omitempty"`
	Links         []Link         `json:"links,omitempty"`
	StatusCode    string         `json:"statusCode,omitempty"`
	StatusMessage string         `json:"statusMessage,omitempty"`

	// A metric data point (a sum or a gauge; a histogram gives its count).
	Type         string  `json:"type,omitempty"`
	Temporality  string  `json:"temporality,omitempty"`
	Monotonic    bool    `json:"monotonic,omitempty"`
	Value        float64 `json:"value,omitempty"`
	TimeUnixNano int64   `json:"timeUnixNano,omitempty"`
}

// Event is a span event.
type Event struct {
	Name         string         `json:"name"`
	TimeUnixNano int64          `json:"timeUnixNano"`
	Attributes   map[string]any `json:"attributes,omitempty"`
}

// Link is a span link.
type Link struct {
	TraceID    string         `json:"traceId"`
	SpanID     string         `json:"spanId"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// writer writes records as JSON lines; the receiver's handlers call it
// concurrently.
type writer struct {
	mu  sync.Mutex
	out *bufio.Writer
	enc *json.Encoder
}

func newWriter(w io.Writer) *writer {
	b := bufio.NewWriter(w)
	return &writer{out: b, enc: json.NewEncoder(b)}
}

func (w *writer) write(recs []Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		if err := w.enc.Encode(r); err != nil {
			return err
		}
	}
	return w.out.Flush()
}

func attrs(m pcommon.Map) map[string]any {
	if m.Len() == 0 {
		return nil
	}
	return m.AsRaw()
}

func stamp(t pcommon.Timestamp) int64 { return int64(t) }

// spans flattens an export of traces.
func spans(td ptrace.Traces) []Record {
	var out []Record
	for _, rs := range td.ResourceSpans().All() {
		res := attrs(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			scope := ss.Scope().Name()
			for _, sp := range ss.Spans().All() {
				r := Record{Signal: "span", Resource: res, Scope: scope,
					TraceID: hexID(sp.TraceID()), SpanID: hexID(sp.SpanID()), Name: sp.Name(), Kind: sp.Kind().String(),
					StartUnixNano: stamp(sp.StartTimestamp()), EndUnixNano: stamp(sp.EndTimestamp()),
					Attributes: attrs(sp.Attributes()), StatusCode: sp.Status().Code().String(), StatusMessage: sp.Status().Message()}
				if !sp.ParentSpanID().IsEmpty() {
					r.ParentSpanID = hexID(sp.ParentSpanID())
				}
				for _, ev := range sp.Events().All() {
					r.Events = append(r.Events, Event{Name: ev.Name(), TimeUnixNano: stamp(ev.Timestamp()), Attributes: attrs(ev.Attributes())})
				}
				for _, l := range sp.Links().All() {
					r.Links = append(r.Links, Link{TraceID: hexID(l.TraceID()), SpanID: hexID(l.SpanID()), Attributes: attrs(l.Attributes())})
				}
				out = append(out, r)
			}
		}
	}
	return out
}

func hexID[T ~[8]byte | ~[16]byte](id T) string {
	b := make([]byte, len(id))
	for i := range b {
		b[i] = id[i]
	}
	return hex.EncodeToString(b)
}

// points flattens an export of metrics.
func points(md pmetric.Metrics) []Record {
	var out []Record
	for _, rm := range md.ResourceMetrics().All() {
		res := attrs(rm.Resource().Attributes())
		for _, sm := range rm.ScopeMetrics().All() {
			scope := sm.Scope().Name()
			for _, m := range sm.Metrics().All() {
				base := Record{Signal: "metric", Resource: res, Scope: scope, Name: m.Name(), Type: m.Type().String()}
				number := func(dps pmetric.NumberDataPointSlice) {
					for _, dp := range dps.All() {
						r := base
						r.Attributes, r.TimeUnixNano = attrs(dp.Attributes()), stamp(dp.Timestamp())
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							r.Value = float64(dp.IntValue())
						} else {
							r.Value = dp.DoubleValue()
						}
						out = append(out, r)
					}
				}
				switch m.Type() {
				case pmetric.MetricTypeSum:
					base.Temporality, base.Monotonic = m.Sum().AggregationTemporality().String(), m.Sum().IsMonotonic()
					number(m.Sum().DataPoints())
				case pmetric.MetricTypeGauge:
					number(m.Gauge().DataPoints())
				case pmetric.MetricTypeHistogram:
					base.Temporality = m.Histogram().AggregationTemporality().String()
					for _, dp := range m.Histogram().DataPoints().All() {
						r := base
						r.Attributes, r.TimeUnixNano, r.Value = attrs(dp.Attributes()), stamp(dp.Timestamp()), float64(dp.Count())
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}

// startMessage is what the receiver logs once its HTTP server listens,
// with the bound address as the field endpoint: the only place a port
// the system chose is told.
const startMessage = "Starting HTTP server"

func run(stdin io.Reader, stdout, stderr io.Writer) error {
	ctx := context.Background()
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"

	// The receiver's log goes to stderr; its start message is also kept,
	// to learn the port.
	core, seen := observer.New(zapcore.InfoLevel)
	stderrCore := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(stderr), zapcore.InfoLevel)
	set := receivertest.NewNopSettings(factory.Type())
	set.Logger = zap.New(zapcore.NewTee(core, stderrCore))

	out := newWriter(stdout)
	traces, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error { return out.write(spans(td)) })
	if err != nil {
		return err
	}
	metrics, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error { return out.write(points(md)) })
	if err != nil {
		return err
	}
	tr, err := factory.CreateTraces(ctx, set, cfg, traces)
	if err != nil {
		return err
	}
	mr, err := factory.CreateMetrics(ctx, set, cfg, metrics)
	if err != nil {
		return err
	}
	// The two are one receiver, shared by its config: it starts once.
	host := componenttest.NewNopHost()
	for _, c := range []component.Component{tr, mr} {
		if err := c.Start(ctx, host); err != nil {
			return err
		}
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
		_ = mr.Shutdown(sctx)
	}()

	endpoint := ""
	for _, e := range seen.FilterMessage(startMessage).All() {
		if v, ok := e.ContextMap()["endpoint"].(string); ok {
			endpoint = v
		}
	}
	if endpoint == "" {
		return errors.New("the receiver did not log the address it listens on")
	}
	if _, err := fmt.Fprintf(stdout, "http://%s\n", endpoint); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, stdin)
	return err
}

func main() {
	if err := run(os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "otlpreceiver:", err)
		os.Exit(1)
	}
}
