/** The embedded defaults: a supervised nats-server child process and PGlite on a local socket. */
export * from './nats-server.js';
export * from './pglite.js';
