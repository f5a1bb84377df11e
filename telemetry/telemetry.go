// Package telemetry exports a watched conversation to an OpenTelemetry
// collector over OTLP/HTTP: one span per request (from the request to its
// response), one span per task (from its creation to its terminal
// status), the monitor's findings and seed 002's alerts as span events,
// and counters of requests, cancels, tasks and findings as OTLP metrics.
//
// An Exporter's Observe and Finding are the monitor's Options.Observe and
// Options.Emit. They never wait on the network: spans go through the
// SDK's batch span processor, whose bounded queue drops what does not fit
// rather than block, and counters are aggregated in memory and sent by a
// periodic reader. Delivery is best effort: an export that fails is
// remembered, not reported where it happens, and Close, bounded in time,
// returns it for the caller to say in one line.
//
// Only identifiers go out: methods, request and task IDs, statuses,
// error codes, rule and requirement IDs, sequence numbers, each sanitised
// and clipped. No message body, no finding's text (which may quote the
// peer), no header value: a session is named by a digest of its key,
// since over HTTP the key is the session's Mcp-Session-Id.
package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/hostcancel"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/monitor"
)

// Instrumentation scope, span, event and instrument names.
const (
	InstrumentationName = "github.com/mcpflight/mcpflight/telemetry"
	ServiceName         = "mcpflight"

	// SpanConversation is the span of the whole conversation: the parent
	// of the request spans, and where a finding that names no request
	// or task goes.
	SpanConversation = "mcpflight.conversation"
	// SpanTask is a task's span; a request's span is named by its method.
	SpanTask = "mcp.task"

	// EventFinding is a finding (a rule broken, or one of seed 002's
	// alerts: rule monitor.RuleTaskStillWorking).
	EventFinding = "mcpflight.finding"
	// EventCancel is notifications/cancelled (or the close of a
	// response stream that stands for it) naming the request.
	EventCancel = mcp.NotificationCancelled
	// EventStatus is a task status the server reported.
	EventStatus = "mcp.task.status"

	MetricRequests = "mcpflight.requests"
	MetricCancels  = "mcpflight.cancels"
	MetricTasks    = "mcpflight.tasks"
	MetricFindings = "mcpflight.findings"
)

// Attribute keys. The MCP ones are hostcancel's, so that a task ID or a
// method has one name in all of mcpflight's telemetry; the error code is
// the OpenTelemetry MCP convention's.
const (
	AttrMethod    = hostcancel.AttrMethod
	AttrRequestID = hostcancel.AttrRequestID
	AttrTaskID    = hostcancel.AttrTaskID
	AttrStatus    = hostcancel.AttrStatus
	AttrRevision  = hostcancel.AttrRevision
	AttrErrorCode = attribute.Key("rpc.response.status_code")

	// AttrSession is a digest of the monitor's session key (Session).
	AttrSession = attribute.Key("mcpflight.session")
	// AttrSide is the side that sent the request (on a span, a cancel)
	// or broke the rule (on a finding).
	AttrSide = attribute.Key("mcpflight.side")
	// AttrSeq is the sequence number, in the conversation's chronology,
	// of what a span or an event is about: the request, the cancel, the
	// status, the evidence of a finding. AttrResponseSeq is the
	// response's.
	AttrSeq         = attribute.Key("mcpflight.seq")
	AttrResponseSeq = attribute.Key("mcpflight.response.seq")
	// AttrCancelled is set on a request its sender cancelled.
	AttrCancelled = attribute.Key("mcpflight.cancelled")
	// AttrOpenAtEnd is set on a request never answered, or a task never
	// terminal, when the conversation ended (Close).
	AttrOpenAtEnd = attribute.Key("mcpflight.open_at_end")
	// AttrEvicted is set on a request span ended early because more than
	// maxOpen requests were in flight.
	AttrEvicted = attribute.Key("mcpflight.evicted")

	AttrRule        = attribute.Key("mcpflight.rule")
	AttrRequirement = attribute.Key("mcpflight.requirement")
	AttrLevel       = attribute.Key("mcpflight.requirement.level")
	AttrVerdict     = attribute.Key("mcpflight.verdict")
	AttrAbsence     = attribute.Key("mcpflight.absence")
	// AttrRequestIDs are the requests an alert is about.
	AttrRequestIDs = attribute.Key("mcpflight.request_ids")
)

