// A bank outage is nobody's item's fault. PostgreSQL restarted, a connection dropped (pg_terminate_backend, a
// failover, a network cut), the server refusing connections while it starts or shuts down, out of connections or
// disk: each is a failure of the bank itself, so a stage stops without marking items failed (as it does when the
// image store is down, isStoreUnavailable) and a worker waits for the bank and goes on.
//
// The PostgreSQL backend turns such errors into one BankUnavailableError naming the bank (its URL without the
// password) and the reason, with the SQLSTATE or system error code kept. Recognised by name, not instanceof (a
// dynamic import may give a module its own instance of this class, as with ImageStoreError).
import { isStoreUnavailable } from './image-store.js';

export class BankUnavailableError extends Error {
  constructor(
    /** Where the bank is: the PostgreSQL URL without its password (or the SQLite file). */
    readonly location: string,
    /** What failed, in words (the driver's message). */
    readonly reason: string,
    /** SQLSTATE (57P01…) or system error code (ECONNREFUSED…), when there is one. */
    readonly code: string | undefined,
    readonly kind: 'PostgreSQL' | 'SQLite' = 'PostgreSQL',
  ) {
    super(`the bank (${kind} at ${location}) is unavailable: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`);
    this.name = 'BankUnavailableError';
  }
}

export const isBankUnavailable = (err: unknown): err is BankUnavailableError => err instanceof Error && err.name === 'BankUnavailableError';

/** A failure of the infrastructure (the bank or the image store), not of the item being worked on: stop or wait,
 *  never mark the item failed. */
export const isInfrastructureFailure = (err: unknown): boolean => isBankUnavailable(err) || isStoreUnavailable(err);

/** SQLSTATEs of a bank that is down, going down, starting, out of resources, or that cancelled us: class 08
 *  (connection exception), 57P01-57P05 (operator intervention: admin/crash shutdown, cannot connect now, idle
 *  timeouts), 57014 (query cancelled by an operator or a timeout), 53 (insufficient resources: disk full, out of
 *  memory, too many connections), 58 (system error: I/O), 40001/40P01 (serialization failure, deadlock: the same
 *  statement succeeds when run again). */
const TRANSIENT_SQLSTATE = /^(08...|57P0[1-5]|57014|53...|58...|40001|40P01)$/;

/** System errors of the connection (the server gone, a network cut, a name that does not resolve right now). */
const TRANSIENT_SYSCALL = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EAI_AGAIN', 'ECONNABORTED', 'ENOTCONN']);

/** node-postgres's own messages for a connection that ended or cannot be used. */
const TRANSIENT_MESSAGE = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout|read ECONNRESET|socket hang up/i;

/** True when a driver error says the bank (not the statement, not the data) failed. */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_SYSCALL.has(code))) return true;
  // AggregateError (a host name with several addresses, each refused)
  const inner = (err as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.length && inner.every(isConnectionFailure)) return true;
  return TRANSIENT_MESSAGE.test(err.message);
}

/** The driver's error as a BankUnavailableError when it is an outage; otherwise the error itself. */
export function asBankError(err: unknown, location: string): unknown {
  if (isBankUnavailable(err) || !isConnectionFailure(err)) return err;
  const e = err as Error & { code?: string };
  const message = e.message || (Array.isArray((e as { errors?: Error[] }).errors) ? (e as unknown as { errors: Error[] }).errors.map((x) => x.message).join('; ') : String(err));
  const out = new BankUnavailableError(location, message, typeof e.code === 'string' ? e.code : undefined);
  (out as { cause?: unknown }).cause = err;
  return out;
}

/** A PostgreSQL error (it has a SQLSTATE and a severity) that is not an outage: a statement or a value the server
 *  refused. Its message talks of the server's internals (indexes, types); callers say in their words what failed. */
export function isDatabaseRefusal(err: unknown): err is Error & { code: string } {
  const e = err as { code?: unknown; severity?: unknown };
  return err instanceof Error && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string' && !isConnectionFailure(err);
}
