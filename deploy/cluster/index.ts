/**
 * The cluster on one command: `npm run cluster` (main.ts) and, for the drill, the benchmark
 * and the tests, startCluster (the contract is types.ts).
 */
export { ClusterRunningError, openCluster, startCluster } from './cluster.js';
export type { Cluster, ClusterOptions, Member, MemberKind } from './types.js';