// Defaults and bounds.
const (
	// DefaultCloseTimeout bounds Close when Config.CloseTimeout is zero.
	DefaultCloseTimeout = 5 * time.Second
	// exportTimeout bounds one export request; retries of a throttled or
	// unavailable collector stop after retryElapsed.
	exportTimeout = 5 * time.Second
	retryElapsed  = 10 * time.Second
	// queueSize is the batch span processor's queue: spans ended while
	// it is full are dropped.
	queueSize = 4096
	// metricInterval is how often the counters are sent while the
	// conversation goes on; Close sends them once more.
	metricInterval = 15 * time.Second
	// eventLimit is the events kept per span (the conversation's span
	// takes every finding that names no request).
	eventLimit = 1024
	// maxOpen bounds the request and task spans kept open, maxIndexed
	// the sequence numbers remembered to place a finding.
	maxOpen    = 4096
	maxIndexed = 4096
	// maxText clips an untrusted identifier (a method, an ID, a status).
	maxText = 128
)

// Config configures an Exporter.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL, as
	// OTEL_EXPORTER_OTLP_ENDPOINT is: traces go to its path joined with
	// /v1/traces, metrics with /v1/metrics. http:// is sent in clear;
	// headers (OTEL_EXPORTER_OTLP_HEADERS) and TLS settings come from the
	// OpenTelemetry environment variables.
	Endpoint string
	// Start is the wall time of the conversation clock's zero: an
	// activity at offset d happened at Start+d.
	Start time.Time
	// Clock, when not nil, reads the conversation's clock now (a live
	// watch): Close ends what is still open there. When nil (a
	// recording), Close ends it at the latest offset seen.
	Clock func() time.Duration
	// Revision, when known, is the protocol revision spoken, an attribute
	// of the conversation's span.
	Revision string
	// Version is mcpflight's version (service.version).
	Version string
	// CloseTimeout bounds Close; DefaultCloseTimeout if zero.
	CloseTimeout time.Duration
}

// Exporter turns a conversation, as the monitor follows it, into spans,
// span events and counters. Its methods are safe for concurrent use.
type Exporter struct {
	cfg      Config
	endpoint string // for messages
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	spans    *failures
	points   *failures
	tracer   trace.Tracer

	requests, cancels, tasks, findings metric.Int64Counter

	mu     sync.Mutex
	closed bool
	root   trace.Span
	rootCx context.Context
	// last is the latest offset an activity was seen at.
	last time.Duration
	// open are the request spans in flight, in the order sent; taskSpans
	// the tasks not yet terminal.
	open      map[requestKey]*openRequest
	openOrder []requestKey
	taskSpans map[taskKey]*openTask
	// index maps the sequence numbers of recent activities to the span
	// they belong to, for the findings whose evidence they are; pending
	// are findings whose sequence number no activity has named yet (the
	// monitor reports a finding before the activity of the same frame).
	index      map[seqKey]placed
	indexOrder []seqKey
	pending    []pendingFinding
}

type requestKey struct {
	session string
	side    monitor.Side
	id      string
}

type taskKey struct{ session, id string }

type seqKey struct {
	session string
	seq     uint64
}

type openRequest struct {
	span trace.Span
	ctx  context.Context
}

type openTask struct{ span trace.Span }

// placed is where an activity's sequence number belongs, and when it
// happened.
type placed struct {
	span trace.Span
	at   time.Duration
}

type pendingFinding struct {
	f  monitor.Finding
	at time.Duration
}

