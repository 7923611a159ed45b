/** Dispatches `taskorch <command> ...` to its command; help and version need no command. */
import { CliError } from './errors.js';
import { HELP, USAGE } from './help.js';
import { err, out } from './output.js';
import { cmdAgents } from './agents-commands.js';
import { cmdApprove } from './approve-commands.js';
import { cmdEvents, cmdTimeline } from './events-commands.js';
import { cmdReview } from './review-commands.js';
import { cmdSchedules } from './schedules-commands.js';
import { cmdSessions } from './sessions-commands.js';
import { cmdStart } from './start.js';
import { cmdSubmit } from './submit.js';
import { cmdCancel, cmdList, cmdStatus } from './task-commands.js';
import { version } from './version.js';

const COMMANDS: Record<string, (args: string[]) => Promise<number | 'running'>> = {
  start: cmdStart,
  submit: cmdSubmit,
  status: cmdStatus,
  list: cmdList,
  cancel: cmdCancel,
  review: cmdReview,
  approve: cmdApprove,
  agents: cmdAgents,
  sessions: cmdSessions,
  schedules: cmdSchedules,
  events: cmdEvents,
  timeline: cmdTimeline,
};

/** The exit code of a command, or 'running' when it started the service (which exits on its own). */
export async function run(argv: string[]): Promise<number | 'running'> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    if (command === 'help' && rest[0] && HELP[rest[0]]) out(HELP[rest[0]]);
    else (command === undefined ? err : out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version' || command === 'version') return (out(`taskorch ${version()}\n`), 0);
  const fn = COMMANDS[command];
  if (!fn) throw new CliError(`unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(', ')} (taskorch --help)`, 2);
  return fn(rest);
}
