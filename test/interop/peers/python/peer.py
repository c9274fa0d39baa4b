"""Interop peer: a small program of ours on the public API of the Python BabelQueue SDK.

It talks to the broker through the SDK's Pulsar transport (``babelqueue.pulsar_transport``, over the
official ``pulsar-client`` wheel). The one exception is a delayed publish, which the SDK does not
offer: the SDK's envelope and property projection go out through the transport's own pulsar-client
producer with ``deliver_after`` (two private helpers of the pinned SDK version, ``_projection`` and
``_producer``). The Jest interop suite drives it:

  produce  read a JSON list of {urn, data, traceId?, delayMs?, routeUrn?} (file or "-" for stdin),
           publish each one and print one JSON line per message: {"event": "produced", "id": meta.id, ...}
  consume  subscribe to a topic, let the SDK worker (BabelQueue.consume) route each message to
           a handler per --handle URN and write one JSON line per handler call to --out: the
           envelope as the SDK decoded it, what it reports as attempts, the message properties, ...

With --gdpr-key HEX --gdpr-schema JSON, both modes use the SDK's GDPR field encryption
(``babelqueue.gdpr``): produce protects the marked fields before publishing, consume unprotects a
copy of them in the handler and records it as ``clearData``. The SDK ships no cipher (bring your
own); the peer's is AES-GCM from the ``cryptography`` package, written base64(iv | ciphertext | tag).

With --otel, both modes trace with the SDK's own OpenTelemetry support (``babelqueue.otel``:
``publish`` for produce, ``wrap_handler`` around every handler for consume) into an in-memory
exporter of the OpenTelemetry SDK, and print the finished spans as one JSON line before exiting:
{"event": "spans", "spans": [{name, kind, traceId, spanId, parentSpanId, ...}]}.

stdout carries only JSON lines; the SDK's and the Pulsar client's logs go to stderr.
"""

from __future__ import annotations

import argparse
import base64
import copy
import datetime
import json
import logging
import os
import signal
import sys
import time
from typing import Any, Dict, List, Optional

import pulsar
from babelqueue import BabelQueue, EnvelopeCodec, __version__ as SDK_VERSION
from babelqueue.pulsar_transport import PulsarTransport


def now_ms() -> int:
    return int(time.time() * 1000)


