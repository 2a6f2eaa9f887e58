import { Command } from 'commander';

/** A command of `retryd`, as the top-level help lists it, and how to load the whole of it. */
export interface CommandEntry {
  name: string;
  /** As the top-level help shows it: the name and `[options]` when it has some. */
  term: string;
  description: string;
  load: () => Promise<Command>;
}

/**
 * Every command of `retryd`, in help order. Only the command a run names is loaded: each pulls in what its work
 * needs (fastify, the store drivers, the engine), which takes most of a second to import, and `retryd --help` or
 * `retryd tasks list` should not wait for the others. A test checks that each entry agrees with the command it loads.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'serve',
    term: 'serve [options]',
    description: 'Run the retryd service: the HTTP API and the workers in one process, or one of them (--role).',
    load: async () => (await import('./serve-command.js')).serveCommand(),
  },
  {
    name: 'demo',
    term: 'demo [options]',
    description:
      'See a retry, offline: starts retryd on a throwaway SQLite store and a target on 127.0.0.1 that answers 503 twice per ' +
      'Idempotency-Key then 200, enqueues one task, prints its attempts and the console URL of the task; serves until Ctrl-C',
    load: async () => (await import('./demo-command.js')).demoCommand(),
  },
  {
    name: 'migrate',
    term: 'migrate [options]',
    description: "Bring the store's schema to this retryd version's (as retryd serve does at start) and exit",
    load: async () => (await import('./migrate-command.js')).migrateCommand(),
  },
  {
    name: 'keys',
    term: 'keys',
    description: 'Manage API keys (create, list, revoke; hash one for RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256) and re-encrypt stored secrets under a new encryption key, directly in the store; the service need not be running',
    load: async () => (await import('./keys-command.js')).keysCommand(),
  },
  {
    name: 'tenants',
    term: 'tenants',
    description: "Manage tenants' own settings directly in the store",
    load: async () => (await import('./tenants-command.js')).tenantsCommand(),
  },
  {
    name: 'tasks',
    term: 'tasks',
    description: 'Tasks of a running service, through its HTTP API (--url, --api-key)',
    load: async () => (await import('./tasks-command.js')).tasksCommand(),
  },
  {
    name: 'dlq',
    term: 'dlq',
    description: 'Dead letters (FAILED and EXHAUSTED tasks) of a running service, through its HTTP API (--url, --api-key)',
    load: async () => (await import('./dlq-command.js')).dlqCommand(),
  },
  {
    name: 'policies',
    term: 'policies',
    description: 'Named retry policies of a running service, through its HTTP API (--url, --api-key)',
    load: async () => (await import('./policies-command.js')).policiesCommand(),
  },
  {
    name: 'targets',
    term: 'targets',
    description: 'Targets (origins) of a running service and their protection, through its HTTP API (--url, --api-key)',
    load: async () => (await import('./targets-command.js')).targetsCommand(),
  },
  {
    name: 'simulate',
    term: 'simulate',
    description: 'Simulate retry strategies on a virtual clock: seeded, no network, a few seconds. Models: contention, amplification, w7; and the sizing model, capacity.',
    load: async () => (await import('./simulate-command.js')).simulateCommand(),
  },
];

/** The command a command line runs (`retryd help <name>` too), or undefined: none, or one retryd does not have. */
export function commandOfArgs(args: readonly string[]): CommandEntry | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((entry) => entry.name === name);
}

/** A command with only what the top-level help shows of it: its name and description (its term comes from the index). */
export function commandStub(entry: CommandEntry): Command {
  return new Command(entry.name).description(entry.description);
}