// New returns an Exporter sending to cfg.Endpoint. It checks the URL and
// starts the SDK's background exporters; it does not reach the network.
func New(cfg Config) (*Exporter, error) {
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL such as http://localhost:4318", clean(cfg.Endpoint))
	case u.User != nil:
		// The exporter sends to the scheme, host and path only, so they
		// would be dropped, and they would show in messages; it sends
		// the headers of OTEL_EXPORTER_OTLP_HEADERS instead.
		return nil, fmt.Errorf("OTLP endpoint %s: give credentials in OTEL_EXPORTER_OTLP_HEADERS, not in the URL", clean(u.Redacted()))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("OTLP endpoint %q: a base URL takes no query or fragment", clean(cfg.Endpoint))
	}
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = DefaultCloseTimeout
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	base := strings.TrimSuffix(u.String(), "/")
	ctx := context.Background()
	retry := otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: retryElapsed}
	spanExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"),
		otlptracehttp.WithTimeout(exportTimeout), otlptracehttp.WithRetry(retry))
	if err != nil {
		return nil, err
	}
	metricExp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"),
		otlpmetrichttp.WithTimeout(exportTimeout), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig(retry)))
	if err != nil {
		return nil, err
	}
	// The OpenTelemetry environment (OTEL_SERVICE_NAME,
	// OTEL_RESOURCE_ATTRIBUTES) has the last word on the resource.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", ServiceName), attribute.String("service.version", cfg.Version)))
	if err != nil {
		return nil, err
	}
	if res, err = resource.Merge(res, resource.Environment()); err != nil {
		return nil, err
	}
	e := &Exporter{cfg: cfg, endpoint: clean(u.String()), spans: &failures{}, points: &failures{},
		open: map[requestKey]*openRequest{}, taskSpans: map[taskKey]*openTask{}, index: map[seqKey]placed{}}
	limits := sdktrace.NewSpanLimits()
	limits.EventCountLimit = eventLimit
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits),
		sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(&spanSink{SpanExporter: spanExp, failures: e.spans},
			sdktrace.WithMaxQueueSize(queueSize), sdktrace.WithExportTimeout(exportTimeout))))
	e.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(
		&metricSink{Exporter: metricExp, failures: e.points}, sdkmetric.WithInterval(metricInterval), sdkmetric.WithTimeout(exportTimeout))))
	e.tracer = e.tp.Tracer(InstrumentationName)
	m := e.mp.Meter(InstrumentationName)
	// An instrument that fails to register is the API's no-op one: a
	// missing counter is what a failed registration should cost.
	e.requests, _ = m.Int64Counter(MetricRequests, metric.WithDescription("requests sent, by side and method"))
	e.cancels, _ = m.Int64Counter(MetricCancels, metric.WithDescription("requests cancelled by their sender, by side and method"))
	e.tasks, _ = m.Int64Counter(MetricTasks, metric.WithDescription("tasks created"))
	e.findings, _ = m.Int64Counter(MetricFindings, metric.WithDescription("findings, by rule, side, requirement and verdict (seed 002's alerts: rule "+monitor.RuleTaskStillWorking+")"))

	rootAttrs := []attribute.KeyValue{}
	if cfg.Revision != "" {
		rootAttrs = append(rootAttrs, AttrRevision.String(clean(cfg.Revision)))
	}
	e.rootCx, e.root = e.tracer.Start(ctx, SpanConversation, trace.WithTimestamp(cfg.Start), trace.WithAttributes(rootAttrs...))
	return e, nil
}

// clean makes an untrusted identifier fit for an attribute.
func clean(s string) string { return chrono.Sanitize(chrono.Clip(s, maxText), false) }

// Session is the digest a session key is exported as: the key may be an
// Mcp-Session-Id, which must not leave the machine.
func Session(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// wall is the wall time of offset d on the conversation's clock.
func (e *Exporter) wall(d time.Duration) time.Time { return e.cfg.Start.Add(d) }

// Observe takes one activity of the conversation (monitor
// Options.Observe). It never blocks on the network.
func (e *Exporter) Observe(a monitor.Activity) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.last = max(e.last, a.At)
	e.settlePending(seqKey{a.Session, a.Seq})
	switch a.Kind {
	case monitor.ActRequest:
		e.request(a)
	case monitor.ActCancel:
		e.cancel(a)
	case monitor.ActResponse:
		e.response(a)
	case monitor.ActTask:
		e.task(a)
	}
}

func (e *Exporter) requestAttrs(a monitor.Activity) []attribute.KeyValue {
	attrs := []attribute.KeyValue{AttrSession.String(Session(a.Session)), AttrSide.String(string(a.Side)),
		AttrMethod.String(clean(a.Method)), AttrRequestID.String(clean(a.ID))}
	if a.TaskID != "" {
		attrs = append(attrs, AttrTaskID.String(clean(a.TaskID)))
	}
	return attrs
}

