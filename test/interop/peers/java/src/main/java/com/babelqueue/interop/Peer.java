package com.babelqueue.interop;

import com.babelqueue.Envelope;
import com.babelqueue.EnvelopeCodec;
import com.babelqueue.pulsar.PulsarConsumer;
import com.babelqueue.pulsar.PulsarPublisher;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * The Java interop peer: a small program of ours on the public API of the Java BabelQueue SDK
 * (PulsarPublisher, PulsarConsumer and EnvelopeCodec of com.babelqueue:babelqueue-pulsar / -core 1.0.0,
 * over org.apache.pulsar:pulsar-client). The Jest interop suite drives it with the same CLI as the
 * Python and Go peers:
 *
 * <pre>
 *   peer produce --topic T [--input -]     JSON list of {urn, data, traceId?, delayMs?} → one JSON line per message
 *   peer consume --topic T --subscription S --out FILE --handle URN [--count N|--calls N] [--fail URN=N]
 *                [--forward URN=TOPIC=URN2] [--timeout SECONDS]
 * </pre>
 *
 * stdout carries only JSON lines; the Pulsar client's logging (slf4j without a provider) goes to stderr.
 */
public final class Peer {

    private static final PrintStream STDOUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private Peer() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length < 1) fail("usage: peer produce|consume|versions [flags]");
        Args args = Args.parse(argv);
        switch (argv[0]) {
            case "produce" -> produce(args);
            case "consume" -> System.exit(consume(args));
            case "versions" -> emit(Map.of("event", "versions", "versions", versions()));
            default -> fail("unknown mode \"" + argv[0] + "\" (produce, consume or versions)");
        }
    }

    // ---------------------------------------------------------------------------------------- produce

    private static void produce(Args args) throws Exception {
        String topic = args.required("topic");
        List<Map<String, Object>> messages = readMessages(args.one("input", "-"));
        try (PulsarClient client = newClient(args);
                Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
            PulsarPublisher publisher = PulsarPublisher.create(producer);
            for (Map<String, Object> message : messages) {
                if (message.get("routeUrn") != null) {
                    fail("the Java SDK has no API to publish with a bq-job other than the body job");
                }
                String urn = (String) message.get("urn");
                String traceId = (String) message.get("traceId");
                long delayMs = message.get("delayMs") instanceof Number n ? n.longValue() : 0;
                @SuppressWarnings("unchecked")
                Map<String, Object> data = (Map<String, Object>) message.get("data");
                long sentAt = System.currentTimeMillis();
                String id = publisher.publish(urn, data, traceId, delayMs > 0 ? Duration.ofMillis(delayMs) : null);
                Map<String, Object> event = new LinkedHashMap<>();
                event.put("event", "produced");
                event.put("id", id);
                event.put("urn", urn);
                event.put("traceId", traceId);
                event.put("delayMs", delayMs);
                event.put("sentAt", sentAt);
                event.put("how", delayMs > 0 ? "PulsarPublisher.publish(delay)" : "PulsarPublisher.publish");
                emit(event);
            }
        }
    }

    /**
     * Reads the input list with the SDK's own JSON parser (reached through EnvelopeCodec.decode, the only
     * public way to it): the data then holds exactly the Java values an application decoding JSON with the
     * SDK would hand PulsarPublisher (Long, BigInteger beyond 2^63, Double for any fraction or exponent).
     */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> readMessages(String input) throws IOException {
        String raw;
        if (input.equals("-")) {
            raw = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        } else {
            raw = java.nio.file.Files.readString(java.nio.file.Path.of(input), StandardCharsets.UTF_8);
        }
        Map<String, Object> wrapper = EnvelopeCodec.decode("{\"data\":{\"messages\":" + raw + "}}").data();
        if (wrapper == null || !(wrapper.get("messages") instanceof List<?> list)) {
            fail("input is not a JSON list of messages");
            return List.of();
        }
        return (List<Map<String, Object>>) list;
    }

    // ---------------------------------------------------------------------------------------- consume

    private static int consume(Args args) throws Exception {
        String topic = args.required("topic");
        String subscription = args.one("subscription", "babelqueue");
        String out = args.required("out");
        int count = Integer.parseInt(args.one("count", "0"));
        int calls = Integer.parseInt(args.one("calls", "0"));
        double timeoutSeconds = Double.parseDouble(args.one("timeout", "30"));
        List<String> handle = args.all("handle");
        if (handle.isEmpty() || (count <= 0 && calls <= 0)) {
            fail("consume needs --topic, --out, --handle and --count or --calls");
        }
        if (args.has("dead-letter")) {
            fail("the Java SDK has no dead-lettering: a failed message is negatively acknowledged and redelivered");
        }
        // --max-attempts has no counterpart either: PulsarConsumer redelivers a failure without a bound.
        Map<String, Integer> failPlan = new HashMap<>();
        for (String spec : args.all("fail")) {
            String[] parts = spec.split("=", 2);
            if (parts.length != 2) fail("bad --fail " + spec);
            failPlan.put(parts[0], Integer.parseInt(parts[1]));
        }
        Map<String, String[]> forwards = new HashMap<>();
        for (String spec : args.all("forward")) {
            String[] parts = spec.split("=");
            if (parts.length != 3) fail("bad --forward " + spec);
            forwards.put(parts[0], new String[] {parts[1], parts[2]});
        }

        PrintStream records = new PrintStream(new FileOutputStream(out, true), true, StandardCharsets.UTF_8);
        PulsarClient client = newClient(args);
        // Shared: Pulsar honours deliverAfter only there. A short negative-ack delay (the client's default is
        // a minute) so a planned failure comes back within the test's time.
        Consumer<byte[]> consumer = client.newConsumer()
            .topic(topic)
            .subscriptionName(subscription)
            .subscriptionType(SubscriptionType.Shared)
            .negativeAckRedeliveryDelay(200, TimeUnit.MILLISECONDS)
            .subscribe();
        Map<String, PulsarPublisher> onward = new HashMap<>();
        List<Producer<byte[]>> producers = new ArrayList<>();

        // The SDK redelivers failures forever; whatever ends this process (count reached, timeout, SIGTERM)
        // removes the subscription, so no unacknowledged message keeps cycling on the broker.
        AtomicBoolean closed = new AtomicBoolean();
        AtomicBoolean stopping = new AtomicBoolean();
        Runnable close = () -> {
            if (!closed.compareAndSet(false, true)) return;
            try {
                consumer.unsubscribe();
            } catch (PulsarClientException error) {
                System.err.println("peer: unsubscribe: " + error);
            }
            for (Producer<byte[]> producer : producers) producer.closeAsync();
            try {
                client.close();
            } catch (PulsarClientException error) {
                System.err.println("peer: close: " + error);
            }
        };
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            try {
                main.join(3000);
            } catch (InterruptedException ignored) {
                // closing anyway
            }
            close.run();
        }));

        Map<String, Integer> callsPerMessage = new HashMap<>();
        int[] ok = {0};
        int[] made = {0};
        PulsarConsumer.Builder builder = PulsarConsumer.builder(consumer)
            .receiveTimeout(200)
            .onError((error, envelope, message) -> System.err.println("peer: onError: " + error));
        for (String urn : handle) {
            builder.handler(urn, (envelope, message) -> {
                String key = urn + "|" + (envelope.meta() == null ? "" : envelope.meta().id());
                int call = callsPerMessage.merge(key, 1, Integer::sum);
                int failures = failPlan.getOrDefault(urn, 0);
                if (call <= failures) {
                    records.println(record(urn, envelope, message, "failed", null));
                    made[0]++;
                    throw new IllegalStateException(
                        "interop peer: planned failure " + call + " of " + failures + " for " + urn);
                }
                Map<String, Object> forwarded = null;
                String[] to = forwards.get(urn);
                if (to != null) {
                    PulsarPublisher publisher = onward.get(to[0]);
                    if (publisher == null) {
                        Producer<byte[]> producer = client.newProducer().topic(to[0]).create();
                        producers.add(producer);
                        publisher = PulsarPublisher.create(producer);
                        onward.put(to[0], publisher);
                    }
                    String id = publisher.publish(to[1], envelope.data(), envelope.traceId());
                    forwarded = new LinkedHashMap<>();
                    forwarded.put("topic", to[0]);
                    forwarded.put("urn", to[1]);
                    forwarded.put("id", id);
                }
                records.println(record(urn, envelope, message, "ok", forwarded));
                made[0]++;
                ok[0]++;
            });
        }
        PulsarConsumer worker = builder.build();

        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("event", "ready");
        ready.put("topic", topic);
        ready.put("subscription", subscription);
        ready.put("sdkVersion", sdkVersion());
        emit(ready);

        long deadline = System.currentTimeMillis() + (long) (timeoutSeconds * 1000);
        boolean done = false;
        while (!stopping.get() && System.currentTimeMillis() < deadline) {
            done = (count > 0 && ok[0] >= count) || (calls > 0 && made[0] >= calls);
            if (done) break;
            try {
                worker.poll();
            } catch (PulsarClientException error) {
                if (stopping.get()) break;
                System.err.println("peer: receive: " + error);
            }
        }
        Map<String, Object> end = new LinkedHashMap<>();
        end.put("event", done ? "done" : stopping.get() ? "stopped" : "timeout");
        end.put("handled", ok[0]);
        end.put("calls", made[0]);
        emit(end);
        close.run();
        records.close();
        return done ? 0 : 3;
    }

    /** One handler call, as the SDK handed it over: the decoded envelope and the raw Pulsar message. */
    private static String record(
            String urn, Envelope envelope, Message<byte[]> message, String outcome, Map<String, Object> forwarded) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("sdk", "java");
        entry.put("sdkVersion", sdkVersion());
        entry.put("handler", urn);
        entry.put("outcome", outcome);
        // The SDK's own re-encoding of what it decoded (attempts already reconciled by PulsarConsumer).
        entry.put("envelope", new JsonOut.Raw(EnvelopeCodec.encode(envelope)));
        entry.put("attempts", envelope.attempts());
        entry.put("dataTypes", typeMap(envelope.data()));
        entry.put("accepted", EnvelopeCodec.accepts(envelope));
        entry.put("routeUrn", EnvelopeCodec.urn(envelope));
        entry.put("properties", new TreeMap<>(message.getProperties()));
        entry.put("redeliveryCount", message.getRedeliveryCount());
        entry.put("topic", message.getTopicName());
        entry.put("publishTimestamp", message.getPublishTime());
        entry.put("rawBody", new String(message.getValue(), StandardCharsets.UTF_8));
        entry.put("receivedAt", System.currentTimeMillis());
        if (forwarded != null) entry.put("forwarded", forwarded);
        return JsonOut.write(entry);
    }

    /** The Java class the SDK decoded each data value into (maps and lists keep their shape). */
    private static Object typeMap(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((key, item) -> out.put(String.valueOf(key), typeMap(item)));
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            for (Object item : list) out.add(typeMap(item));
            return out;
        }
        return value == null ? "null" : value.getClass().getSimpleName();
    }

    // ---------------------------------------------------------------------------------------- helpers

    private static PulsarClient newClient(Args args) throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(args.one("service-url", "pulsar://127.0.0.1:6650")).build();
    }

    private static void emit(Map<String, Object> event) {
        STDOUT.println(JsonOut.write(event));
    }

    private static void fail(String message) {
        System.err.println("peer: " + message);
        System.exit(2);
    }

    /** Versions from the Maven metadata inside the jars on the classpath. */
    static Map<String, String> versions() {
        Map<String, String> out = new LinkedHashMap<>();
        for (String artifact : List.of("com.babelqueue/babelqueue-core", "com.babelqueue/babelqueue-pulsar")) {
            out.put(artifact.replace('/', ':'), pomVersion(artifact));
        }
        // The shaded pulsar-client jar has no Maven metadata of its own; it carries PulsarVersion instead.
        out.put("org.apache.pulsar:pulsar-client", org.apache.pulsar.PulsarVersion.getVersion());
        out.put("java", System.getProperty("java.version"));
        return out;
    }

    private static String sdkVersion() {
        return "babelqueue-pulsar " + pomVersion("com.babelqueue/babelqueue-pulsar");
    }

    private static String pomVersion(String artifact) {
        try (InputStream in = Peer.class.getResourceAsStream("/META-INF/maven/" + artifact + "/pom.properties")) {
            if (in == null) return "unknown";
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "unknown");
        } catch (IOException error) {
            return "unknown";
        }
    }

    /** --name value pairs (repeatable) and bare --flags. */
    private record Args(Map<String, List<String>> values) {
        static Args parse(String[] argv) {
            Map<String, List<String>> values = new HashMap<>();
            for (int i = 1; i < argv.length; i++) {
                if (!argv[i].startsWith("--")) fail("unexpected argument " + argv[i]);
                String name = argv[i].substring(2);
                boolean flag = i + 1 >= argv.length || argv[i + 1].startsWith("--");
                values.computeIfAbsent(name, k -> new ArrayList<>()).add(flag ? "" : argv[++i]);
            }
            return new Args(values);
        }

        boolean has(String name) {
            return values.containsKey(name);
        }

        String one(String name, String fallback) {
            List<String> list = values.get(name);
            return list == null ? fallback : list.get(list.size() - 1);
        }

        String required(String name) {
            String value = one(name, null);
            if (value == null) fail("--" + name + " is required");
            return value;
        }

        List<String> all(String name) {
            return values.getOrDefault(name, List.of());
        }
    }
}
