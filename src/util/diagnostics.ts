// A named node:diagnostics_channel carrying one kind of message, for tests and benchmarks to observe a stage without a
// hook in its options: nothing is built or published while nobody listens.
import diagnostics_channel from 'node:diagnostics_channel';

export interface Diagnostics<T> {
  /** Whether anybody observes (build the message only then). */
  readonly listening: boolean;
  publish(message: T): void;
  /** Calls `fn` with every message any part of this process publishes, until the returned function is called. */
  observe(fn: (message: T) => void): () => void;
}

export function diagnostics<T>(name: string): Diagnostics<T> {
  const ch = diagnostics_channel.channel(name);
  return {
    get listening() {
      return ch.hasSubscribers;
    },
    publish: (message) => ch.publish(message),
    observe(fn) {
      const h = (m: unknown) => fn(m as T);
      ch.subscribe(h);
      return () => void ch.unsubscribe(h);
    },
  };
}