def emit(event: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class RecordingTransport(PulsarTransport):
    """The SDK transport, unchanged, remembering the delivery being dispatched so the handler can
    record its native properties (the SDK's handler signature only carries data/meta/envelope)."""

    current: Any = None

    def pop(self, queue, timeout=1.0):  # type: ignore[override]
        received = super().pop(queue, timeout)
        self.current = received
        return received


def type_map(value: Any) -> Any:
    """The Python type the SDK decoded each data value into (a dict/list keeps its shape)."""
    if isinstance(value, dict):
        return {key: type_map(item) for key, item in value.items()}
    if isinstance(value, list):
        return [type_map(item) for item in value]
    return type(value).__name__


class Tracing:
    """A tracer of the OpenTelemetry SDK whose spans land in an in-memory exporter (imported only
    with --otel, so the other scenarios run without OpenTelemetry)."""

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("babelqueue-interop-peer")

    def spans(self) -> List[Dict[str, Any]]:
        out = []
        for span in self.exporter.get_finished_spans():
            ctx = span.get_span_context()
            parent = span.parent
            out.append({
                "name": span.name,
                "kind": span.kind.name,
                "traceId": format(ctx.trace_id, "032x"),
                "spanId": format(ctx.span_id, "016x"),
                "parentSpanId": format(parent.span_id, "016x") if parent is not None else None,
                "parentRemote": parent.is_remote if parent is not None else None,
                "attributes": dict(span.attributes or {}),
                "status": span.status.status_code.name,
            })
        return out

    def emit(self) -> None:
        emit({"event": "spans", "spans": self.spans()})


def active_span() -> Dict[str, str]:
    """The span active in the handler (the wrapper's CONSUMER span under --otel)."""
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    return {"traceId": format(ctx.trace_id, "032x"), "spanId": format(ctx.span_id, "016x")}


class AesGcmFieldCipher:
    """A babelqueue.gdpr Cipher: AES-GCM (16/24/32-byte key), random 12-byte IV, base64(iv | ct | tag)."""

    def __init__(self, key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead = AESGCM(key)

    def encrypt(self, plaintext: bytes) -> str:
        iv = os.urandom(12)
        return base64.b64encode(iv + self._aead.encrypt(iv, plaintext, None)).decode("ascii")

    def decrypt(self, ciphertext: str) -> bytes:
        raw = base64.b64decode(ciphertext, validate=True)
        return self._aead.decrypt(raw[:12], raw[12:], None)


def gdpr_of(args: argparse.Namespace) -> Optional[Any]:
    """(schema, cipher) when --gdpr-key and --gdpr-schema were given, else None."""
    if not args.gdpr_key:
        return None
    return json.loads(args.gdpr_schema), AesGcmFieldCipher(bytes.fromhex(args.gdpr_key))


def make_client(service_url: str) -> Any:
    # The C++ client's own console logger (warnings and up). A Python logger here would be called
    # from the client's threads, which can abort the interpreter while it shuts down.
    return pulsar.Client(service_url, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn))


# -- produce ------------------------------------------------------------------------------------


def produce(args: argparse.Namespace) -> int:
    raw = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    messages: List[Dict[str, Any]] = json.loads(raw)
    client = make_client(args.service_url)
    transport = PulsarTransport(client=client)
    app = BabelQueue(transport=transport, queue=args.topic)
    tracing = Tracing() if args.otel else None
    gdpr = gdpr_of(args)
    try:
        for item in messages:
            urn, data = item["urn"], item.get("data", {})
            if gdpr is not None:
                from babelqueue.gdpr import protect

                protect(data, gdpr[0], gdpr[1])
            trace_id: Optional[str] = item.get("traceId")
            delay_ms = int(item.get("delayMs") or 0)
            route_urn: str = item.get("routeUrn") or ""
            copies = int(item.get("copies") or 1)
            sent_at = now_ms()
            if copies > 1:
                # One envelope published `copies` times with the SDK's transport, as a producer that retries a
                # publish it could not confirm does: every copy has the same meta.id.
                envelope = EnvelopeCodec.make(urn, data, queue=args.topic, trace_id=trace_id)
                body = EnvelopeCodec.encode(envelope)
                for _ in range(copies):
                    transport.publish(args.topic, body)
                message_id, trace = envelope["meta"]["id"], envelope["trace_id"]
                how = "PulsarTransport.publish x%d" % copies
            elif delay_ms > 0:
                # The SDK has no delayed publish for Pulsar (BabelQueue.publish and
                # PulsarTransport.publish take no delay). The body and the bq-* properties are the
                # SDK's own (EnvelopeCodec + the transport's projection); the delay is the official
                # pulsar-client's native deliver_after, with the cross-SDK bq-delay mirror.
                envelope = EnvelopeCodec.make(urn, data, queue=args.topic, trace_id=trace_id)
                body = EnvelopeCodec.encode(envelope)
                properties = dict(PulsarTransport._projection(body))
                properties["bq-delay"] = str(delay_ms)
                transport._producer(args.topic).send(
                    body.encode("utf-8"),
                    properties=properties,
                    deliver_after=datetime.timedelta(milliseconds=delay_ms),
                )
                message_id, trace = envelope["meta"]["id"], envelope["trace_id"]
                how = "codec+pulsar-client deliver_after"
            elif tracing is not None:
                # The SDK's PRODUCER span; it writes that span's trace id into trace_id.
                from babelqueue import otel

                message_id = otel.publish(tracing.tracer, app, urn, data, queue=args.topic)
                span = tracing.exporter.get_finished_spans()[-1]
                trace = otel.uuid_of(span.get_span_context().trace_id)
                how = "otel.publish"
            elif route_urn:
                # PulsarTransport.publish_routed (the RoutedPublisher capability): bq-job pinned to
                # route_urn while the body keeps its own job.
                envelope = EnvelopeCodec.make(urn, data, queue=args.topic, trace_id=trace_id)
                transport.publish_routed(args.topic, EnvelopeCodec.encode(envelope), route_urn)
                message_id, trace = envelope["meta"]["id"], envelope["trace_id"]
                how = "PulsarTransport.publish_routed"
            else:
                message_id = app.publish(urn, data, queue=args.topic, trace_id=trace_id)
                trace = trace_id
                how = "BabelQueue.publish"
            emit({"event": "produced", "id": message_id, "urn": urn, "traceId": trace,
                  "delayMs": delay_ms, "sentAt": sent_at, "how": how})
        if tracing is not None:
            tracing.emit()
    finally:
        transport.close()
    return 0


# -- consume ------------------------------------------------------------------------------------


def parse_pairs(values: List[str], sep: str, what: str) -> List[List[str]]:
    out = []
    for value in values or []:
        parts = value.split(sep)
        if len(parts) < 2 or any(p == "" for p in parts):
            raise SystemExit(f"bad {what}: {value!r}")
        out.append(parts)
    return out


def consume(args: argparse.Namespace) -> int:
    fail_plan = {urn: int(times) for urn, times in parse_pairs(args.fail, "=", "--fail URN=TIMES")}
    forwards = {p[0]: (p[1], p[2]) for p in parse_pairs(args.forward, "=", "--forward URN=TOPIC=URN")}
    client = make_client(args.service_url)
    initial = pulsar.InitialPosition.Earliest if args.initial == "earliest" else pulsar.InitialPosition.Latest
    transport = RecordingTransport(
        client=client,
        subscription=args.subscription,
        initial_position=initial,
        receive_timeout_millis=200,
    )
    app = BabelQueue(
        transport=transport,
        queue=args.topic,
        max_attempts=args.max_attempts,
        dead_letter=args.dead_letter,
    )
    tracing = Tracing() if args.otel else None
    gdpr = gdpr_of(args)
    out = open(args.out, "a", encoding="utf-8")
    calls: Dict[str, int] = {}
    state = {"ok": 0, "calls": 0}

    def record(handler_urn: str, envelope: Dict[str, Any], outcome: str, extra: Optional[Dict[str, Any]] = None) -> None:
        received = transport.current
        message = received.handle if received is not None else None
        entry = {
            "sdk": "python",
            "sdkVersion": SDK_VERSION,
            "handler": handler_urn,
            "outcome": outcome,
            "envelope": envelope,
            "attempts": envelope.get("attempts"),
            "dataTypes": type_map(envelope.get("data")),
            "accepted": EnvelopeCodec.accepts(envelope),
            "routeUrn": received.route_urn if received is not None else None,
            "properties": dict(message.properties()) if message is not None else {},
            "redeliveryCount": message.redelivery_count() if message is not None else None,
            "topic": message.topic_name() if message is not None else None,
            "publishTimestamp": message.publish_timestamp() if message is not None else None,
            "rawBody": message.data().decode("utf-8", "replace") if message is not None else None,
            "receivedAt": now_ms(),
        }
        if tracing is not None:
            entry["activeSpan"] = active_span()
        if extra:
            entry.update(extra)
        state["calls"] += 1
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        out.flush()

    def handler_for(urn: str):
        def handle(data: Dict[str, Any], meta: Dict[str, Any], envelope: Dict[str, Any]) -> None:
            key = f"{urn}|{meta.get('id')}"
            calls[key] = calls.get(key, 0) + 1
            if calls[key] <= fail_plan.get(urn, 0):
                record(urn, envelope, "failed")
                raise RuntimeError(f"interop peer: planned failure {calls[key]} of {fail_plan[urn]} for {urn}")
            extra = None
            if gdpr is not None:
                from babelqueue.gdpr import unprotect

                clear = copy.deepcopy(data)
                unprotect(clear, gdpr[0], gdpr[1])
                extra = {"clearData": clear}
            if urn in forwards:
                topic, next_urn = forwards[urn]
                next_id = app.publish(next_urn, data, queue=topic, trace_id=envelope.get("trace_id"))
                extra = {**(extra or {}), "forwarded": {"topic": topic, "urn": next_urn, "id": next_id}}
            record(urn, envelope, "ok", extra)
            state["ok"] += 1

        return handle

    for urn in args.handle:
        handler = handler_for(urn)
        if tracing is not None:
            from babelqueue import otel

            handler = otel.wrap_handler(tracing.tracer, handler)
        app.register(urn, handler)

    stopping = {"flag": False}

    def on_term(signum, frame):  # noqa: ARG001
        stopping["flag"] = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    # The first consume call subscribes (and handles a message if one is already there), so
    # nothing published after "ready" is missed.
    app.consume(args.topic, max_messages=1, timeout=0.05, handle_signals=False)
    emit({"event": "ready", "topic": args.topic, "subscription": args.subscription, "sdkVersion": SDK_VERSION})
    def finished() -> bool:
        return (args.count > 0 and state["ok"] >= args.count) or (args.calls > 0 and state["calls"] >= args.calls)

    deadline = time.monotonic() + args.timeout
    try:
        while not finished() and not stopping["flag"] and time.monotonic() < deadline:
            app.consume(args.topic, max_messages=1, timeout=0.2, handle_signals=False)
    finally:
        out.close()
        transport.close()
    done = finished()
    if tracing is not None:
        tracing.emit()
    emit({"event": "done" if done else "timeout", "handled": state["ok"], "calls": state["calls"]})
    return 0 if done else 3


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="peer.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)

    p = sub.add_parser("produce")
    p.add_argument("--service-url", default="pulsar://127.0.0.1:6650")
    p.add_argument("--topic", required=True)
    p.add_argument("--input", default="-")
    p.add_argument("--otel", action="store_true", help="publish with babelqueue.otel.publish, print the spans")
    p.add_argument("--gdpr-key", default="", help="hex AES key: protect the fields --gdpr-schema marks")
    p.add_argument("--gdpr-schema", default="{}", help="JSON Schema with x-gdpr-sensitive marks")

    c = sub.add_parser("consume")
    c.add_argument("--service-url", default="pulsar://127.0.0.1:6650")
    c.add_argument("--topic", required=True)
    c.add_argument("--subscription", default="babelqueue")
    c.add_argument("--out", required=True)
    c.add_argument("--count", type=int, default=0, help="stop after this many successful handler calls")
    c.add_argument("--calls", type=int, default=0, help="stop after this many handler calls, failed ones included")
    c.add_argument("--timeout", type=float, default=30.0, help="seconds")
    c.add_argument("--handle", action="append", required=True, help="register a handler for this URN")
    c.add_argument("--fail", action="append", default=[], help="URN=N: fail the first N calls per message")
    c.add_argument("--forward", action="append", default=[], help="URN=TOPIC=URN2: publish onward, same trace")
    c.add_argument("--max-attempts", type=int, default=3)
    c.add_argument("--dead-letter", action="store_true")
    c.add_argument("--initial", choices=["earliest", "latest"], default="earliest")
    c.add_argument("--otel", action="store_true", help="wrap handlers with babelqueue.otel.wrap_handler, print the spans")
    c.add_argument("--gdpr-key", default="", help="hex AES key: unprotect the fields --gdpr-schema marks")
    c.add_argument("--gdpr-schema", default="{}", help="JSON Schema with x-gdpr-sensitive marks")

    args = parser.parse_args(argv)
    if args.mode == "consume" and args.count <= 0 and args.calls <= 0:
        parser.error("consume needs --count or --calls")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    return produce(args) if args.mode == "produce" else consume(args)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is closed and flushed: skip interpreter finalisation, which can race the Pulsar
    # client's native threads ("terminate called without an active exception").
    os._exit(code)
