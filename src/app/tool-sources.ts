/**
 * Opens the tool sources of a process that has a tool registry: the users' sources in
 * PostgreSQL (headers under the channel credentials' key), the pool of MCP connections and
 * OpenAPI tools, and the change notices every process hears on core NATS.
 */
import { resolve } from 'node:path';
import { subjects, type Bus } from '../bus/index.js';
import { channelKeyOf } from '../channels/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { WEB_FETCH_DEFAULT_CHARS } from '../tools/index.js';
import { SourceRegistration, ToolSourceStore, ToolSources, type SourceChanges } from '../toolsources/index.js';

/** Change notices on core NATS (`svc.toolsources.changed`): every process with a tool registry hears them. */
export function natsSourceChanges(nc: Bus['nc']): SourceChanges {
  return {
    publish: (owner) => nc.publish(subjects.toolSourcesChanged, owner),
    subscribe: (on) => {
      const sub = nc.subscribe(subjects.toolSourcesChanged, {
        callback: (err, m) => {
          if (!err) on(m.string());
        },
      });
      return () => sub.unsubscribe();
    },
  };
}

export function openToolSources(cfg: Config, sql: Sql, bus: Bus, log: Logger): { sources: ToolSources; registration: SourceRegistration } {
  const store = new ToolSourceStore(sql, channelKeyOf(cfg.channels.secretKey, resolve(cfg.channels.dataDir)));
  const allowHosts = cfg.tools.httpAllowHosts ? [cfg.tools.httpAllowHosts] : [];
  const changes = natsSourceChanges(bus.nc);
  const own = log.child({ component: 'tool-sources' });
  const sources = new ToolSources({ store, settings: cfg.toolSources, allowHosts, maxResponseChars: WEB_FETCH_DEFAULT_CHARS, log: own, changes });
  return { sources, registration: new SourceRegistration({ store, sources, settings: cfg.toolSources, allowHosts, log: own }) };
}
