// Errors meant for the user: printed as one line on stderr without a stack, exit code 1.
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'UserError';
  }
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
