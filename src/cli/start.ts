/**
 * `taskorch start`: the service in the foreground, the same as src/main.ts. It is loaded only
 * here, so the client commands never load the service.
 */
import { parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { out } from './output.js';

export async function cmdStart(args: string[]): Promise<number | 'running'> {
  const { values, positionals } = parse('start', args, { port: { type: 'string' }, 'data-dir': { type: 'string' } });
  if (values.help) return (out(HELP.start), 0);
  if (positionals.length) throw new CliError('start takes no arguments (see taskorch start --help)', 2);
  if (values.url || values['api-key'])
    throw new CliError('--url and --api-key are for the client commands; start is configured by environment variables (see taskorch start --help)', 2);
  // The service reads its configuration from the environment (src/config/).
  if (values.port !== undefined) process.env.GATEWAY_PORT = String(positiveInt('port', values.port));
  if (values['data-dir'] !== undefined) process.env.DATA_DIR = values['data-dir'];
  await import('../main.js');
  return 'running';
}
