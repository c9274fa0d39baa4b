// Command peer is the Go interop peer: a small program of ours on the public API of the Go BabelQueue
// SDK (github.com/babelqueue/babelqueue-go and its pulsar transport module, over the pure-Go
// github.com/apache/pulsar-client-go), built from the vendored v1.8.0 tarball by
// scripts/interop/setup-go.mjs. The Jest interop suite drives it with the same CLI as the Python peer:
//
//	peer produce --topic T [--input FILE|-]      JSON list of {urn, data, traceId?, delayMs?, routeUrn?}
//	                                             → one JSON line per message
//	peer consume --topic T --subscription S --out FILE --handle URN [--count N|--calls N] [--fail URN=N]
//	             [--forward URN=TOPIC=URN2] [--max-attempts N] [--dead-letter] [--timeout SECONDS]
//
// With --otel, both modes trace with the SDK's own OpenTelemetry support (its otel module: otel.Publish for
// produce, otel.WrapHandler around every handler for consume) into the OpenTelemetry SDK's in-memory exporter
// (tracetest), and print the finished spans as one JSON line before exiting: {"event":"spans","spans":[...]}.
//
// stdout carries only JSON lines; the Pulsar client logs to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pulsarsdk "github.com/apache/pulsar-client-go/pulsar"
	babelqueue "github.com/babelqueue/babelqueue-go"
	bqotel "github.com/babelqueue/babelqueue-go/otel"
	bqpulsar "github.com/babelqueue/babelqueue-go/pulsar"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// sdkRelease is the Go SDK release the peer was built against (set by setup-go.mjs with -ldflags -X;
// the build info only says "(devel)" for a module replaced by a directory).
var sdkRelease = "unknown"

func nowMs() int64 { return time.Now().UnixMilli() }

var stdout = json.NewEncoder(os.Stdout)

func emit(event map[string]any) {
	stdout.SetEscapeHTML(false)
	_ = stdout.Encode(event)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peer: "+format+"\n", args...)
	os.Exit(2)
}

func newClient(serviceURL string) pulsarsdk.Client {
	client, err := pulsarsdk.NewClient(pulsarsdk.ClientOptions{URL: serviceURL})
	if err != nil {
		fail("pulsar client: %v", err)
	}
	return client
}

// recordingTransport is the SDK transport, unchanged, remembering the delivery being dispatched so the
// handler can record its native properties (the SDK's Handler only receives the envelope).
type recordingTransport struct {
	*bqpulsar.Transport
	mu      sync.Mutex
	current *babelqueue.ReceivedMessage
}

func (t *recordingTransport) Pop(ctx context.Context, queue string, timeout time.Duration) (*babelqueue.ReceivedMessage, error) {
	msg, err := t.Transport.Pop(ctx, queue, timeout)
	t.mu.Lock()
	t.current = msg
	t.mu.Unlock()
	return msg, err
}

func (t *recordingTransport) delivery() (pulsarsdk.Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == nil {
		return nil, false
	}
	m, ok := t.current.Handle.(pulsarsdk.Message)
	return m, ok
}

// typeMap is the Go type the SDK decoded each data value into (maps and slices keep their shape).
func typeMap(value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[k] = typeMap(item)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = typeMap(item)
		}
		return out
	case nil:
		return "nil"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// tracing is an OpenTelemetry SDK tracer whose spans end up in an in-memory exporter (synchronously, on End).
type tracing struct {
	tracer   trace.Tracer
	exporter *tracetest.InMemoryExporter
}

func newTracing() *tracing {
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	return &tracing{tracer: provider.Tracer("babelqueue-interop-peer"), exporter: exporter}
}

// spans are the finished spans, with kind and status upper-cased as the other peers write them.
func (t *tracing) spans() []map[string]any {
	out := []map[string]any{}
	for _, s := range t.exporter.GetSpans() {
		attributes := map[string]any{}
		for _, kv := range s.Attributes {
			attributes[string(kv.Key)] = kv.Value.AsInterface()
		}
		var parent, remote any
		if s.Parent.IsValid() {
			parent, remote = s.Parent.SpanID().String(), s.Parent.IsRemote()
		}
		out = append(out, map[string]any{
			"name":         s.Name,
			"kind":         strings.ToUpper(s.SpanKind.String()),
			"traceId":      s.SpanContext.TraceID().String(),
			"spanId":       s.SpanContext.SpanID().String(),
			"parentSpanId": parent,
			"parentRemote": remote,
			"attributes":   attributes,
			"status":       strings.ToUpper(s.Status.Code.String()),
		})
	}
	return out
}

