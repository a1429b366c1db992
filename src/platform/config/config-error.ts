// The error every settings loader throws for bad configuration, one line per wrong setting.
import type { z } from 'zod';

/** Bad configuration: names each setting that is wrong and how to fix it. Nothing was started. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }

  static fromZod(error: z.ZodError): ConfigError {
    return new ConfigError(
      error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)),
    );
  }
}