func (e *Exporter) count(c metric.Int64Counter, attrs ...attribute.KeyValue) {
	c.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}

// startRequest opens the span of a's request, sent at a.Sent; seq is the
// request's sequence number, 0 when unknown.
func (e *Exporter) startRequest(a monitor.Activity, seq uint64) *openRequest {
	k := requestKey{a.Session, a.Side, a.ID}
	if old := e.open[k]; old != nil {
		// The monitor reports no second request under an ID in flight;
		// should one come, the first span is not left open.
		old.span.End(trace.WithTimestamp(e.wall(a.At)))
		e.forget(k)
	}
	if len(e.openOrder) >= maxOpen {
		oldest := e.openOrder[0]
		e.open[oldest].span.SetAttributes(AttrEvicted.Bool(true))
		e.open[oldest].span.End(trace.WithTimestamp(e.wall(a.At)))
		e.forget(oldest)
	}
	attrs := e.requestAttrs(a)
	if seq > 0 {
		attrs = append(attrs, AttrSeq.Int64(int64(seq)))
	}
	ctx, span := e.tracer.Start(e.rootCx, clean(a.Method), trace.WithTimestamp(e.wall(a.Sent)), trace.WithAttributes(attrs...))
	r := &openRequest{span: span, ctx: ctx}
	e.open[k] = r
	e.openOrder = append(e.openOrder, k)
	return r
}

func (e *Exporter) forget(k requestKey) {
	delete(e.open, k)
	for i, o := range e.openOrder {
		if o == k {
			e.openOrder = append(e.openOrder[:i], e.openOrder[i+1:]...)
			break
		}
	}
}

func (e *Exporter) request(a monitor.Activity) {
	e.count(e.requests, AttrSide.String(string(a.Side)), AttrMethod.String(clean(a.Method)))
	r := e.startRequest(a, a.Seq)
	e.place(seqKey{a.Session, a.Seq}, r.span, a.At)
}

func (e *Exporter) cancel(a monitor.Activity) {
	e.count(e.cancels, AttrSide.String(string(a.Side)), AttrMethod.String(clean(a.Method)))
	r := e.open[requestKey{a.Session, a.Side, a.ID}]
	if r == nil {
		return
	}
	r.span.SetAttributes(AttrCancelled.Bool(true))
	r.span.AddEvent(EventCancel, trace.WithTimestamp(e.wall(a.At)), trace.WithAttributes(AttrSeq.Int64(int64(a.Seq))))
	e.place(seqKey{a.Session, a.Seq}, r.span, a.At)
}

func (e *Exporter) response(a monitor.Activity) {
	k := requestKey{a.Session, a.Side, a.ID}
	r := e.open[k]
	if r == nil {
		// Its span was evicted, or the exporter came in after the
		// request: the response still says when it was sent.
		r = e.startRequest(a, 0)
	}
	attrs := []attribute.KeyValue{AttrResponseSeq.Int64(int64(a.Seq))}
	if a.Cancelled {
		attrs = append(attrs, AttrCancelled.Bool(true))
	}
	if a.TaskID != "" {
		attrs = append(attrs, AttrTaskID.String(clean(a.TaskID)))
	}
	if a.Error {
		code := strconv.Itoa(a.ErrCode)
		attrs = append(attrs, AttrErrorCode.String(code))
		r.span.SetStatus(codes.Error, "JSON-RPC error "+code)
	}
	r.span.SetAttributes(attrs...)
	e.place(seqKey{a.Session, a.Seq}, r.span, a.At)
	r.span.End(trace.WithTimestamp(e.wall(a.At)))
	e.forget(k)
}