func (t *tracing) emit() { emit(map[string]any{"event": "spans", "spans": t.spans()}) }

type inputMessage struct {
	URN      string         `json:"urn"`
	Data     map[string]any `json:"data"`
	TraceID  string         `json:"traceId"`
	DelayMs  int64          `json:"delayMs"`
	RouteURN string         `json:"routeUrn"`
}

// publishExtras ask for what the SDK has no API for: a delayed delivery, or a bq-job other than the
// body's job. They ride in the context from App.Publish down to the Producer the SDK's Transport calls.
type publishExtras struct {
	delay    time.Duration
	routeURN string
}

type publishExtrasKey struct{}

// extrasClient is the transport's documented Client seam (bqpulsar.WithClient), on the same
// pulsar-client-go client: a producer per queue (the topic is the queue name, as the SDK's own adapter
// makes it without a topic prefix). It only publishes.
type extrasClient struct{ client pulsarsdk.Client }

func (c extrasClient) CreateProducer(queue string) (bqpulsar.Producer, error) {
	producer, err := c.client.CreateProducer(pulsarsdk.ProducerOptions{Topic: queue})
	if err != nil {
		return nil, err
	}
	return extrasProducer{producer}, nil
}

func (c extrasClient) Subscribe(string) (bqpulsar.Consumer, error) {
	return nil, errors.New("the produce seam does not consume")
}

// extrasProducer sends the message the SDK built (its envelope as the payload, its bq-* projection as
// the properties), adding only what the context's publishExtras ask for.
type extrasProducer struct{ pulsarsdk.Producer }

func (p extrasProducer) Send(ctx context.Context, msg *pulsarsdk.ProducerMessage) (pulsarsdk.MessageID, error) {
	if extras, ok := ctx.Value(publishExtrasKey{}).(publishExtras); ok {
		if msg.Properties == nil {
			msg.Properties = map[string]string{}
		}
		if extras.delay > 0 {
			msg.DeliverAfter = extras.delay
			msg.Properties["bq-delay"] = strconv.FormatInt(extras.delay.Milliseconds(), 10)
		}
		if extras.routeURN != "" {
			msg.Properties["bq-job"] = extras.routeURN
		}
	}
	return p.Producer.Send(ctx, msg)
}

func produce(args []string) {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	serviceURL := fs.String("service-url", "pulsar://127.0.0.1:6650", "Pulsar service URL")
	topic := fs.String("topic", "", "topic (the SDK's queue name)")
	input := fs.String("input", "-", "JSON file, or - for stdin")
	withOtel := fs.Bool("otel", false, "publish with the SDK's otel.Publish and print the spans")
	_ = fs.Parse(args)
	if *topic == "" {
		fail("produce needs --topic")
	}
	var raw []byte
	var err error
	if *input == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*input)
	}
	if err != nil {
		fail("read input: %v", err)
	}
	// json.Number keeps each input number's text (2^64, 1.0, -0.0), and the SDK's encoding/json writes
	// it verbatim: the peer publishes the numbers it was given, not their float64 rounding.
	decoder := json.NewDecoder(strings.NewReader(string(raw)))
	decoder.UseNumber()
	var messages []inputMessage
	if err := decoder.Decode(&messages); err != nil {
		fail("input is not a JSON list of messages: %v", err)
	}
	client := newClient(*serviceURL)
	defer client.Close()
	transport, err := bqpulsar.New(bqpulsar.WithPulsarClient(client))
	if err != nil {
		fail("transport: %v", err)
	}
	seam, err := bqpulsar.New(bqpulsar.WithClient(extrasClient{client}))
	if err != nil {
		fail("transport: %v", err)
	}
	app := babelqueue.NewApp(transport, babelqueue.WithDefaultQueue(*topic))
	seamApp := babelqueue.NewApp(seam, babelqueue.WithDefaultQueue(*topic))
	var traced *tracing
	if *withOtel {
		traced = newTracing()
		defer traced.emit()
	}
	for _, m := range messages {
		opts := []babelqueue.Option{babelqueue.WithQueue(*topic)}
		if m.TraceID != "" {
			opts = append(opts, babelqueue.WithTraceID(m.TraceID))
		}
		publisher, how, ctx := app, "App.Publish", context.Background()
		if m.DelayMs > 0 || m.RouteURN != "" {
			// Still App.Publish and the SDK's Transport.Publish: only the Producer under it is the seam's.
			publisher, how = seamApp, "App.Publish through the transport's Client seam"
			ctx = context.WithValue(ctx, publishExtrasKey{}, publishExtras{
				delay:    time.Duration(m.DelayMs) * time.Millisecond,
				routeURN: m.RouteURN,
			})
		}
		sentAt := nowMs()
		var id string
		var err error
		if traced != nil {
			// The SDK's PRODUCER span; it writes that span's trace id into trace_id (over any WithTraceID).
			how = "otel.Publish"
			id, err = bqotel.Publish(ctx, traced.tracer, publisher, m.URN, m.Data, opts...)
		} else {
			id, err = publisher.Publish(ctx, m.URN, m.Data, opts...)
		}
		if err != nil {
			fail("publish %s: %v", m.URN, err)
		}
		var traceID any
		if m.TraceID != "" {
			traceID = m.TraceID
		}
		if traced != nil {
			spans := traced.exporter.GetSpans()
			traceID = bqotel.UUIDOf(spans[len(spans)-1].SpanContext.TraceID())
		}
		emit(map[string]any{"event": "produced", "id": id, "urn": m.URN, "traceId": traceID, "delayMs": m.DelayMs, "sentAt": sentAt, "how": how})
	}
}

