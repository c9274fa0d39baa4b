// Types of cluster.mjs for the TypeScript cluster fault scenarios.
export interface ClusterBroker {
  name: string;
  brokerPort: number;
  webPort: number;
  webUrl: string;
  serviceUrl: string;
  /** `127.0.0.1:<web port>`, as the admin API names the broker. */
  id: string;
}
export interface ClusterSettings {
  zookeeperPort: number;
  bookiePort: number;
  brokers: ClusterBroker[];
  /** Both brokers, for the native client: pulsar://a,b. */
  serviceUrl: string;
  /** Both web services, for the WebSocket client: http://a,b. */
  webUrl: string;
}
export const CLUSTER_NAME: string;
export function clusterSettings(env?: Record<string, string | undefined>): ClusterSettings;
export function startCluster(settings?: ClusterSettings, owner?: string): Promise<unknown>;
export function stopCluster(settings?: ClusterSettings, owner?: string): Promise<boolean>;
export function ensureCluster(owner: string, env?: Record<string, string | undefined>): Promise<{ started: boolean }>;
export function killBroker(name: string, settings?: ClusterSettings): Promise<void>;
export function restartClusterBroker(
  name: string,
  settings?: ClusterSettings,
  options?: { kill?: boolean },
): Promise<void>;
export function topicOwner(topic: string, settings?: ClusterSettings): Promise<ClusterBroker | null>;
export function clusterAnswers(settings?: ClusterSettings): Promise<boolean>;