func (e *Exporter) task(a monitor.Activity) {
	k := taskKey{a.Session, a.TaskID}
	t := e.taskSpans[k]
	creator := e.open[requestKey{a.Session, a.Side, a.ID}]
	if t == nil {
		if len(e.taskSpans) >= maxOpen {
			return // past the bound, a new task is neither traced nor counted
		}
		e.count(e.tasks)
		parent := e.rootCx
		if creator != nil {
			parent = creator.ctx
		}
		_, span := e.tracer.Start(parent, SpanTask, trace.WithTimestamp(e.wall(a.At)), trace.WithAttributes(
			AttrSession.String(Session(a.Session)), AttrSide.String(string(a.Side)), AttrTaskID.String(clean(a.TaskID)),
			AttrMethod.String(clean(a.Method)), AttrRequestID.String(clean(a.ID)), AttrSeq.Int64(int64(a.Seq))))
		t = &openTask{span: span}
		e.taskSpans[k] = t
	}
	status := clean(a.Status)
	t.span.SetAttributes(AttrStatus.String(status))
	t.span.AddEvent(EventStatus, trace.WithTimestamp(e.wall(a.At)), trace.WithAttributes(AttrStatus.String(status), AttrSeq.Int64(int64(a.Seq))))
	// A finding shown by the frame that reported the status is about the
	// request it answered when that is still open, else about the task.
	if creator != nil {
		e.place(seqKey{a.Session, a.Seq}, creator.span, a.At)
	} else {
		e.place(seqKey{a.Session, a.Seq}, t.span, a.At)
	}
	if mcp.TaskTerminal(a.Status) {
		t.span.End(trace.WithTimestamp(e.wall(a.At)))
		delete(e.taskSpans, k)
	}
}

// place remembers that sequence number k belongs to span, and attaches
// the findings that waited for it.
func (e *Exporter) place(k seqKey, span trace.Span, at time.Duration) {
	if _, seen := e.index[k]; !seen {
		e.indexOrder = append(e.indexOrder, k)
		if len(e.indexOrder) > maxIndexed {
			delete(e.index, e.indexOrder[0])
			e.indexOrder = e.indexOrder[1:]
		}
	}
	e.index[k] = placed{span: span, at: at}
	kept := e.pending[:0]
	for _, p := range e.pending {
		if (seqKey{p.f.Session, p.f.Seq}) == k {
			e.attach(span, p.f, at)
		} else {
			kept = append(kept, p)
		}
	}
	e.pending = kept
}

// settlePending puts on the conversation's span the findings that wait
// for a sequence number other than k's: the activity that follows a
// finding names the frame the finding is about, if any does.
func (e *Exporter) settlePending(k seqKey) {
	kept := e.pending[:0]
	for _, p := range e.pending {
		if (seqKey{p.f.Session, p.f.Seq}) == k {
			kept = append(kept, p)
		} else {
			e.attach(e.root, p.f, p.at)
		}
	}
	e.pending = kept
}

// Finding takes one finding or alert (monitor Options.Emit): a span event
// on the task's span when it names a task still open, else on the span of
// the request whose frame is its evidence, else on the conversation's.
// It never blocks on the network.
func (e *Exporter) Finding(f monitor.Finding) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	attrs := []attribute.KeyValue{AttrRule.String(f.Rule), AttrSide.String(string(f.Side)), AttrVerdict.String(string(f.Verdict))}
	if f.Requirement != "" {
		attrs = append(attrs, AttrRequirement.String(f.Requirement))
	}
	e.count(e.findings, attrs...)
	if f.TaskID != "" {
		if t := e.taskSpans[taskKey{f.Session, f.TaskID}]; t != nil {
			e.attach(t.span, f, e.last)
			return
		}
	}
	if p, ok := e.index[seqKey{f.Session, f.Seq}]; ok {
		span := p.span
		if !span.IsRecording() {
			span = e.root // that request was answered before the finding came
		}
		e.attach(span, f, p.at)
		return
	}
	if f.Absence || f.TaskID != "" {
		e.attach(e.root, f, e.last)
		return
	}
	// The monitor judges frames in order: a finding about another frame
	// means that no activity will come for those waiting. So at most one
	// frame's findings wait, whatever a flood of findings without
	// activities (a server writing garbage) amounts to.
	e.settlePending(seqKey{f.Session, f.Seq})
	e.pending = append(e.pending, pendingFinding{f: f, at: e.last})
}