func consume(args []string) {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	serviceURL := fs.String("service-url", "pulsar://127.0.0.1:6650", "Pulsar service URL")
	topic := fs.String("topic", "", "topic (the SDK's queue name)")
	subscription := fs.String("subscription", "babelqueue", "subscription name")
	out := fs.String("out", "", "JSON-lines file to append one record per handler call to")
	count := fs.Int("count", 0, "stop after this many successful handler calls")
	calls := fs.Int("calls", 0, "stop after this many handler calls, failed ones included")
	timeout := fs.Float64("timeout", 30, "seconds")
	maxAttempts := fs.Int("max-attempts", 3, "App WithMaxAttempts")
	deadLetter := fs.Bool("dead-letter", false, "App WithDeadLetter(true)")
	withOtel := fs.Bool("otel", false, "wrap handlers with the SDK's otel.WrapHandler and print the spans")
	var handle, failSpecs, forwardSpecs multi
	fs.Var(&handle, "handle", "register a handler for this URN (repeatable)")
	fs.Var(&failSpecs, "fail", "URN=N: fail the first N calls per message (repeatable)")
	fs.Var(&forwardSpecs, "forward", "URN=TOPIC=URN2: publish onward with the same trace id (repeatable)")
	_ = fs.Parse(args)
	if *topic == "" || *out == "" || len(handle) == 0 || (*count <= 0 && *calls <= 0) {
		fail("consume needs --topic, --out, --handle and --count or --calls")
	}
	failPlan := map[string]int{}
	for _, spec := range failSpecs {
		var urn string
		var n int
		parts := strings.SplitN(spec, "=", 2)
		if len(parts) != 2 {
			fail("bad --fail %q", spec)
		}
		urn = parts[0]
		if _, err := fmt.Sscanf(parts[1], "%d", &n); err != nil {
			fail("bad --fail %q", spec)
		}
		failPlan[urn] = n
	}
	forwards := map[string][2]string{}
	for _, spec := range forwardSpecs {
		parts := strings.Split(spec, "=")
		if len(parts) != 3 {
			fail("bad --forward %q", spec)
		}
		forwards[parts[0]] = [2]string{parts[1], parts[2]}
	}

	file, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fail("open %s: %v", *out, err)
	}
	defer file.Close()
	records := json.NewEncoder(file)
	records.SetEscapeHTML(false)

	client := newClient(*serviceURL)
	defer client.Close()
	inner, err := bqpulsar.New(
		bqpulsar.WithPulsarClient(client),
		bqpulsar.WithSubscription(*subscription),
		bqpulsar.WithMaxWaitTime(200*time.Millisecond),
	)
	if err != nil {
		fail("transport: %v", err)
	}
	transport := &recordingTransport{Transport: inner}
	app := babelqueue.NewApp(
		transport,
		babelqueue.WithDefaultQueue(*topic),
		babelqueue.WithMaxAttempts(*maxAttempts),
		babelqueue.WithDeadLetter(*deadLetter),
		babelqueue.WithPollTimeout(200*time.Millisecond),
	)

	callsPerMessage := map[string]int{}
	ok, made := 0, 0
	var traced *tracing
	if *withOtel {
		traced = newTracing()
	}
	record := func(ctx context.Context, urn string, env babelqueue.Envelope, outcome string, extra map[string]any) {
		encoded, _ := env.Encode()
		var asJSON map[string]any
		_ = json.Unmarshal(encoded, &asJSON)
		entry := map[string]any{
			"sdk":        "go",
			"sdkVersion": sdkVersion(),
			"handler":    urn,
			"outcome":    outcome,
			"envelope":   asJSON,
			// The SDK's own Encode of what it decoded: what its retry copies and dead letters would carry.
			"encodedBody": string(encoded),
			"attempts":    env.Attempts,
			"dataTypes":   typeMap(env.Data),
			"accepted":    env.Accepts(),
			"routeUrn":    env.URN(),
			"receivedAt":  nowMs(),
		}
		if traced != nil {
			active := trace.SpanContextFromContext(ctx)
			entry["activeSpan"] = map[string]any{"traceId": active.TraceID().String(), "spanId": active.SpanID().String()}
		}
		if m, found := transport.delivery(); found {
			entry["properties"] = m.Properties()
			entry["redeliveryCount"] = m.RedeliveryCount()
			entry["topic"] = m.Topic()
			entry["publishTimestamp"] = m.PublishTime().UnixMilli()
			entry["rawBody"] = string(m.Payload())
		}
		for k, v := range extra {
			entry[k] = v
		}
		_ = records.Encode(entry)
		made++
	}
	for _, urn := range handle {
		urn := urn
		handler := func(ctx context.Context, env babelqueue.Envelope) error {
			key := urn + "|" + env.Meta.ID
			callsPerMessage[key]++
			if callsPerMessage[key] <= failPlan[urn] {
				record(ctx, urn, env, "failed", nil)
				return fmt.Errorf("interop peer: planned failure %d of %d for %s", callsPerMessage[key], failPlan[urn], urn)
			}
			var extra map[string]any
			if to, found := forwards[urn]; found {
				id, err := app.Publish(ctx, to[1], env.Data, babelqueue.WithQueue(to[0]), babelqueue.WithTraceID(env.TraceID))
				if err != nil {
					return err
				}
				extra = map[string]any{"forwarded": map[string]any{"topic": to[0], "urn": to[1], "id": id}}
			}
			record(ctx, urn, env, "ok", extra)
			ok++
			return nil
		}
		if traced != nil {
			handler = bqotel.WrapHandler(traced.tracer, handler)
		}
		app.Handle(urn, handler)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	finished := func() bool { return (*count > 0 && ok >= *count) || (*calls > 0 && made >= *calls) }

	// The first Drain subscribes (the transport subscribes lazily, at the Latest position), so nothing
	// published after "ready" is missed.
	if _, err := app.Drain(ctx, *topic, 1); err != nil && !errors.Is(err, context.Canceled) {
		fail("consume: %v", err)
	}
	emit(map[string]any{"event": "ready", "topic": *topic, "subscription": *subscription, "sdkVersion": sdkVersion()})
	deadline := time.Now().Add(time.Duration(*timeout * float64(time.Second)))
	for !finished() && ctx.Err() == nil && time.Now().Before(deadline) {
		if _, err := app.Drain(ctx, *topic, 1); err != nil && !errors.Is(err, context.Canceled) {
			fail("consume: %v", err)
		}
	}
	done := finished()
	if traced != nil {
		traced.emit()
	}
	event := "timeout"
	if done {
		event = "done"
	}
	emit(map[string]any{"event": event, "handled": ok, "calls": made})
	if !done {
		os.Exit(3)
	}
}

// sdkVersion is what the peer reports as the SDK version in every record.
func sdkVersion() string { return sdkRelease }

func main() {
	if len(os.Args) < 2 {
		fail("usage: peer produce|consume|versions [flags]")
	}
	switch os.Args[1] {
	case "produce":
		produce(os.Args[2:])
	case "consume":
		consume(os.Args[2:])
	case "versions":
		emit(map[string]any{"event": "versions", "babelqueue-go": sdkRelease})
	default:
		fail("unknown mode %q (produce, consume or versions)", os.Args[1])
	}
}
