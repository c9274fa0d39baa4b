"""Benchmark peer: drains N BabelQueue messages from a topic with the Python SDK's own Pulsar consumer and a
no-op handler, then prints one JSON line: {"handled", "seconds", "cpuSeconds"} (timed from the first message)."""
from __future__ import annotations

import json
import sys
import time

import pulsar
from babelqueue import BabelQueue
from babelqueue.pulsar_transport import PulsarTransport


def main() -> int:
    service_url, topic, urn, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = pulsar.Client(service_url, logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    transport = PulsarTransport(
        client=client,
        subscription="bench",
        initial_position=pulsar.InitialPosition.Earliest,
        receive_timeout_millis=200,
    )
    app = BabelQueue(transport=transport, queue=topic)
    state = {"handled": 0, "first": None}

    def handle(data, meta, envelope):  # noqa: ARG001
        if state["first"] is None:
            state["first"] = (time.perf_counter(), time.process_time())
        state["handled"] += 1

    app.register(urn, handle)
    deadline = time.monotonic() + 300
    while state["handled"] < count and time.monotonic() < deadline:
        app.consume(topic, max_messages=count - state["handled"], timeout=1.0, handle_signals=False)
    wall, cpu = time.perf_counter(), time.process_time()
    first_wall, first_cpu = state["first"] or (wall, cpu)
    print(json.dumps({"handled": state["handled"], "seconds": wall - first_wall, "cpuSeconds": cpu - first_cpu}))
    transport.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
