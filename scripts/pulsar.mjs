#!/usr/bin/env node
// npm run pulsar:up / pulsar:down: a local Apache Pulsar standalone broker for development and tests.
// With --secured (or PULSAR_PROFILE=secured): the token-authenticated, authorizing TLS broker of the security suites.
// With --cluster (or PULSAR_PROFILE=cluster): ZooKeeper, a bookie and two brokers of the cluster fault scenarios.
import { brokerAnswers, brokerSettings, restartBroker, startBroker, stopBroker } from './lib/broker.mjs';
import { startCluster, stopCluster } from './lib/cluster.mjs';
import { startSecuredBroker, stopSecuredBroker } from './lib/secured-broker.mjs';

const command = process.argv[2];
const secured = process.argv.includes('--secured') || process.env.PULSAR_PROFILE === 'secured';
const cluster = process.argv.includes('--cluster') || process.env.PULSAR_PROFILE === 'cluster';
const settings = brokerSettings();
try {
  if (cluster && command === 'up') {
    const state = await startCluster();
    console.log(`Pulsar cluster is up: ${state.webUrl} (admin, WebSocket), ${state.serviceUrl} (binary)`);
    console.log(`data and logs: ${state.runDir}; stop it with: npm run pulsar:down -- --cluster`);
  } else if (cluster && command === 'down') {
    const stopped = await stopCluster();
    console.log(stopped ? 'Pulsar cluster stopped and its data removed' : 'no cluster is recorded');
  } else if (secured && command === 'up') {
    const state = await startSecuredBroker();
    console.log(`secured Pulsar is up: ${state.webUrlTls}, ${state.serviceUrlTls}; pid ${state.pid}`);
    console.log(
      `CA: ${state.caFile}; token files: ${state.secretsDir}; stop it with: npm run pulsar:down -- --secured`,
    );
  } else if (secured && command === 'down') {
    const stopped = await stopSecuredBroker();
    console.log(stopped ? 'secured Pulsar stopped and its data and secrets removed' : 'no secured broker is recorded');
  } else if (command === 'up') {
    if (await brokerAnswers(settings.webUrl)) {
      console.log(`a broker already answers at ${settings.webUrl}; nothing started`);
    } else {
      const state = await startBroker(settings);
      console.log(`Pulsar is up: ${state.webUrl} (admin, WebSocket), ${state.serviceUrl} (binary); pid ${state.pid}`);
      console.log(`log: ${state.logFile}; stop it with: npm run pulsar:down`);
    }
  } else if (command === 'restart') {
    // Same data and ports (PULSAR_WEB_PORT / PULSAR_BROKER_PORT pick the broker); --kill stops it as a crash would.
    const state = await restartBroker(settings, { kill: process.argv.includes('--kill') });
    console.log(`Pulsar restarted on its data: ${state.webUrl}; pid ${state.pid}`);
  } else if (command === 'down') {
    const stopped = await stopBroker(settings);
    console.log(stopped ? 'Pulsar stopped and its data removed' : 'no broker started by this script is recorded');
  } else {
    console.error('usage: node scripts/pulsar.mjs up|restart [--kill]|down [--secured|--cluster]');
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