// attach adds f to span as an event at offset at.
func (e *Exporter) attach(span trace.Span, f monitor.Finding, at time.Duration) {
	attrs := []attribute.KeyValue{AttrRule.String(f.Rule), AttrVerdict.String(string(f.Verdict)), AttrSide.String(string(f.Side)),
		AttrSeq.Int64(int64(f.Seq)), AttrSession.String(Session(f.Session))}
	if f.Requirement != "" {
		attrs = append(attrs, AttrRequirement.String(f.Requirement), AttrLevel.String(f.Level))
	}
	if f.Revision != "" {
		attrs = append(attrs, AttrRevision.String(clean(f.Revision)))
	}
	if f.Absence {
		attrs = append(attrs, AttrAbsence.Bool(true))
	}
	if f.TaskID != "" {
		attrs = append(attrs, AttrTaskID.String(clean(f.TaskID)))
	}
	if len(f.RequestIDs) > 0 {
		ids := make([]string, len(f.RequestIDs))
		for i, id := range f.RequestIDs {
			ids[i] = clean(id)
		}
		attrs = append(attrs, AttrRequestIDs.StringSlice(ids))
	}
	span.AddEvent(EventFinding, trace.WithTimestamp(e.wall(at)), trace.WithAttributes(attrs...))
}

// Close ends the conversation: the requests never answered and the
// tasks never terminal end where the conversation did, marked
// AttrOpenAtEnd, and what is queued is sent. It waits at most
// Config.CloseTimeout (and ctx), and returns the first export error
// since New, if any, with how many exports failed. Later calls return
// nil and send nothing.
func (e *Exporter) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	end := e.last
	if e.cfg.Clock != nil {
		end = max(end, e.cfg.Clock())
	}
	for _, p := range e.pending {
		e.attach(e.root, p.f, p.at)
	}
	e.pending = nil
	at := trace.WithTimestamp(e.wall(end))
	for _, k := range e.openOrder {
		e.open[k].span.SetAttributes(AttrOpenAtEnd.Bool(true))
		e.open[k].span.End(at)
	}
	for _, t := range e.taskSpans {
		t.span.SetAttributes(AttrOpenAtEnd.Bool(true))
		t.span.End(at)
	}
	e.open, e.openOrder, e.taskSpans, e.index, e.indexOrder = nil, nil, nil, nil, nil
	e.root.End(at)
	e.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, e.cfg.CloseTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var traceErr, metricErr error
	wg.Go(func() { traceErr = e.tp.Shutdown(ctx) })
	wg.Go(func() { metricErr = e.mp.Shutdown(ctx) })
	wg.Wait()
	var errs []error
	for _, err := range []error{e.spans.err("spans"), e.points.err("metrics"), shutdownErr("spans", traceErr), shutdownErr("metrics", metricErr)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("OTLP export to %s: %w", e.endpoint, oneLine(errs))
}

// oneLine is errors joined on one line, for the caller to print as one.
type oneLine []error

func (o oneLine) Error() string {
	parts := make([]string, len(o))
	for i, err := range o {
		parts[i] = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(parts, "; ")
}

func (o oneLine) Unwrap() []error { return o }

func shutdownErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sending the last %s: %w", what, err)
}

// failures remembers the exports that failed: the SDK would otherwise
// hand their errors to the global OpenTelemetry error handler, which
// writes to stderr in the middle of the watch.
type failures struct {
	mu    sync.Mutex
	n     int
	first error
}

func (f *failures) add(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.first == nil {
		f.first = err
	}
}

func (f *failures) err(what string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.n {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("an export of %s failed: %w", what, f.first)
	}
	return fmt.Errorf("%d exports of %s failed, the first: %w", f.n, what, f.first)
}

// spanSink is the OTLP span exporter, its failures kept.
type spanSink struct {
	sdktrace.SpanExporter
	failures *failures
}

func (s *spanSink) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	s.failures.add(s.SpanExporter.ExportSpans(ctx, spans))
	return nil
}

// metricSink is the OTLP metric exporter, its failures kept.
type metricSink struct {
	sdkmetric.Exporter
	failures *failures
}

func (s *metricSink) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	s.failures.add(s.Exporter.Export(ctx, rm))
	return nil
}
