// The command-line flags and environment variables for the local stack's ports and data
// directory, shared by `npm run stack` and `npm run demo`, and their validation.
import path from 'node:path';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../../platform/config/config-error.js';
import { DEFAULT_DATA_DIR } from './paths.js';

const port = (what: string) =>
  z.coerce
    .number({ error: `${what} must be a port number` })
    .int(`${what} must be a whole number`)
    .min(1, `${what} must be 1-65535`)
    .max(65535, `${what} must be 1-65535`);

const stackOptionsSchema = z.object({
  dataDir: z.string().min(1, 'the data directory must not be empty'),
  temporalPort: port('--temporal-port / STACK_TEMPORAL_PORT'),
  uiPort: port('--ui-port / STACK_UI_PORT'),
  emulatorPort: port('--emulator-port / STACK_EMULATOR_PORT'),
  postgresPort: port('--postgres-port / STACK_POSTGRES_PORT'),
  apiPort: port('--api-port / STACK_API_PORT'),
  natsPort: port('--nats-port / STACK_NATS_PORT'),
  codecPort: port('--codec-port / STACK_CODEC_PORT'),
  natsUrl: z
    .string()
    .regex(/^(nats|tls|wss?):\/\/\S+$/, 'NATS_URL must be a NATS URL such as nats://127.0.0.1:4222')
    .optional(),
  embeddedPostgres: z.boolean(),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a PostgreSQL URL such as postgres://postgres@127.0.0.1:5432/payments')
    .optional(),
});

/** Where the local stack listens and keeps its files. */
export type StackOptions = z.output<typeof stackOptionsSchema>;

/** The stack's flags, each with an environment variable and a default; shared by `stack` and `demo`. */
export function addStackOptions(command: Command): Command {
  return command
    .addOption(new Option('--temporal-port <port>', 'Temporal gRPC port').env('STACK_TEMPORAL_PORT').default('7233'))
    .addOption(new Option('--ui-port <port>', 'Temporal Web UI port').env('STACK_UI_PORT').default('8233'))
    .addOption(new Option('--emulator-port <port>', 'Stripe emulator port').env('STACK_EMULATOR_PORT').default('12111'))
    .addOption(
      new Option('--postgres-port <port>', 'port of the embedded PostgreSQL (used when DATABASE_URL is unset and none answers on 127.0.0.1:5432)')
        .env('STACK_POSTGRES_PORT')
        .default('54329'),
    )
    .addOption(
      new Option('--embedded-postgres', 'always run the embedded PostgreSQL, even when DATABASE_URL is set or a server answers on 127.0.0.1:5432')
        .env('STACK_EMBEDDED_POSTGRES')
        .default(false),
    )
    .addOption(new Option('--api-port <port>', 'port of the HTTP service (webhooks and the orders API)').env('STACK_API_PORT').default('3000'))
    .addOption(
      new Option('--nats-port <port>', 'port of the stack\'s own NATS server (used when NATS_URL is unset and none answers on 127.0.0.1:4222)')
        .env('STACK_NATS_PORT')
        .default('14222'),
    )
    .addOption(new Option('--codec-port <port>', 'port of the codec server the Web UI and the CLI decode payloads with').env('STACK_CODEC_PORT').default('8888'))
    .addOption(new Option('--data-dir <dir>', 'where the stack keeps its state and logs').env('STACK_DATA_DIR').default(DEFAULT_DATA_DIR));
}

/** Validates the parsed flags; DATABASE_URL and NATS_URL come from the environment, as for the services. */
export function parseStackOptions(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): StackOptions {
  const databaseUrl = env.DATABASE_URL?.trim();
  const natsUrl = env.NATS_URL?.trim();
  const parsed = stackOptionsSchema.safeParse({
    dataDir: typeof flags.dataDir === 'string' ? path.resolve(flags.dataDir) : flags.dataDir,
    temporalPort: flags.temporalPort,
    uiPort: flags.uiPort,
    emulatorPort: flags.emulatorPort,
    postgresPort: flags.postgresPort,
    apiPort: flags.apiPort,
    natsPort: flags.natsPort,
    codecPort: flags.codecPort,
    embeddedPostgres: flags.embeddedPostgres === true || flags.embeddedPostgres === '1' || flags.embeddedPostgres === 'true',
    natsUrl: natsUrl === '' ? undefined : natsUrl,
    databaseUrl: databaseUrl === '' ? undefined : databaseUrl,
  });
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return parsed.data;
}

/** How to move a port that is taken, for the error that names it. */
export const PORT_HINTS = {
  temporal: 'pick another with --temporal-port or STACK_TEMPORAL_PORT',
  ui: 'pick another with --ui-port or STACK_UI_PORT',
  emulator: 'pick another with --emulator-port or STACK_EMULATOR_PORT',
  api: 'pick another with --api-port or STACK_API_PORT',
  codec: 'pick another with --codec-port or STACK_CODEC_PORT',
  nats: 'pick another with --nats-port or STACK_NATS_PORT, or point NATS_URL at a running JetStream broker',
  postgres: 'pick another with --postgres-port or STACK_POSTGRES_PORT, or point DATABASE_URL at a running server',
} as const;
